package resources

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/listing"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// DocPath is where Markdown's output is committed, from the repository root.
const DocPath = "docs/resources.md"

// Markdown is docs/resources.md: the common rules of every resource, a
// section per kind of record generated from its declaration (companies',
// workflows' and runs' from companies.Def, workflows.Def and runs.Def),
// each with the routes that serve its records (routes: the registry's,
// api.DocRoutes) and what its list takes (lists: recordsapi.DocList; nil says
// only its lookup filters). A test fails when the committed file differs.
func Markdown(routes func(*resource.Def) []resource.DocRoute, lists func(*resource.Def) *resource.DocList) string {
	var b strings.Builder
	b.WriteString(docIntro)
	b.WriteString(docLists())
	b.WriteString(docIndex())
	defs := append([]*resource.Def{companies.Def, workflows.Def, runs.Def}, All()...)
	b.WriteString(resource.Markdown(defs, routes, lists, docNotes, nil))
	return b.String()
}

// docIndex lists every resource with its path.
func docIndex() string {
	var b strings.Builder
	b.WriteString("## Index\n\n| Resource | Path | Function |\n|---|---|---|\n")
	b.WriteString("| [Companies](#companies) | `/v1/companies` | `" + lambdas.Companies + "` |\n")
	b.WriteString("| [Workflows](#workflows) | `/v1/workflows` | `" + lambdas.Workflows + "` |\n")
	b.WriteString("| [Workflow runs](#workflow-runs) | `/v1/workflow-runs` | `" + lambdas.Workflows + "` |\n")
	for _, d := range All() {
		b.WriteString("| [" + strings.ToUpper(d.Name[:1]) + d.Name[1:] + "](#" + d.Name + ") | `/v1/" + d.Name + "` | `" + d.Function + "` |\n")
	}
	b.WriteString("\n")
	return b.String()
}

const docIntro = `# Resources

<!-- Generated from the declarations in internal/resources; do not edit.
     Regenerate with: make generate -->

Every resource of the API, its routes, fields, sortable fields and filters.
The sections after the index are generated from the declarations in
` + "`internal/resources`" + ` (companies, workflows and runs: ` + "`internal/companies`" + `,
` + "`internal/workflows`" + `, ` + "`internal/runs`" + `), so they say what the service does.

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
- **Numbers** anywhere in a body (` + "`custom`" + ` included) must be ones every JSON
  client reads: within a 64-bit float's range, and an integer written without
  fraction or exponent within ±9007199254740991 (2^53 − 1); otherwise 400
  naming the place (` + "`custom.n`" + `). Send larger ids as strings.
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
  ` + "`page`" + ` (1..100), ` + "`lt`" + ` (only ids below it) and ` + "`cursor`" + `. A response stays under 5 MB,
  so a page may hold fewer than ` + "`limit`" + ` records; while more follow it has
  ` + "`X-Next-Cursor`" + ` (and ` + "`Link: <...>; rel=\"next\"`" + `): ask again with
  ` + "`cursor=<that value>`" + `. Filters, sort keys, fields and expansions:
  [below](#filtering-sorting-and-expanding-lists). An unknown parameter or a
  repeated one is 400 naming the parameter.
- **ETag / If-Match.** Every single-record response carries ` + "`ETag: \"<version>\"`" + `;
  a record's ` + "`PUT`" + ` and ` + "`DELETE`" + ` (` + "`/{id}`" + `) honour ` + "`If-Match`" + ` and answer 412 when
  the record has changed since (an upsert, ` + "`PUT /v1/<resource>?match=`" + `, names no
  record and takes none).
- **Idempotency-Key.** A POST with ` + "`Idempotency-Key`" + ` repeated with the same
  body within 24 hours answers the first response again
  (` + "`Idempotent-Replayed: true`" + `); another body with the same key is 422.

See ` + "[`docs/decisions.md`](decisions.md)" + ` for the reasons and the exact limits.

`

