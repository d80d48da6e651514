// Package batch is the bulk writes of a kind of record — PUT
// /v1/<name>?match=<field>, an upsert by a unique field, and POST
// /v1/<name>/batch — over the writer of the feature that serves the kind
// (recordsapi.KindOperations adds them to a written kind's operations).
package batch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// MaxOperations is the most operations one batch holds.
const MaxOperations = 100

// Writer is what a batch's operations call: a kind's service. Bodies are
// passed as sent; the service decodes them by its kind's declaration.
type Writer interface {
	Create(ctx context.Context, org string, body []byte) (any, error)
	Update(ctx context.Context, org, id string, body []byte) (any, error)
	Delete(ctx context.Context, org, id string) error
}

// Env is what a batch writes with: the table (an atomic batch's
// transaction) and the rate limits each operation counts against (nil:
// none).
type Env struct {
	Store  *store.Store
	Limits *ratelimit.Limiter
}

// The operations of a batch.
const (
	batchCreate = "create"
	batchUpdate = "update"
	batchUpsert = "upsert"
	batchDelete = "delete"
)

// upserter services write the record a unique field's value names
// (resource.Upsert): created says whether it made it.
type upserter interface {
	Upsert(ctx context.Context, org, field string, body []byte) (rec any, created bool, err error)
}

// Operations are the bulk writes of d, a written kind: PUT /v1/<name>
// ?match=<field> (an upsert by a unique field, for a kind that has one)
// and POST /v1/<name>/batch, served over the API of the feature that
// serves d (A), through writes and with env.
func Operations[A any](d *resource.Def, writes func(A) Writer, env func(A) Env) []operation.Operation {
	base := "/v1/" + d.Name
	ref := openapi.Ref(openapi.SchemaName(d))
	snake := strings.NewReplacer(" ", "_", "-", "_")
	unique := d.UniqueFields()
	var ops []operation.Operation

	if len(unique) > 0 {
		upsert := operation.Declare(d.Function, http.MethodPut, base, func(a A, w http.ResponseWriter, r *http.Request) {
			body, ok := httpapi.Body(w, r)
			if !ok {
				return
			}
			if _, err := jsonbody.ParseObject(body); err != nil {
				httpapi.Error(w, r, err) // the body's faults first, as every write answers them
				return
			}
			match := r.URL.Query().Get("match")
			if match == "" {
				httpapi.Error(w, r, apperr.InvalidQuery("match", "is required: name the unique field the body's value matches a record by (%s)", strings.Join(unique, ", ")))
				return
			}
			rec, created, err := UpsertWith(writes(a), d)(r.Context(), httpapi.Caller(r).OrgID, match, body)
			status := http.StatusOK
			if created {
				status = http.StatusCreated
			}
			httpapi.Reply(w, r, status)(rec, err)
		}).Answers(routes.AnswerRecord).Doc(func(op *openapi.Operation) {
			op.Summary = "Upsert " + operation.WithArticle(d.Singular) + " by a unique field"
			op.Description = "Writes the " + d.Singular + " whose unique field `match` holds the body's value: created from the body (`201`) when none does, " +
				"else updated with the fields the body sets (`200`; immutable fields must hold the stored values). Safe under concurrency: parallel upserts " +
				"of one value make one record. The same upsert as a batch's `upsert` operation and an import in `upsert` mode."
			enum := make([]any, len(unique))
			for i, u := range unique {
				enum[i] = u
			}
			op.Query = []openapi.Param{{Name: "match", Required: true, Description: "the unique field the record is matched by; the body must set it",
				Schema: openapi.Schema{"type": "string", "enum": enum}}}
			op.Body, op.Status, op.AlsoStatus, op.Data, op.ETag = upsertBody(d), http.StatusOK, http.StatusCreated, ref, true
		})
		if d.MCP {
			upsert = upsert.AsTool("upsert_"+snake.Replace(d.Singular), "Create or update one "+d.Singular+" matched by a unique field ("+
				strings.Join(unique, ", ")+"): match names the field, body holds the record's fields including it.")
		}
		ops = append(ops, upsert)
	}

	batch := operation.Declare(d.Function, http.MethodPost, base+"/batch", func(a A, w http.ResponseWriter, r *http.Request) {
		body, ok := httpapi.Body(w, r)
		if !ok {
			return
		}
		req, err := decodeBatch(body, d)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		results, err := env(a).runBatch(w, r, writes(a), d, req)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.Data(w, http.StatusOK, results)
	}).Answers(routes.AnswerMeasured).Doc(func(op *openapi.Operation) {
		op.Summary = "Write several " + strings.ReplaceAll(d.Name, "-", " ") + " at once"
		op.Description = "Up to " + strconv.Itoa(MaxOperations) + " operations — `create`, `update` (with `id`, optionally `ifMatch`), " +
			"`upsert` (with `match`) and `delete` (with `id`) — applied in order, each answered with the status and body it would have alone " +
			"(`data[i]`: `index`, `status`, and `data` or `error`, `code`, `param`). One operation's failure leaves the others written, unless " +
			"`atomic` is true: then all are written in one transaction or none (a `4xx` naming the operation at fault), and an atomic batch sees " +
			"the table as it was before it. Each operation counts against the key's rate limit; `Idempotency-Key` covers the whole batch. " +
			"Records that would take the answer past the response budget are left out (`dataOmitted`: read them with GET)."
		op.Body, op.Data = batchSchema(d), openapi.Schema{"type": "array", "items": batchResultSchema(ref)}
		op.Errors = []int{412} // an operation's ifMatch, when the batch is atomic
	})
	if d.MCP {
		batch = batch.Destructive().AsTool("batch_"+snake.Replace(d.Name), "Create, update, upsert or delete up to "+strconv.Itoa(MaxOperations)+" "+
			strings.ReplaceAll(d.Name, "-", " ")+" in one call; each operation answers its own status. atomic: all or nothing.")
	}
	return append(ops, batch)
}

