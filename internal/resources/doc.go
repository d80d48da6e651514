package resources

import (
	"strings"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// DocPath is where Markdown's output is committed, from the repository root.
const DocPath = "docs/resources.md"

// Markdown is docs/resources.md: the common rules of every resource, a
// section per declared resource generated from its declaration (companies'
// from companies.Def), and a short section on the resources written by
// hand (workflows, runs). A test fails when the committed file differs.
func Markdown() string {
	routes := func(d *resource.Def) []resource.DocRoute {
		if d == companies.Def {
			return companyRoutes
		}
		var out []resource.DocRoute
		for _, r := range Routes() {
			if r.Def == d {
				out = append(out, resource.DocRoute{Method: r.Method, Path: r.Path})
			}
		}
		return out
	}
	var b strings.Builder
	b.WriteString(docIntro)
	b.WriteString(docIndex())
	b.WriteString(resource.Markdown(append([]*resource.Def{companies.Def}, All()...), routes, docNotes, nil))
	b.WriteString(docHandWritten)
	return b.String()
}

// companyRoutes are the company routes (written by hand in internal/routes).
var companyRoutes = []resource.DocRoute{
	{Method: "POST", Path: "/v1/companies"}, {Method: "GET", Path: "/v1/companies"},
	{Method: "GET", Path: "/v1/companies/{id}"}, {Method: "PUT", Path: "/v1/companies/{id}"},
	{Method: "DELETE", Path: "/v1/companies/{id}"},
}

// docIndex lists every resource with its path.
func docIndex() string {
	var b strings.Builder
	b.WriteString("## Index\n\n| Resource | Path | Function |\n|---|---|---|\n")
	b.WriteString("| [Companies](#companies) | `/v1/companies` | `" + companies.Group + "` |\n")
	b.WriteString("| [Workflows](#workflows-and-runs) | `/v1/workflows` | `workflows` |\n")
	b.WriteString("| [Workflow runs](#workflows-and-runs) | `/v1/workflow-runs` | `workflows` |\n")
	for _, d := range All() {
		b.WriteString("| [" + strings.ToUpper(d.Name[:1]) + d.Name[1:] + "](#" + d.Name + ") | `/v1/" + d.Name + "` | `" + d.Group + "` |\n")
	}
	b.WriteString("\n")
	return b.String()
}

const docIntro = `# Resources

<!-- Generated from the declarations in internal/resources; do not edit.
     Regenerate with: go test ./internal/resources -run TestDocs -update -->

Every resource of the API, its routes, fields, sortable fields and filters.
The sections after the index are generated from the declarations in
` + "`internal/resources`" + ` (companies: ` + "`internal/companies`" + `), so they say what
the service does. Workflows and runs are written by hand and described at
the end.

## Rules common to every resource

- **Credentials.** Every ` + "`/v1`" + ` request carries ` + "`x-service-client-id`" + ` and
  ` + "`x-service-api-key`" + `; without valid ones it is 401. A record of another
  organization is 404 on every verb, as if it did not exist.
- **Envelope.** A record or a list is ` + "`{\"data\": ...}`" + `; an error is
  ` + "`{\"error\": \"<message>\"}`" + `, and a 400 names the field or parameter. Create
  answers 201, delete 204 with no body.
- **Records.** Every field is present in every record: a field never set is
  its default, or ` + "`null`" + ` (` + "`[]`" + ` for arrays, ` + "`{}`" + ` for objects, ` + "`false`" + ` for
  booleans). ` + "`id`" + `, ` + "`createdAt`" + ` and ` + "`updatedAt`" + ` are set by the service;
  times are RFC 3339 in UTC with three fractional digits.
- **Create** needs the required fields. Unknown fields and read-only fields
  are 400 naming the field.
- **Partial PUT.** Only the fields sent change; objects and arrays sent are
  replaced as a whole. ` + "`null`" + ` clears an optional field (to its empty value
  above, or its default); ` + "`null`" + ` for a required field is 400. An immutable
  field cannot be sent on PUT (400). A PUT that changes nothing writes
  nothing and keeps ` + "`updatedAt`" + `.
- **References** are checked on every create and on every PUT that changes
  them: an id that is not a record of the caller's organization is 400 naming
  the field (` + "`industryId`" + `, ` + "`deals[2]`" + `, ` + "`participants[0].id`" + `). What a delete
  does to the records that name the deleted one is said per resource: refused
  with 409 naming a referencing record, or the reference stays as stored
  (dangling).
- **Paging.** Lists are newest first. ` + "`limit`" + ` (default 100, clamped to 1..1000),
  ` + "`page`" + ` (1..100), ` + "`lt`" + ` (only ids below it), ` + "`sort`" + ` (a sortable field),
  ` + "`direction`" + ` (` + "`asc`" + ` or ` + "`desc`" + `) and ` + "`cursor`" + `. A response stays under 5 MB,
  so a page may hold fewer than ` + "`limit`" + ` records; while more follow it has
  ` + "`X-Next-Cursor`" + ` (and ` + "`Link: <...>; rel=\"next\"`" + `): ask again with
  ` + "`cursor=<that value>`" + `.
- **Filters.** A list takes at most one filter (` + "`?companyId=cmp_...`" + `), an exact
  match served by an index, combined with the paging above; a filtered list
  is sorted by ` + "`id`" + ` (or ` + "`createdAt`" + `) only. Two filters, an unknown
  parameter or a repeated one are 400 naming the parameter.
- **ETag / If-Match.** Every single-record response carries ` + "`ETag: \"<version>\"`" + `;
  ` + "`PUT`" + ` and ` + "`DELETE`" + ` honour ` + "`If-Match`" + ` and answer 412 when the record
  has changed since.
- **Idempotency-Key.** A POST with ` + "`Idempotency-Key`" + ` repeated with the same
  body within 24 hours answers the first response again
  (` + "`Idempotent-Replayed: true`" + `); another body with the same key is 422.

See ` + "[`docs/decisions.md`](decisions.md)" + ` for the reasons and the exact limits.

`

// docNotes are the rules of each resource that its hooks (Check, Compute)
// or its own routes add to its declaration.
var docNotes = map[string]string{
	companies.Def.Name: "`?website=` matches by host, as upserts do: scheme, `www.`, port and path are ignored, case-insensitive. " +
		"A workflow run's company step upserts a company: matched by `externalId`, then `website`, then `canonicalName`. " +
		"See [`docs/decisions.md`](decisions.md#companies) for the reasons.",
	"tags": "`color`, when set, must be a hex color such as `#1f77b4` (400 naming `color`).",
	"deals": "`currency` must be an ISO 4217 code of three capital letters, and is required when `amount` is set " +
		"(400 naming `currency`).",
	"people":     "Each of `emails` must be an address such as `name@example.com` (400 naming `emails[i]`).",
	"activities": "`endedAt` must not be before `startedAt` (400 naming `endedAt`).",
	"lists": "Each column's `field` must be a field of the list's `resourceType` records, at most once " +
		"(400 naming `columns[i].field` and listing the fields).\n\n" +
		"Entries (the records on a list, of its `resourceType`):\n\n" +
		"| Method | Path | Answer |\n|---|---|---|\n" +
		"| `POST` | `/v1/lists/{id}/entries` | body `{\"recordId\": \"...\"}` (checked like a reference): `201` with the entry, or `200` with the existing entry when the record is on the list already |\n" +
		"| `GET` | `/v1/lists/{id}/entries` | the entries, newest first, at most 100 per page, each `{id, listId, recordId, addedAt, record}` with the record itself (`null` once it is deleted); sort by `addedAt` only |\n" +
		"| `DELETE` | `/v1/lists/{id}/entries/{recordId}` | `204`; 404 when the record is not on the list |\n\n" +
		"Deleting a list deletes its entries.",
	"frameworks": "`elements` must hold at least one element, with ids unique in the framework and a positive " +
		"total weight (400 naming `elements` or `elements[i].id`).",
	"scores": "Each `elementScores[i].elementId` must be an element of the framework, scored once (400 naming it). " +
		"The service sets `frameworkName`, each `elementName` and `finalScore` = Σ(weight × score) / Σ(weight) over " +
		"the elements scored, with the framework's weights, rounded to 4 decimals. " +
		"List a company's scores with `?company=`, a screening's with `?screeningId=`.",
}

const docHandWritten = `## Workflows and runs

These are written by hand (their behaviour is their own: triggers, runs),
under the same common rules.

| Resource | Routes | Sort | Filters |
|---|---|---|---|
| Workflows | ` + "`POST`, `GET` `/v1/workflows`; `GET`, `PUT`, `DELETE` `/v1/workflows/{id}`; `POST /v1/workflows/{id}/trigger/webhook-secret/rotate`" + ` | ` + "`id`, `createdAt`, `name`, `updatedAt`" + ` | none |
| Workflow runs | ` + "`POST`, `GET` `/v1/workflows/{id}/runs`; `GET /v1/workflow-runs`; `GET`, `PATCH` `/v1/workflow-runs/{id}`; `POST /v1/workflow-runs/{id}/retry`; `POST /webhooks/workflows/{slug}`" + ` | ` + "`id`, `createdAt`" + ` | ` + "`?workflowId=`, `?status=` (`queued`, `running`, `completed`, `failed`) on `/v1/workflow-runs`" + ` |

Workflows, their step language and runs are described in
[` + "`docs/workflows.md`" + `](workflows.md) and
[` + "`docs/decisions.md`" + `](decisions.md#workflows-and-runs); the walk-through in the
[README](../README.md) shows each of them with ` + "`curl`" + `.
`
