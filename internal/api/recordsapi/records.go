package recordsapi

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/sourcebase/sourcebase/internal/api/recordsapi/batch"
	"github.com/sourcebase/sourcebase/internal/api/recordsapi/listspec"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Kind is a kind of record served by the generic operations (create,
// list, get, update, delete, search, batch, upsert): its declaration —
// fields, filters, sort fields, search, MCP exposure, documentation — and
// the service behind it, from the API of the feature that serves it (a
// Based). Every declared resource, companies, workflows and runs are
// kinds; what one does of its own is in its service, not in a handler.
type Kind[T any] struct {
	Def *resource.Def
	// Reads is the service that lists and reads the records.
	Reads func(a Based) Reader[T]
	// Writes is the service that creates, updates and deletes them; nil
	// for a kind that is only listed and read (runs: started, renamed and
	// retried by operations of their own).
	Writes func(a Based) Writer
	// Bulk gives the kind batch writes and upserts (bulkOperations), and
	// lets jobs import and export it: companies and the declared
	// resources.
	Bulk bool
}

// Records are the services of a kind that is read and written.
func Records[T any](svc func(a Based) interface {
	Reader[T]
	Writer
}) (func(a Based) Reader[T], func(a Based) Writer) {
	return func(a Based) Reader[T] { return svc(a) }, func(a Based) Writer { return svc(a) }
}

// Reader is what the generic list and get call: a kind's service.
type Reader[T any] interface {
	List(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[T], error)
	Get(ctx context.Context, org, id string) (any, error)
}

// Writer is what the generic create, update and delete call (and a
// batch's operations): a kind's service.
type Writer = batch.Writer

// multiGetter services read several records at once (resource.Def.MultiGet).
type multiGetter interface {
	GetByIDs(ctx context.Context, org, segment string) ([]resource.Record, error)
}

// Operations are the generic operations of k: create (201), list
// (paged, filtered by one lookup field), get, partial update and delete
// (204) — list and get only for a read-only kind — and its search when
// it is searchable. With MCP set, each of them is an MCP tool:
// create_<singular>, list_<name>, search_<name>, get_<singular>,
// update_<singular> and delete_<singular> (and the bulk writes' tools,
// bulkOperations), so that an agent reads and changes every kind the
// same way.
func KindOperations[T any](k Kind[T]) []operation.Operation {
	d := k.Def
	base, item := "/v1/"+d.Name, "/v1/"+d.Name+"/{id}"
	org := func(r *http.Request) string { return httpapi.Caller(r).OrgID }
	ref := openapi.Ref(openapi.SchemaName(d))
	plural := strings.ReplaceAll(d.Name, "-", " ")
	snake := strings.NewReplacer(" ", "_", "-", "_")
	res := listspec.Resource(d) // once, not on every list request

	create := operation.Declare(d.Function, http.MethodPost, base, func(a Based, w http.ResponseWriter, r *http.Request) {
		if body, ok := httpapi.Body(w, r); ok {
			httpapi.Reply(w, r, http.StatusCreated)(k.Writes(a).Create(r.Context(), org(r), body))
		}
	}).Answers(routes.AnswerRecord).Doc(func(op *openapi.Operation) {
		op.Summary = "Create " + operation.WithArticle(d.Singular)
		op.Description = d.Doc + " Answers the stored record (201), with its version as `ETag`."
		op.Body, op.Status, op.Data, op.ETag = openapi.Record(d, openapi.Create), http.StatusCreated, ref, true
		op.Errors = []int{409}
	})
	if d.MCP {
		create = create.AsTool("create_"+snake.Replace(d.Singular), "Create "+operation.WithArticle(d.Singular)+": body holds its fields. "+
			"Answers the stored record and its etag (for ifMatch).")
	}

	list := operation.Declare(d.Function, http.MethodGet, base, func(a Based, w http.ResponseWriter, r *http.Request) {
		listRecords(a, w, r, k, res)
	}).Answers(routes.AnswerPaged).Doc(func(op *openapi.Operation) {
		op.Summary = "List " + plural
		op.Description = "A page of the organization's " + plural + ", newest first unless `sort` and `direction` say otherwise. " +
			"When more records follow, `X-Next-Cursor` holds the next page's `cursor` and `Link` its URL."
		listspec.Operation(op, d)
	})
	query := operation.Declare(d.Function, http.MethodPost, base+"/query", func(a Based, w http.ResponseWriter, r *http.Request) {
		queryRecords(a, w, r, k, res)
	}).Safe().Answers(routes.AnswerPaged).Doc(func(op *openapi.Operation) {
		op.Summary = "Query " + plural
		op.Description = "The list `GET /v1/" + d.Name + "` answers, asked with a typed JSON body rather than query parameters " +
			"(for clients generated from this document, which cannot send `filter[<field>][<operator>]=`): the same records, plan, " +
			"byte budget and cursors. Send the next page's `cursor` in the body with the same `filter` and `sort`."
		listspec.QueryOperation(op, d)
	})

	if d.MCP {
		expand := ""
		if len(res.Expandable) > 0 {
			expand = "; expand names reference fields whose records each record carries under expanded"
		}
		if lookups := d.Filters(); len(lookups) > 0 {
			expand += "; an equality on " + strings.Join(lookups, " or ") + " is served by its index"
		}
		query = query.AsTool("list_"+snake.Replace(d.Name), "List the organization's "+plural+", newest first. filter holds conditions that must all hold, "+
			`by field: {"<field>": <value>} for equality, {"<field>": {"gte": 10}} with an operator (eq, ne, in, nin, gt, gte, lt, lte, `+
			`contains, startsWith, exists; in and nin take an array); sort is up to 3 keys, each {"field": "<field>", "direction": "asc" or "desc"}; `+
			"fields names the fields to answer"+expand+". Follow nextCursor with cursor (and the same filter and sort).").BodyArguments()
	}

	get := operation.Declare(d.Function, http.MethodGet, item, func(a Based, w http.ResponseWriter, r *http.Request) {
		recs, id := k.Reads(a), r.PathValue("id")
		if m, ok := recs.(multiGetter); ok && d.MultiGet && strings.HasPrefix(id, resource.MultiGetPrefix) {
			found, err := m.GetByIDs(r.Context(), org(r), id)
			if n, budget, ok := httpapi.Fits(r, found); err == nil && !ok {
				err = apperr.InvalidPath("ids", "names records of %d bytes in all, more than the %d one answer may take; ask for fewer at once", n, budget)
			}
			httpapi.Reply(w, r, http.StatusOK)(found, err)
			return
		}
		if len(id) > store.MaxIDLength {
			httpapi.Error(w, r, apperr.ErrNotFound)
			return
		}
		httpapi.Reply(w, r, http.StatusOK)(recs.Get(r.Context(), org(r), id))
	}).Answers(routes.AnswerRecord).Doc(func(op *openapi.Operation) {
		op.Summary = "Get " + operation.WithArticle(d.Singular)
		op.Description = "The " + d.Singular + " with this id in the key's organization, with its version as `ETag`."
		op.Data, op.ETag = ref, true
		if d.MultiGet {
			op.Description += " Several at once: `GET " + MultiGetPath(d) + "`."
		}
	})
	if d.MultiGet {
		// ids=<id>,... reads up to store.MaxBatch records, measured
		// against the budget.
		get.MaxParam, get.Answer = resource.MaxMultiGetSegment, routes.AnswerMeasured
	}
	if d.MCP {
		get = get.AsTool("get_"+snake.Replace(d.Singular), "Get one "+d.Singular+" by id. "+d.Doc)
	}

	update := operation.Declare(d.Function, http.MethodPut, item, func(a Based, w http.ResponseWriter, r *http.Request) {
		if body, ok := httpapi.Body(w, r); ok {
			httpapi.Reply(w, r, http.StatusOK)(k.Writes(a).Update(r.Context(), org(r), r.PathValue("id"), body))
		}
	}).Answers(routes.AnswerRecord).Doc(func(op *openapi.Operation) {
		op.Summary = "Update " + operation.WithArticle(d.Singular)
		op.Description = "Changes the fields sent; a field sent as `null` is cleared. Other fields keep their values."
		op.Body, op.Data, op.ETag = openapi.Record(d, openapi.Update), ref, true
		op.Errors = []int{409}
	})
	if d.MCP {
		update = update.AsTool("update_"+snake.Replace(d.Singular), "Update the "+d.Singular+" with this id: body holds the fields to change "+
			"(null clears one; the others keep their values). With ifMatch, the etag a read or write of it answered, the update is refused (412) "+
			"if the record changed since. Answers the record and its new etag.")
	}

	del := operation.Declare(d.Function, http.MethodDelete, item, func(a Based, w http.ResponseWriter, r *http.Request) {
		httpapi.NoContent(w, r, k.Writes(a).Delete(r.Context(), org(r), r.PathValue("id")))
	}).Doc(func(op *openapi.Operation) {
		op.Summary = "Delete " + operation.WithArticle(d.Singular)
		op.Description = "Deletes the " + d.Singular + " (204). A record another one still references where the reference restricts deletes is a 409 naming it."
		op.Errors = []int{409}
	})
	if d.MCP {
		del = del.AsTool("delete_"+snake.Replace(d.Singular), "Delete the "+d.Singular+" with this id (a record another one still references "+
			"where the reference restricts deletes is refused, 409). With ifMatch, refused (412) if the record changed since that etag.")
	}

	ops := []operation.Operation{create, list, query, get, update, del}
	if k.Bulk {
		ops = append(ops, batch.Operations(d, k.Writes, batchEnv)...)
	}
	if k.Writes == nil {
		ops = []operation.Operation{list, query, get}
	}
	for i := range ops {
		ops[i] = ops[i].Of(d.Name)
		ops[i].Generic = true
	}
	if d.Searchable {
		// After the list, so that each kind's MCP tools read list, search,
		// then get.
		i := slices.IndexFunc(ops, func(op operation.Operation) bool { return op.Pattern() == list.Pattern() })
		ops = slices.Insert(ops, i+1, searchOperationOf(k))
		if d.Similar {
			ops = slices.Insert(ops, i+2, similarOperationOf(k))
		}
	}
	return ops
}

// MultiGetPath is the path of the read of several records of d at once,
// served by the route of GET /v1/<name>/{id}.
func MultiGetPath(d *resource.Def) string {
	return "/v1/" + d.Name + "/" + resource.MultiGetPrefix + "{ids}"
}

// batchEnv is what a kind's batch writes with, from the feature's Base.
func batchEnv(a Based) batch.Env {
	b := a.RecordsBase()
	return batch.Env{Store: b.Store, Limits: b.Limits}
}