// UpsertWith is the upsert of w's kind, or a 400 for a kind that cannot.
func UpsertWith(w Writer, d *resource.Def) func(ctx context.Context, org, field string, body []byte) (any, bool, error) {
	if u, ok := w.(upserter); ok && len(d.UniqueFields()) > 0 {
		return u.Upsert
	}
	return func(context.Context, string, string, []byte) (any, bool, error) {
		_, err := d.MatchField("match", "")
		return nil, false, err
	}
}

// batchRequest is a batch's body.
type batchRequest struct {
	ops    []batchOp
	atomic bool
}

// batchOp is one operation of a batch.
type batchOp struct {
	op, id, match string
	// ifMatch is the operation's precondition (If-Match's), nil for none.
	ifMatch *store.Precondition
	data    []byte
}

// decodeBatch reads a batch's body: every operation well-formed, or a 400
// naming the first that is not (operations[i].field).
func decodeBatch(body []byte, d *resource.Def) (batchRequest, error) {
	var req batchRequest
	o, err := jsonbody.ParseObject(body, "operations", "atomic")
	if err != nil {
		return req, err
	}
	atomic, err := o.Bool("atomic")
	if err != nil {
		return req, err
	}
	req.atomic = atomic.Value
	list, err := o.Objects("operations", MaxOperations, "op", "id", "ifMatch", "match", "data")
	if err != nil {
		return req, err
	}
	if !list.Set || len(list.Value) == 0 {
		return req, apperr.Invalid("operations", "is required: a list of 1 to %d operations", MaxOperations)
	}
	for _, item := range list.Value {
		op, err := decodeBatchOp(item, d)
		if err != nil {
			return req, err
		}
		req.ops = append(req.ops, op)
	}
	return req, nil
}