// docLists is the section on what every list takes: the syntax of its
// filters, sort keys, fields and expansions, and how it is served. Each
// resource's section lists its own fields.
func docLists() string {
	n := strconv.Itoa
	return `## Filtering, sorting and expanding lists

Every list of a resource below (` + "`GET /v1/<resource>`" + `) takes, besides the paging
parameters:

- **Filters.** ` + "`filter[<field>]=<value>`" + ` (equal) and
  ` + "`filter[<field>][<operator>]=<value>`" + `, a nested field by its path
  (` + "`filter[location.city]=Paris`" + `); every condition must hold, at most ` + n(listing.MaxFilters) + `.
  Operators: ` + "`eq`" + `; ` + "`ne`" + ` (a record without a value is not equal); ` + "`in`" + `
  and ` + "`nin`" + ` (1 to ` + n(search.MaxInValues) + ` values separated by commas, so a listed value cannot
  hold a comma); ` + "`gt`" + `, ` + "`gte`" + `, ` + "`lt`" + `, ` + "`lte`" + ` (numbers, dates and date-times);
  ` + "`contains`" + ` (strings, ignoring case and diacritics; an array of strings: holds the element);
  ` + "`startsWith`" + ` (strings, ignoring case and diacritics); ` + "`exists`" + ` (` + "`true`" + `: has a value, ` + "`false`" + `:
  has none). A value is of the field's type: an integer, a number, ` + "`true`" + ` or
  ` + "`false`" + `, a date ` + "`YYYY-MM-DD`" + `, a date-time in RFC 3339; an enum field's value
  outside its values is 400. Conditions mean what they mean in a search
  ([` + "`docs/search.md`" + `](search.md)). Each resource's section lists its fields and
  their operators. The older lookup filter (` + "`?companyId=cmp_...`" + `, one at a time)
  still works.
- **Sort.** ` + "`sort=a,-b,c`" + `: up to ` + n(listing.MaxSortKeys) + ` keys, each a field holding one value; ` + "`-`" + `
  sorts a key descending. A single key without a sign is ordered by
  ` + "`direction`" + ` (` + "`desc`" + ` unless ` + "`asc`" + `); with several keys, or a key with a sign,
  ` + "`direction`" + ` is 400. Ties are broken by id in the direction of the last key;
  a record without a value (null, absent, ` + "`\"\"`" + `) sorts as the smallest; text
  compares ignoring case and diacritics.
- **Fields.** ` + "`fields=canonicalName,website`" + ` answers only those top-level fields
  of each record, and its ` + "`id`" + `.
- **Expand.** ` + "`expand=companyId`" + ` adds to each record
  ` + "`\"expanded\": {\"companyId\": <the company as GET answers it, or null>}`" + `; an
  array of references expands to an array of the records that exist. The
  page's 5 MB budget counts the expansions (the page ends early rather than
  exceed it).
- **Plans.** Whichever way a list is served, it answers the same records;
  the way decides what they cost. The service picks, in order: the table's
  key (no filter, id order) or one index that serves the list exactly (a
  sort index for a single key, a lookup filter, an equality on a lookup
  field); else the search engine, for a searchable resource in a process
  that holds one (the local server: ` + "`make run`" + `); else the narrowest index, or
  the table, with the conditions evaluated on the records read. Such a page reads at most ` + count(store.MaxPageReads) + ` records:
  one that has read them ends there, with fewer records than ` + "`limit`" + ` (even
  none) and a cursor that goes on after the last record read. A sort no
  index serves orders the matching records in memory, reading at most
  ` + count(store.MaxPageReads) + ` records; a list with more, or a ` + "`page`" + ` reached through such
  a filter past that many records, is 400 naming the filters and sorts an
  index serves. Records a request reads and does not return count against
  its rate limits: one request more per ` + count(store.RecordsPerRequest) + ` of them
  ([` + "`docs/errors.md`" + `](errors.md#rate-limits)). The ` + "`X-Query-Plan`" + `
  response header names the plan: ` + "`key:<resource>`" + `, ` + "`index:<resource>.<field>`" + ` or
  ` + "`search:<engine>`" + `, followed by ` + "`+filter`" + ` when conditions were evaluated on the
  records read and ` + "`+sort`" + ` when the records were ordered in memory. A request
  may send ` + "`X-Query-Plan: key`" + ` (or ` + "`index`" + `, ` + "`index:<resource>.<field>`" + `, ` + "`search`" + `) to
  ask for a kind of plan: 400 when it cannot serve the list.
- **Freshness.** A list read from the table sees every write that finished
  before it. A list the search engine serves sees what a search sees: the
  embedded engine catches up before it answers; with OpenSearch a write shows
  once it is indexed, seconds later
  ([` + "`docs/search.md`" + `](search.md#visibility-and-freshness)).
- **Cursors** are bound to the list's filters, sort keys and plan. In a list
  ordered in memory or by the search engine, a cursor holds a position: a
  record created before it shifts what follows, as with ` + "`page`" + `.
- **The same list as a JSON body.** ` + "`POST /v1/<resource>/query`" + ` takes the list as
  typed JSON, for clients generated from the OpenAPI document (which cannot
  send ` + "`filter[<field>][<operator>]=`" + `) and for the MCP ` + "`list_<resource>`" + ` tools, which take
  the same members:

  ` + "```json" + `
  {"filter": {"sector": "AI", "tags": {"in": ["b2b", "saas"]}, "createdAt": {"gte": "2026-01-01"}},
   "sort": [{"field": "canonicalName", "direction": "asc"}],
   "fields": ["canonicalName", "sector"], "expand": ["sectorId"], "limit": 50, "cursor": "…"}
  ` + "```" + `

  ` + "`filter`" + ` is ` + "`{\"<field>\": <value>}`" + ` (equal) or ` + "`{\"<field>\": {\"<operator>\": <value>}}`" + ` with the
  operators above, values typed as JSON (` + "`in`" + ` and ` + "`nin`" + ` take an array, whose values may
  hold commas); ` + "`sort`" + ` is up to ` + n(listing.MaxSortKeys) + ` keys, each with its ` + "`direction`" + `; ` + "`limit`" + ` is 1 to
  1,000 (outside: 400, where GET clamps it); every member is optional (an empty
  body is the first page of the whole list). The answer is the GET list's: the
  same records, plan (` + "`X-Query-Plan`" + ` works the same), byte budget and cursors (a
  cursor of one form continues the other), but no ` + "`Link`" + ` header: send the next
  page's ` + "`cursor`" + ` in the body with the same ` + "`filter`" + ` and ` + "`sort`" + `. A query has no
  ` + "`page`" + ` or ` + "`lt`" + `: page with cursors. Errors name the member
  (` + "`filter.sector.in`" + `, ` + "`sort[0].field`" + `).

`
}

