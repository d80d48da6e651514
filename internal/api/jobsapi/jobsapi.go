// Package jobsapi serves the bulk jobs: imports of a CSV or NDJSON file into
// the records of one resource (created, then fed their file at uploadUrl)
// and exports of a resource's records, each listed and read back (package
// jobs).
package jobsapi

import (
	"context"
	"net/http"
	"reflect"
	"strconv"

	"github.com/sourcebase/sourcebase/internal/api/companiesapi"
	"github.com/sourcebase/sourcebase/internal/api/recordsapi/batch"
	"github.com/sourcebase/sourcebase/internal/api/resourcesapi"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/service"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/bulk"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// ImportJob is an import as the API answers it.
type ImportJob struct {
	store.Versioned
	ID       string            `json:"id"`
	Resource string            `json:"resource"`
	Format   string            `json:"format"`
	Mode     string            `json:"mode"`
	Match    *string           `json:"match"`
	Mapping  map[string]string `json:"mapping"`
	DryRun   bool              `json:"dryRun"`
	// KeepIDs: created records take the ids of the file's id column.
	KeepIDs bool `json:"keepIds"`
	// Confidence is that of the enrichment candidates the import adds
	// (a company's employeeCount, totalMoneyRaised, …: source import).
	Confidence float64 `json:"confidence"`
	// Status: awaitingUpload, queued, running, completed or failed.
	Status    string `json:"status"`
	Total     int64  `json:"total"`
	Processed int64  `json:"processed"`
	Created   int64  `json:"created"`
	Updated   int64  `json:"updated"`
	Failed    int64  `json:"failed"`
	// Duplicates are the rows (among the failed) that repeat the key of an
	// earlier row of the file: a file names each record once.
	Duplicates int64 `json:"duplicates"`
	// IgnoredColumns are the file's columns the import does not read, and
	// why: fields the service sets whenever it writes a record (an
	// export's id, createdAt, updatedAt). Known once the import runs.
	IgnoredColumns []bulk.IgnoredColumn `json:"ignoredColumns"`
	// Error says why the job failed; null unless it did.
	Error *string `json:"error"`
	// UploadURL is where to PUT the file, while the import awaits it.
	UploadURL *string `json:"uploadUrl"`
	// ErrorsURL is the CSV of the failed rows (row, error, the row's
	// cells), once the import completed with failed rows.
	ErrorsURL   *string     `json:"errorsUrl"`
	CreatedAt   clock.Time  `json:"createdAt"`
	StartedAt   *clock.Time `json:"startedAt"`
	CompletedAt *clock.Time `json:"completedAt"`
}

// ExportJob is an export as the API answers it.
type ExportJob struct {
	store.Versioned
	ID       string         `json:"id"`
	Resource string         `json:"resource"`
	Format   string         `json:"format"`
	Filter   map[string]any `json:"filter"`
	Fields   []string       `json:"fields"`
	// EscapeFormulas: a CSV text cell starting with =, +, -, @, a tab or a
	// carriage return is written with a leading ' (see docs/bulk.md).
	EscapeFormulas bool `json:"escapeFormulas"`
	// Status: queued, running, completed or failed.
	Status string `json:"status"`
	// Rows is the records written, once completed.
	Rows  int64   `json:"rows"`
	Error *string `json:"error"`
	// DownloadURL is the file, once completed (valid for an hour; read the
	// export again for a fresh one).
	DownloadURL *string     `json:"downloadUrl"`
	CreatedAt   clock.Time  `json:"createdAt"`
	StartedAt   *clock.Time `json:"startedAt"`
	CompletedAt *clock.Time `json:"completedAt"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// importView is j as the API answers it, with its URLs.
func (a *API) importView(ctx context.Context, org string, j *jobs.Job, upload string) (*ImportJob, error) {
	v := &ImportJob{ID: j.ID, Resource: j.Resource, Format: string(j.Format), Mode: j.Mode, Match: optional(j.Match), Mapping: j.Mapping,
		DryRun: j.DryRun, KeepIDs: j.KeepIDs, Confidence: jobs.DefaultConfidence, Status: j.Status, Total: j.Total, Processed: j.Processed,
		Created: j.Created, Updated: j.Updated, Failed: j.Failed, Duplicates: j.Duplicates, IgnoredColumns: j.IgnoredColumns,
		Error: optional(j.Error), CreatedAt: j.CreatedAt, StartedAt: j.StartedAt, CompletedAt: j.CompletedAt}
	if j.Confidence != nil {
		v.Confidence = *j.Confidence
	}
	if v.Mapping == nil {
		v.Mapping = map[string]string{}
	}
	if v.IgnoredColumns == nil {
		v.IgnoredColumns = []bulk.IgnoredColumn{}
	}
	v.Versioned = j.Versioned
	var err error
	if upload == "" {
		upload, err = a.jobs.UploadURL(ctx, org, j)
		if err != nil {
			return nil, err
		}
	}
	v.UploadURL = optional(upload)
	errorsURL, err := a.jobs.ErrorsURL(ctx, org, j)
	v.ErrorsURL = optional(errorsURL)
	return v, err
}

// exportView is j as the API answers it, with its URL.
func (a *API) exportView(ctx context.Context, org string, j *jobs.Job) (*ExportJob, error) {
	v := &ExportJob{ID: j.ID, Resource: j.Resource, Format: string(j.Format), Filter: j.Filter, Fields: j.Fields, Status: j.Status,
		EscapeFormulas: !j.RawFormulas, Rows: j.Rows, Error: optional(j.Error), CreatedAt: j.CreatedAt, StartedAt: j.StartedAt, CompletedAt: j.CompletedAt}
	if v.Filter == nil {
		v.Filter = map[string]any{}
	}
	if v.Fields == nil {
		v.Fields = []string{}
	}
	v.Versioned = j.Versioned
	u, err := a.jobs.DownloadURL(ctx, org, j)
	v.DownloadURL = optional(u)
	return v, err
}

// API serves the feature's routes.
type API struct {
	jobs *jobs.Service
}

// New returns the API over its services.
func New(jobs *jobs.Service) *API {
	return &API{jobs: jobs}
}

// Feature is the bulk jobs, served over a process's services (the registry of
// package api collects it; apitest serves it alone).
var Feature = operation.NewFeature("jobs", Operations, Schemas, func(d service.Deps) *API { return New(d.Jobs) })

// Targets are what bulk jobs import and export, over a process's
// services: the companies, then the declared resources, each written and
// read through the services its own operations use.
func Targets(d service.Deps) []jobs.Target {
	var out []jobs.Target
	for _, m := range append(companiesapi.JobKinds(d), resourcesapi.JobKinds(d)...) {
		w, r := m.Kind.Writes(m.API), m.Kind.Reads(m.API)
		t := jobs.Target{Def: m.Kind.Def, Create: w.Create, Update: w.Update, Get: r.Get,
			List: func(ctx context.Context, org string, q store.Query) (store.Page[store.JSON], error) {
				q.Desc = false
				return r.List(ctx, org, q, "", "")
			}}
		if len(m.Kind.Def.UniqueFields()) > 0 {
			t.Upsert, t.Owner = batch.UpsertWith(w, m.Kind.Def), m.Owner
		}
		out = append(out, t)
	}
	return out
}

// Operations are the bulk jobs: imports (created, then fed their file
// at uploadUrl) and exports, each listed and read back.
func Operations() []operation.Operation {
	imp, exp := openapi.Ref("ImportJob"), openapi.Ref("ExportJob")
	return []operation.Operation{
		operation.Declare(lambdas.Data, http.MethodPost, "/v1/imports", (*API).createImport).Destructive().InTopic("imports").Answers(routes.AnswerRecord).
			AsTool("create_import", "Create an import of a CSV or NDJSON file into a resource's records (mode create, upsert by a unique field, or update; dryRun validates only). "+
				"Answers uploadUrl: PUT the file there, then read the import (get_import) for its progress.").
			Doc(func(op *openapi.Operation) {
				op.Summary, op.Status, op.Data, op.ETag = "Create an import", http.StatusCreated, imp, true
				op.Description = "Creates an import awaiting its file: PUT the file (CSV with a header row, or NDJSON; any size up to 5 GB) to `uploadUrl` " +
					"within an hour, and the import starts when the upload completes. Rows are written as their requests' bodies would be, at a bounded rate, " +
					"with progress and the failed rows' errors in `GET /v1/imports/{id}`. See docs/bulk.md for the mapping and type rules."
				op.Body = importBody()
			}),
		operation.Declare(lambdas.Data, http.MethodGet, "/v1/imports", (*API).listImports).InTopic("imports").Answers(routes.AnswerPaged).Doc(func(op *openapi.Operation) {
			op.Summary, op.Data, op.Paged = "List imports", operation.ArrayOf("ImportJob"), true
			op.Description = "The organization's imports, newest first."
			op.Query = operation.PageOnlyQuery()
		}),
		operation.Declare(lambdas.Data, http.MethodGet, "/v1/imports/{id}", (*API).getImport).InTopic("imports").Answers(routes.AnswerRecord).
			AsTool("get_import", "Read an import: its status (awaitingUpload, queued, running, completed, failed), its counts (total, processed, created, updated, failed) and errorsUrl.").
			Doc(func(op *openapi.Operation) {
				op.Summary, op.Data, op.ETag = "Get an import", imp, true
				op.Description = "An import with its progress: `total` rows (once it started), `processed`, `created`, `updated`, `failed`; " +
					"`errorsUrl`, once completed with failed rows, is a CSV of them (row number, error, the row's cells)."
			}),
		operation.Declare(lambdas.Data, http.MethodPost, "/v1/exports", (*API).createExport).InTopic("exports").Answers(routes.AnswerRecord).
			AsTool("create_export", "Export a resource's records to a CSV or NDJSON file (filter by field values, choose fields); read the export (get_export) for its downloadUrl.").
			Doc(func(op *openapi.Operation) {
				op.Summary, op.Status, op.Data, op.ETag = "Create an export", http.StatusCreated, exp, true
				op.Description = "Starts an export of the organization's records of `resource`, in id order, to a file: `GET /v1/exports/{id}` " +
					"answers its `downloadUrl` once completed. CSV flattens nested fields as docs/bulk.md says."
				op.Body = exportBody()
			}),
		operation.Declare(lambdas.Data, http.MethodGet, "/v1/exports", (*API).listExports).InTopic("exports").Answers(routes.AnswerPaged).Doc(func(op *openapi.Operation) {
			op.Summary, op.Data, op.Paged = "List exports", operation.ArrayOf("ExportJob"), true
			op.Description = "The organization's exports, newest first."
			op.Query = operation.PageOnlyQuery()
		}),
		operation.Declare(lambdas.Data, http.MethodGet, "/v1/exports/{id}", (*API).getExport).InTopic("exports").Answers(routes.AnswerRecord).
			AsTool("get_export", "Read an export: its status and, once completed, rows and downloadUrl.").
			Doc(func(op *openapi.Operation) {
				op.Summary, op.Data, op.ETag = "Get an export", exp, true
				op.Description = "An export; once `completed`, `rows` and `downloadUrl` (valid for an hour: read the export again for a fresh one)."
			}),
	}
}

// errJobsOff answers a function built without bulk jobs.
var errJobsOff = apperr.Unavailable(nil, "bulk jobs are not configured in this deployment")

// jobsReady answers 503 and reports false when the function has no bulk
// jobs (no file store configured).
func (a *API) jobsReady(w http.ResponseWriter, r *http.Request) bool {
	if a.jobs == nil {
		httpapi.Error(w, r, errJobsOff)
		return false
	}
	return true
}

// jobView is j as the API answers it: an import or an export.
func (a *API) jobView(ctx context.Context, org string, j *jobs.Job, upload string) (any, error) {
	if j.Kind == jobs.KindImport {
		return a.importView(ctx, org, j, upload)
	}
	return a.exportView(ctx, org, j)
}

func (a *API) createImport(w http.ResponseWriter, r *http.Request) {
	a.createJob(w, r, func(j *jobs.Job, org string) (*jobs.Job, string, error) {
		return a.jobs.CreateImport(r.Context(), org, j)
	}, func(body []byte) (*jobs.Job, error) { return a.jobs.DecodeImport(body) })
}

func (a *API) createExport(w http.ResponseWriter, r *http.Request) {
	a.createJob(w, r, func(j *jobs.Job, org string) (*jobs.Job, string, error) {
		j, err := a.jobs.CreateExport(r.Context(), org, j)
		return j, "", err
	}, func(body []byte) (*jobs.Job, error) { return a.jobs.DecodeExport(body) })
}

// createJob decodes a job from the body, creates it and answers it (201).
func (a *API) createJob(w http.ResponseWriter, r *http.Request, create func(j *jobs.Job, org string) (*jobs.Job, string, error),
	decode func([]byte) (*jobs.Job, error)) {
	if !a.jobsReady(w, r) {
		return
	}
	j, ok := httpapi.DecodeBody(w, r, decode)
	if !ok {
		return
	}
	org := httpapi.Caller(r).OrgID
	j, upload, err := create(j, org)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Reply(w, r, http.StatusCreated)(a.jobView(r.Context(), org, j, upload))
}

func (a *API) getImport(w http.ResponseWriter, r *http.Request) { a.getJob(w, r, jobs.KindImport) }

func (a *API) getExport(w http.ResponseWriter, r *http.Request) { a.getJob(w, r, jobs.KindExport) }

// getJob answers a job of the kind.
func (a *API) getJob(w http.ResponseWriter, r *http.Request, kind string) {
	if !a.jobsReady(w, r) {
		return
	}
	org := httpapi.Caller(r).OrgID
	j, err := a.jobs.Get(r.Context(), org, kind, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.Reply(w, r, http.StatusOK)(a.jobView(r.Context(), org, j, ""))
}

func (a *API) listImports(w http.ResponseWriter, r *http.Request) { a.listJobs(w, r, jobs.KindImport) }

func (a *API) listExports(w http.ResponseWriter, r *http.Request) { a.listJobs(w, r, jobs.KindExport) }

// listJobs answers a page of jobs of the kind, each as GET answers it.
func (a *API) listJobs(w http.ResponseWriter, r *http.Request, kind string) {
	if !a.jobsReady(w, r) {
		return
	}
	q, ok := httpapi.PageQuery(w, r)
	if !ok {
		return
	}
	org := httpapi.Caller(r).OrgID
	page, err := a.jobs.List(r.Context(), org, kind, q)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	out := store.Page[any]{Items: make([]any, 0, len(page.Items)), Next: page.Next}
	for i := range page.Items {
		v, err := a.jobView(r.Context(), org, &page.Items[i], "")
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		out.Items = append(out.Items, v)
	}
	httpapi.List(w, r, out)
}

// jobResources lists the resources jobs move, for the bodies' schemas.
func jobResources() []any {
	var out []any
	for _, d := range kinds.Bulk() {
		out = append(out, d.Name)
	}
	return out
}

func importBody() openapi.Schema {
	return openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"resource", "format"}, "properties": openapi.Schema{
		"resource": openapi.Schema{"type": "string", "enum": jobResources(), "description": "the resource the rows are records of"},
		"format":   openapi.Schema{"type": "string", "enum": []any{string(bulk.CSV), string(bulk.NDJSON)}},
		"mode": openapi.Schema{"type": "string", "enum": []any{jobs.ModeCreate, jobs.ModeUpsert, jobs.ModeUpdate}, "default": jobs.ModeCreate,
			"description": "`create`: each row a new record; `upsert`: the record whose unique field `match` holds the row's value, created when none does; " +
				"`update`: the record the row names by `id` (or by the unique field `match`), which must exist"},
		"match": openapi.Schema{"type": "string", "description": "the unique field rows are matched by (upsert: required; update: default `id`)"},
		"mapping": openapi.Schema{"type": "object", "maxProperties": jobs.MaxMapping, "additionalProperties": openapi.Schema{"type": "string"},
			"description": "a column (CSV header, NDJSON key) → the field it holds (`location.city` for a part); `\"\"` skips the column. Unmapped columns are fields of their own name"},
		"dryRun": openapi.Schema{"type": "boolean", "default": false, "description": "check every row as the import would write it, and write nothing"},
		"keepIds": openapi.Schema{"type": "boolean", "default": false, "description": "mode create: each created record takes the id of the file's `id` column " +
			"(an export's), so that a copy into another organization keeps the references between its records"},
		"confidence": openapi.Schema{"type": "number", "format": "double", "minimum": 0, "maximum": 100, "default": jobs.DefaultConfidence,
			"description": "the confidence of the enrichment candidates the import adds: a value of a field the service reconciles from candidates " +
				"(a company's employeeCount, totalMoneyRaised, …) becomes a candidate (source `import`, sourceId the import's id)"},
	}}
}