func decodeBatchOp(o *jsonbody.Object, d *resource.Def) (batchOp, error) {
	var op batchOp
	kind, err := o.Enum("op", batchCreate, batchUpdate, batchUpsert, batchDelete)
	if err != nil {
		return op, err
	}
	if !kind.Set {
		return op, apperr.Invalid(o.Path("op"), "is required: one of create, update, upsert, delete")
	}
	op.op = kind.Value
	text := jsonbody.Text{Min: 1, Max: store.MaxIDLength, Trim: true}
	id, err := o.String("id", text)
	if err != nil {
		return op, err
	}
	match, err := o.String("match", jsonbody.Text{Min: 1, Max: 100, Trim: true})
	if err != nil {
		return op, err
	}
	tag, err := o.String("ifMatch", jsonbody.Text{Min: 1, Max: 100, Trim: true})
	if err != nil {
		return op, err
	}
	op.id, op.match = id.Value, match.Value
	if tag.Set {
		p := httpapi.ParseIfMatch(op.id, tag.Value)
		if !p.Any && len(p.Versions) == 0 {
			return op, apperr.Invalid(o.Path("ifMatch"), "must be an entity tag as the record's ETag shows it (such as \"\\\"3\\\"\") or \"*\"")
		}
		op.ifMatch = &p
	}
	raw, hasData := o.Raw("data")
	// What each operation needs, and what it must not carry.
	needs := map[string][]string{batchCreate: {"data"}, batchUpdate: {"id", "data"}, batchUpsert: {"match", "data"}, batchDelete: {"id"}}[op.op]
	sets := map[string]bool{"id": id.Set, "match": match.Set, "ifMatch": tag.Set, "data": hasData && string(raw) != "null"}
	for _, f := range needs {
		if !sets[f] {
			return op, apperr.Invalid(o.Path(f), "is required for %s", op.op)
		}
	}
	allowed := map[string][]string{batchCreate: {"data"}, batchUpdate: {"id", "ifMatch", "data"}, batchUpsert: {"match", "data"}, batchDelete: {"id", "ifMatch"}}[op.op]
	for _, f := range []string{"id", "match", "ifMatch", "data"} {
		if sets[f] && !contains(allowed, f) {
			return op, apperr.Invalid(o.Path(f), "does not apply to %s", op.op)
		}
	}
	if sets["data"] {
		if len(raw) == 0 || raw[0] != '{' {
			return op, apperr.Invalid(o.Path("data"), "must be an object: the %s's fields", d.Singular)
		}
		op.data = raw
	}
	return op, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// batchResult is one operation's answer.
type batchResult struct {
	Index  int `json:"index"`
	Status int `json:"status"`
	Data   any `json:"data,omitempty"`
	// DataOmitted: the record written would have taken the answer past
	// the response budget; read it with GET.
	DataOmitted bool   `json:"dataOmitted,omitempty"`
	Error       string `json:"error,omitempty"`
	Code        string `json:"code,omitempty"`
	Param       string `json:"param,omitempty"`
}

// runBatch applies req's operations in order through w. Each is counted
// against the key's rate limit (the request itself counted the first);
// one the limit refuses answers 429 in its place (an atomic batch: the
// whole batch is refused). An atomic batch collects the writes in a unit
// and commits them in one transaction.
func (e Env) runBatch(w http.ResponseWriter, r *http.Request, wr Writer, d *resource.Def, req batchRequest) ([]batchResult, error) {
	allowed := e.countOperations(w, r, len(req.ops))
	if req.atomic && allowed < len(req.ops) {
		return nil, apperr.RateLimited("the batch's %d operations exceed what the key's rate limit allows now (%d); retry later or send fewer", len(req.ops), allowed)
	}
	// Every operation's writes are the key's through the batch (the
	// change history's via), named by the request's id.
	base := store.WithVia(r.Context(), store.Via{Type: store.ViaBatch, ID: batchID(r)})
	ctx := base
	var unit *store.Unit
	if req.atomic {
		unit = &store.Unit{}
		ctx = store.WithUnit(ctx, unit)
	}
	org := httpapi.Caller(r).OrgID
	results := make([]batchResult, len(req.ops))
	for i, op := range req.ops {
		res := batchResult{Index: i}
		if i >= allowed {
			f := httpapi.Describe(ctx, apperr.RateLimited("the key's rate limit allows no more operations now; retry this one later"))
			res.Status, res.Error, res.Code = f.Status(), f.Message, string(f.Code)
			results[i] = res
			continue
		}
		v, status, err := applyBatchOp(ctx, wr, d, org, op)
		if err != nil {
			if req.atomic {
				return nil, atomicFailure(ctx, i, op, err)
			}
			f := httpapi.Describe(ctx, err)
			res.Status, res.Error, res.Code, res.Param = f.Status(), f.Message, string(f.Code), f.Param
		} else {
			res.Status, res.Data = status, v
		}
		if unit != nil {
			unit.End()
		}
		results[i] = res
	}
	if unit != nil {
		if err := e.Store.Commit(base, unit); err != nil {
			return nil, e.commitFailure(ctx, req, err)
		}
	}
	withinBudget(r.Context(), results)
	return results, nil
}

// batchID names a batch in the change history: its request's id, which
// the answer's X-Request-Id shows (the caller's own, when it sent a plain
// one: a caller that reuses one reuses the name).
func batchID(r *http.Request) string {
	if id := httpapi.RequestID(r.Context()); id != "" {
		return id
	}
	return ids.New("req")
}

// withinBudget leaves out the records of the results from the one that
// would take the answer past the request's response budget on (each then
// says dataOmitted): their writes are done; GET reads them.
func withinBudget(ctx context.Context, results []batchResult) {
	budget := httpapi.Budget(ctx)
	size := len(`{"data":[]}` + "\n")
	for i := range results {
		b, _ := httpapi.Marshal(results[i])
		n := store.WireSize(b) + 1
		if size+n > budget && results[i].Data != nil {
			results[i].Data, results[i].DataOmitted = nil, true
			b, _ = httpapi.Marshal(results[i])
			n = store.WireSize(b) + 1
		}
		size += n
	}
}

// commitFailure is the answer of an atomic batch whose commit failed:
// the operation at fault's error, or the unit's own refusal (too many
// writes, one item twice).
func (e Env) commitFailure(ctx context.Context, req batchRequest, err error) error {
	var ue *store.UnitError
	var inv *apperr.InvalidError
	if errors.As(err, &ue) && !errors.As(err, &inv) && ue.Operation >= 0 && ue.Operation < len(req.ops) {
		return atomicFailure(ctx, ue.Operation, req.ops[ue.Operation], ue.Err)
	}
	return err
}

// atomicFailure is the answer of an atomic batch whose operation i
// failed: that operation's error, naming it; nothing was written.
func atomicFailure(ctx context.Context, i int, op batchOp, err error) error {
	f := httpapi.Describe(ctx, err)
	param := ""
	if f.Param != "" {
		param = "operations[" + strconv.Itoa(i) + "].data." + f.Param
		if f.Code != apperr.CodeInvalidBody {
			param = f.Param // a query parameter's name (match)
		}
	}
	return apperr.Coded(f.Code, param, fmt.Sprintf("operation %d (%s) failed, so nothing was written: %s", i, op.op, f.Message))
}

// applyBatchOp applies one operation: the record (nil for a delete) and
// the status it answers alone.
func applyBatchOp(ctx context.Context, wr Writer, d *resource.Def, org string, op batchOp) (any, int, error) {
	if op.ifMatch != nil {
		ctx = store.WithPrecondition(ctx, *op.ifMatch)
	}
	switch op.op {
	case batchCreate:
		v, err := wr.Create(ctx, org, op.data)
		return v, http.StatusCreated, err
	case batchUpdate:
		v, err := wr.Update(ctx, org, op.id, op.data)
		return v, http.StatusOK, err
	case batchUpsert:
		v, created, err := UpsertWith(wr, d)(ctx, org, op.match, op.data)
		if created {
			return v, http.StatusCreated, err
		}
		return v, http.StatusOK, err
	default:
		return nil, http.StatusNoContent, wr.Delete(ctx, org, op.id)
	}
}

// countOperations counts the operations of a batch beyond the first (the
// request counted it) against the key's rate limit, and says how many the
// limit allows; the answer carries the headers of the last count.
func (e Env) countOperations(w http.ResponseWriter, r *http.Request, n int) int {
	if e.Limits == nil || n <= 1 {
		return n
	}
	p := httpapi.Caller(r)
	allowed := 1
	for allowed < n {
		d := e.Limits.Key(r.Context(), p.OrgID, p.ClientID)
		httpapi.RateLimitHeaders(w, d)
		if !d.Allowed {
			break
		}
		allowed++
	}
	return allowed
}

// batchSchema is the body of a batch of d's records: its operations are
// each one of the named variants of variants, told apart by `op` (a
// discriminator, so that generators make one type per operation).
func batchSchema(d *resource.Def) openapi.Schema {
	var oneOf []any
	mapping := openapi.Schema{}
	for _, v := range variants(d) {
		ref := openapi.Ref(v.name)
		oneOf = append(oneOf, ref)
		mapping[v.op] = ref["$ref"]
	}
	return openapi.Schema{"type": "object", "required": []any{"operations"}, "additionalProperties": false, "properties": openapi.Schema{
		"operations": openapi.Schema{"type": "array", "minItems": 1, "maxItems": MaxOperations, "items": openapi.Schema{
			"oneOf": oneOf, "discriminator": openapi.Schema{"propertyName": "op", "mapping": mapping}}},
		"atomic": openapi.Schema{"type": "boolean", "default": false, "description": "all operations in one transaction, or none"},
	}}
}

// batchVariant is one operation a batch of a kind takes: its op, and the
// component schema (name) of its body.
type batchVariant struct {
	op, name string
	schema   openapi.Schema
}

// variants are the operations a batch of d's records takes, each a
// named schema (<Schema>Batch<Op>: CompanyBatchCreate) whose `op` is its
// one value, with the fields decodeBatchOp requires and allows.
func variants(d *resource.Def) []batchVariant {
	text := func(max int, desc string) openapi.Schema {
		return openapi.Schema{"type": "string", "minLength": 1, "maxLength": max, "description": desc}
	}
	id := text(store.MaxIDLength, "the id of the "+d.Singular)
	tag := text(100, "the record's ETag (`\"3\"`) or `*`: the operation fails 412 when the record changed")
	// Each operation's data is checked as its own request's body would be,
	// and a bad one answers in its result: the batch takes any object.
	data := func(view string) openapi.Schema {
		return openapi.Schema{"type": "object", "additionalProperties": true, "description": "the " + d.Singular + "'s fields, as the body of " + view}
	}
	variant := func(op, desc string, required []any, props openapi.Schema) batchVariant {
		props["op"] = openapi.Schema{"type": "string", "enum": []any{op}}
		return batchVariant{op: op, name: openapi.SchemaName(d) + "Batch" + strings.ToUpper(op[:1]) + op[1:], schema: openapi.Schema{
			"type": "object", "description": desc, "required": append([]any{"op"}, required...), "properties": props, "additionalProperties": false}}
	}
	out := []batchVariant{
		variant(batchCreate, "a batch's create of "+operation.WithArticle(d.Singular), []any{"data"},
			openapi.Schema{"data": data("`POST /v1/" + d.Name + "`")}),
		variant(batchUpdate, "a batch's update of "+operation.WithArticle(d.Singular), []any{"id", "data"},
			openapi.Schema{"id": id, "ifMatch": tag, "data": data("`PUT /v1/" + d.Name + "/{id}`")}),
		variant(batchDelete, "a batch's delete of "+operation.WithArticle(d.Singular), []any{"id"},
			openapi.Schema{"id": id, "ifMatch": tag}),
	}
	if unique := d.UniqueFields(); len(unique) > 0 {
		out = append(out, variant(batchUpsert, "a batch's upsert of "+operation.WithArticle(d.Singular)+" by a unique field", []any{"match", "data"},
			openapi.Schema{"match": text(100, "the unique field the record is matched by: "+strings.Join(unique, ", ")),
				"data": data("`PUT /v1/" + d.Name + "?match=`")}))
	}
	return out
}

// batchResultSchema is one operation's answer.
func batchResultSchema(ref openapi.Schema) openapi.Schema {
	return openapi.Schema{"type": "object", "required": []any{"index", "status"}, "additionalProperties": false, "properties": openapi.Schema{
		"index":       openapi.Schema{"type": "integer", "description": "the operation's position in `operations`, from 0"},
		"status":      openapi.Schema{"type": "integer", "description": "the HTTP status the operation would have answered alone"},
		"data":        withDescriptionOf(ref, "the record written (not for a delete)"),
		"dataOmitted": openapi.Schema{"type": "boolean", "description": "the record was written but left out: it would have taken the answer past the response budget"},
		"error":       openapi.Schema{"type": "string", "description": "why the operation failed, as an error body says it"},
		"code":        openapi.Schema{"type": "string", "description": "the error's code, as `X-Error-Code` would say it"},
		"param":       openapi.Schema{"type": "string", "description": "the field at fault, as `X-Error-Param` would name it"},
	}}
}

func withDescriptionOf(ref openapi.Schema, desc string) openapi.Schema {
	out := openapi.Schema{"description": desc}
	for k, v := range ref {
		out[k] = v
	}
	return out
}

// upsertBody is the body of an upsert of d's records: a create's fields,
// none of them required (an update needs only the matched field).
func upsertBody(d *resource.Def) openapi.Schema {
	s := openapi.Record(d, openapi.Create)
	delete(s, "required")
	return s
}

// Schemas adds the batch operations' schemas of d to out (the document's
// components).
func Schemas(d *resource.Def, out map[string]openapi.Schema) {
	for _, v := range variants(d) {
		out[v.name] = v.schema
	}
}