// count writes n with a thousands separator.
func count(n int) string {
	if n < 1000 {
		return strconv.Itoa(n)
	}
	return fmt.Sprintf("%d,%03d", n/1000, n%1000)
}

// docNotes are what the routes a resource serves beside its CRUD add to
// its declaration (the rules its hooks add are its Def's Rules).
var docNotes = map[string]string{
	companies.Def.Name: "`?website=` matches by host, as upserts do: scheme, `www.`, port and path are ignored, case-insensitive. " +
		"A workflow run's company step upserts a company: matched by `externalId`, then `website`, then `canonicalName`. " +
		"See [`docs/decisions.md`](decisions.md#companies) for the reasons.",
	workflows.Def.Name: "Creating a workflow answers its trigger with its `secret`, the one time it is shown besides " +
		"`POST /v1/workflows/{id}/trigger/webhook-secret/rotate` (admin keys only; `200` with the trigger and its new secret; the old one " +
		"stops working at once). Deleting a workflow deletes its trigger (its webhook stops at once) and keeps its runs. " +
		"The step language (`steps[i].type`, `with`, `.$` JSONPath values) is described in [`docs/workflows.md`](workflows.md); " +
		"see also [`docs/decisions.md`](decisions.md#workflows-and-runs).",
	runs.Def.Name: "See [`docs/workflows.md`](workflows.md) for what a run does and [`docs/decisions.md`](decisions.md#workflows-and-runs) for the reasons.",
	"lists": "An entry is `{id, listId, recordId, addedAt, record}`, with the record itself (`null` once it is deleted); entries are sorted by `addedAt` only. " +
		"Adding a record already on the list answers `200` with the existing entry. Deleting a list deletes its entries.",
}