func exportBody() openapi.Schema {
	return openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"resource"}, "properties": openapi.Schema{
		"resource": openapi.Schema{"type": "string", "enum": jobResources(), "description": "the resource to export"},
		"format":   openapi.Schema{"type": "string", "enum": []any{string(bulk.CSV), string(bulk.NDJSON)}, "default": string(bulk.CSV)},
		"filter": exportFilter("only records whose field equals the value (text: without regard to case), or one of the " +
			"list's values (up to " + strconv.Itoa(jobs.MaxFilterValues) + "); every field must match; fields holding one value only"),
		"fields": openapi.Schema{"type": "array", "maxItems": 200, "items": openapi.Schema{"type": "string"},
			"description": "the fields to export (`id` always); all when absent"},
		"escapeFormulas": openapi.Schema{"type": "boolean", "default": true,
			"description": "CSV: a text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return (or with `'`s followed by one) is written " +
				"with a leading `'`, so that a spreadsheet does not run it as a formula; an import reads it back without the `'`. " +
				"`false` writes such cells raw"},
	}}
}

// Schemas are the component schemas of the jobs.
func Schemas(out map[string]openapi.Schema) {
	out["ImportJob"] = openapi.TypeOf(reflect.TypeFor[ImportJob]())
	exp := openapi.TypeOf(reflect.TypeFor[ExportJob]())
	exp["properties"].(openapi.Schema)["filter"] = openapi.Schema{"type": "object", "additionalProperties": true}
	out["ExportJob"] = exp
}

// exportFilter is an export's filter (jobs.DecodeExport): a field's name →
// a string, number, boolean or null, or 1 to jobs.MaxFilterValues of them.
func exportFilter(description string) openapi.Schema {
	value := operation.ValueOrList("a string, number, boolean or null, or a list of them", jobs.MaxFilterValues,
		openapi.Schema{"type": "string"}, openapi.Schema{"type": "number"}, openapi.Schema{"type": "boolean"}, openapi.Schema{"type": "null"})
	return openapi.Schema{"type": "object", "description": description, "additionalProperties": value,
		"x-go-type": "map[string]interface{}"}
}
