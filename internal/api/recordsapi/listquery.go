package recordsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/api/recordsapi/listspec"
	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/listing"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/search"
	"github.com/sourcebase/sourcebase/internal/store"
)

// A kind's list takes filters, sort keys, fields and expand (package
// listing), planned against what serves the kind here: its indexes, and
// the search engine where this process holds one and the kind is
// searchable. The plan answering is named in the X-Query-Plan header.

// listCaps is what can serve d's lists in this process.
func (b *Base) listCaps(d *resource.Def) listing.Caps {
	caps := listing.Caps{Lookups: d.Filters(), IDOrder: []string{resource.FieldCreatedAt}}
	for _, f := range d.SortFields() {
		if f != resource.FieldID && f != resource.FieldCreatedAt {
			caps.Sorts = append(caps.Sorts, f)
		}
	}
	if d.Searchable && b.Search != nil {
		caps.Engine = b.Search.Name()
	}
	return caps
}

// listRecords answers a kind's list request (GET /v1/<name>).
func listRecords[T any](a Based, w http.ResponseWriter, r *http.Request, k Kind[T], res listing.Resource) {
	q, err := listing.Parse(res, r.URL.Query(), httpapi.ParsePage)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	serveList(a, w, r, k, res, q, func(err error) error { return err })
}

// queryRecords answers a kind's list query (POST /v1/<name>/query): the
// list GET answers for the same filters, sort keys, fields, expansions,
// limit and cursor, sent as a typed JSON body.
func queryRecords[T any](a Based, w http.ResponseWriter, r *http.Request, k Kind[T], res listing.Resource) {
	body, err := httpapi.ReadBody(w, r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	q, err := listing.Decode(res, body, httpapi.MaxLimit, httpapi.ParsePage)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	serveList(a, w, r, k, res, q, listing.BodyError)
}

// serveList plans and answers a parsed list; errors of the paging
// parameters (a cursor from another list, a sort that would read too
// much) pass through named (listing.BodyError for a body's).
func serveList[T any](a Based, w http.ResponseWriter, r *http.Request, k Kind[T], res listing.Resource, q *listing.Query, named func(error) error) {
	org := httpapi.Caller(r).OrgID
	caps := a.RecordsBase().listCaps(k.Def)
	plan, err := q.Plan(res, caps, org, r.Header.Get(listing.HeaderPlan))
	if err != nil {
		httpapi.Error(w, r, named(err))
		return
	}
	w.Header().Set(listing.HeaderPlan, plan.Name)
	reads := k.Reads(a)
	if plan.Search == nil && len(q.Fields) == 0 && len(q.Expand) == 0 {
		p, err := reads.List(r.Context(), org, plan.Page, plan.Lookup, plan.Value)
		httpapi.ReplyPage[T](w, r)(p, named(q.ReadLimit(caps, err)))
		return
	}
	var page store.Page[store.JSON]
	if plan.Search != nil {
		page, err = a.RecordsBase().searchList(r.Context(), org, res.Schema, reads, plan)
	} else {
		var p store.Page[T]
		p, err = reads.List(r.Context(), org, plan.Page, plan.Lookup, plan.Value)
		page, err = asJSON(p), q.ReadLimit(caps, err)
	}
	if err == nil {
		page, err = a.RecordsBase().shapeList(r.Context(), org, res, q, page)
	}
	httpapi.ReplyPage[store.JSON](w, r)(page, named(err))
}

// asJSON is a page with each record encoded.
func asJSON[T any](p store.Page[T]) store.Page[store.JSON] {
	if j, ok := any(p).(store.Page[store.JSON]); ok {
		return j
	}
	return store.MapPage(p, func(v *T) store.JSON {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // as a list writes it: "<" stays "<"
		if err := enc.Encode(v); err != nil {
			panic(fmt.Sprintf("api: a listed record does not encode: %v", err))
		}
		return store.JSON{Text: strings.TrimSuffix(b.String(), "\n")}
	})
}

// searchList serves a search plan: the engine's page, each record as GET
// answers it, with cursors holding the position in the list.
func (b *Base) searchList(ctx context.Context, org string, s *search.Schema, reads any, plan listing.Plan) (store.Page[store.JSON], error) {
	present, ok := reads.(resource.Presenter)
	if !ok {
		panic("api: a search plan for records that cannot be presented from search: " + s.Resource)
	}
	res, err := b.Search.Search(ctx, org, s, plan.Search)
	if err != nil {
		return store.Page[store.JSON]{Items: []store.JSON{}}, err
	}
	items := make([]store.JSON, len(res.Records))
	pos := make([]string, len(res.Records))
	for i, rec := range res.Records {
		stamp := ""
		if i < len(res.Stamps) {
			stamp = res.Stamps[i]
		}
		j, err := present.Present(rec, stamp)
		if err != nil {
			return store.Page[store.JSON]{Items: []store.JSON{}}, fmt.Errorf("list: present a %s record: %w", s.Resource, err)
		}
		items[i], pos[i] = store.JSON{Text: string(j)}, strconv.Itoa(plan.Start+i+1)
	}
	return store.NewPage(items, pos, plan.Bind, plan.Start+len(items) < res.Total), nil
}

// shapeList applies fields= and expand= to a page: the records each
// expanded field names are read once for the page (a BatchGetItem per
// hundred), as GET answers them.
func (b *Base) shapeList(ctx context.Context, org string, res listing.Resource, q *listing.Query, page store.Page[store.JSON]) (store.Page[store.JSON], error) {
	related := map[string]json.RawMessage{} // by id, of every expanded field
	refs := make([]map[string]any, len(page.Items))
	if len(q.Expand) > 0 {
		byTarget := map[string][]string{}
		seen, n := map[string]bool{}, 0
		for i, it := range page.Items {
			if err := json.Unmarshal([]byte(it.Text), &refs[i]); err != nil {
				return page, fmt.Errorf("list: a listed %s does not decode: %w", res.Def.Singular, err)
			}
			for _, name := range q.Expand {
				f, _ := res.Def.Field(name)
				for _, id := range refIDs(refs[i][name]) {
					if key := f.Target + "\x00" + id; !seen[key] {
						seen[key], n = true, n+1
						byTarget[f.Target] = append(byTarget[f.Target], id)
					}
				}
			}
			if n > maxExpanded {
				return page, apperr.InvalidQuery(listing.ParamExpand, "names more than %d records on this page; ask for fewer records (limit)", maxExpanded)
			}
		}
		for target, ids := range byTarget {
			if err := b.readRelated(ctx, org, target, ids, related); err != nil {
				return page, err
			}
		}
	}
	var failed error
	out := store.MapPage(page, func(it *store.JSON) store.JSON { return *it })
	for i := range out.Items {
		var exp []listing.Expansion
		for _, name := range q.Expand {
			f, _ := res.Def.Field(name)
			exp = append(exp, listing.Expansion{Field: name, Value: expansion(f, refs[i][name], related)})
		}
		b, err := listing.Project([]byte(out.Items[i].Text), q.Fields, exp)
		if err != nil && failed == nil {
			failed = fmt.Errorf("list: shape a %s: %w", res.Def.Singular, err)
		}
		out.Items[i].Text = string(b)
	}
	return out, failed
}

// maxExpanded bounds the related records one page expands (a
// BatchGetItem per hundred): a screening's companyIds alone may name 1,000.
const maxExpanded = 2000

// refIDs are the ids a reference field's value names.
func refIDs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// expansion is a reference's related records: the record (null when it
// does not exist) for a reference, the records that exist for an array.
func expansion(f resource.Field, v any, related map[string]json.RawMessage) json.RawMessage {
	ids := refIDs(v)
	if f.Kind == resource.Ref {
		if len(ids) == 1 && related[ids[0]] != nil {
			return related[ids[0]]
		}
		return json.RawMessage("null")
	}
	b := []byte{'['}
	for _, id := range ids {
		if rec := related[id]; rec != nil {
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(b, rec...)
		}
	}
	return append(b, ']')
}

// readRelated reads org's records of target with ids (GET's answer of
// each) into into.
func (b *Base) readRelated(ctx context.Context, org, target string, ids []string, into map[string]json.RawMessage) error {
	d := listspec.ExpandTarget(target)
	var present resource.Presenter
	if d != nil && b.present != nil {
		present, _ = b.present(d)
	}
	if d == nil || present == nil {
		return fmt.Errorf("list: %s records cannot be expanded", target)
	}
	for chunk := range slices.Chunk(ids, store.MaxBatch) {
		recs, err := b.Store.GetRecords(ctx, org, d.Type, chunk)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			j, err := present.Present(rec.Doc, rec.Stamp)
			if err != nil {
				return fmt.Errorf("list: present a %s record: %w", d.Singular, err)
			}
			into[rec.ID] = j
		}
	}
	return nil
}
