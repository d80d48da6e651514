package api_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/history"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/kinds"
	"github.com/sourcebase/sourcebase/internal/outbound"
	"github.com/sourcebase/sourcebase/internal/outbound/endpoints"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// TestEveryDeclaredResourceKeepsTheContract runs every declared resource
// through the same behaviours, driven only by its declaration: a new
// resource is tested by declaring it. Each resource gets one service; each
// behaviour its own organization of one shared service, so lists hold
// exactly its records. Under make test every call goes through Prism's
// validating proxy too (apitest.Env.ThroughPrism), an independent check of
// the document; the edit loop (-short) leaves the proxy out.
func TestEveryDeclaredResourceKeepsTheContract(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	for _, def := range resources.All() {
		t.Run(def.Name, func(t *testing.T) {
			t.Parallel()
			base := "/v1/" + def.Name
			behaviours := []struct {
				name string
				run  func(t *testing.T, e *apitest.Env, def *resource.Def, base string)
			}{
				{"creates a record from every field and reads it back", contractCreate},
				{"creates a record from its required fields with the others empty", contractCreateRequired},
				{"rejects a body that breaks the declaration naming the field", contractValidation},
				{"refuses an empty text exactly where the document does", contractEmptyTexts},
				{"updates partially and keeps updatedAt when nothing changes", contractUpdate},
				{"lists pages sorts and filters its records", contractList},
				{"filters by each lookup field", contractFilters},
				{"hides records from another organization and refuses references to its records", contractIsolation},
				{"refuses a stale If-Match a duplicate unique value and deleting a restricted target", contractConflicts},
				{"deletes a record", contractDelete},
			}
			for _, b := range behaviours {
				t.Run(b.name, func(t *testing.T) {
					t.Parallel()
					b.run(t, e, def, base)
				})
			}
		})
	}
}

func contractCreate(t *testing.T, e *apitest.Env, def *resource.Def, base string) {
	c := e.Org(t)
	body := sample(t, c, def, true)
	r := c.Do("POST", base, body).Want(t, 201)
	apitest.ETagOf(t, r)
	rec := r.Object(t)
	for _, f := range def.AllFields() {
		if _, ok := rec[f.Name]; !ok {
			t.Errorf("the created record has no %s: %s", f.Name, apitest.JSONOf(rec))
		}
	}
	for k, v := range body {
		if !apitest.Contains(rec[k], v) {
			t.Errorf("%s: sent %s, the record holds %s", k, apitest.JSONOf(v), apitest.JSONOf(rec[k]))
		}
	}
	if id, _ := rec["id"].(string); !strings.HasPrefix(id, def.IDPrefix+"_") {
		t.Errorf("id %q does not start with %s_", id, def.IDPrefix)
	}
	if rec["createdAt"] == nil || rec["createdAt"] != rec["updatedAt"] {
		t.Errorf("createdAt %v and updatedAt %v of a new record differ", rec["createdAt"], rec["updatedAt"])
	}
	got := c.Do("GET", base+"/"+apitest.IDOf(t, rec), nil).Want(t, 200)
	apitest.ETagOf(t, got)
	if apitest.JSONOf(got.Object(t)) != apitest.JSONOf(rec) {
		t.Errorf("GET returned %s, POST %s", apitest.JSONOf(got.Object(t)), apitest.JSONOf(rec))
	}
}

func contractCreateRequired(t *testing.T, e *apitest.Env, def *resource.Def, base string) {
	c := e.Org(t)
	body := sample(t, c, def, false)
	rec := c.Do("POST", base, body).Want(t, 201).Object(t)
	for _, f := range def.Fields {
		if f.Required || f.ReadOnly {
			continue
		}
		if !sameJSON(rec[f.Name], emptyOf(f)) {
			t.Errorf("%s not sent: the record holds %s, want %s", f.Name, apitest.JSONOf(rec[f.Name]), apitest.JSONOf(emptyOf(f)))
		}
	}
	for _, f := range def.AllFields() {
		if _, ok := rec[f.Name]; !ok {
			t.Errorf("the created record has no %s: %s", f.Name, apitest.JSONOf(rec))
		}
	}
}

func contractValidation(t *testing.T, e *apitest.Env, def *resource.Def, base string) {
	c := e.Org(t)
	required := sample(t, c, def, false)
	full := sample(t, c, def, true)
	with := func(name string, v any) map[string]any {
		b := copyBody(t, required)
		b[name] = v
		return b
	}
	for _, f := range def.Fields {
		if !f.Required {
			continue
		}
		missing := copyBody(t, required)
		delete(missing, f.Name)
		apitest.WantError(t, c.Do("POST", base, missing), 400, f.Name, "required")
		apitest.WantError(t, c.Do("POST", base, with(f.Name, nil)), 400, f.Name)
	}
	apitest.WantError(t, c.Do("POST", base, with("notAField", "x")), 400, "notAField")
	for _, f := range def.AllFields() {
		if f.ReadOnly {
			apitest.WantError(t, c.Do("POST", base, with(f.Name, "x")), 400, f.Name, "read-only")
		}
	}
	for _, f := range def.Fields {
		if f.ReadOnly {
			continue
		}
		apitest.WantError(t, c.Do("POST", base, with(f.Name, wrongType(f))), 400, f.Name)
		// A value of the right type that breaks a rule of the field.
		for _, v := range outOfRange(f) {
			apitest.WantError(t, c.Do("POST", base, with(f.Name, v)), 400, f.Name)
		}
		// The fields of objects: a wrong type, or a read-only one sent.
		for _, sub := range f.Fields {
			b := copyBody(t, full)
			path, obj := f.Name+"."+sub.Name, map[string]any(nil)
			if f.Kind == resource.Structs {
				path, obj = f.Name+"[0]."+sub.Name, b[f.Name].([]any)[0].(map[string]any)
			} else {
				obj = b[f.Name].(map[string]any)
			}
			if sub.ReadOnly {
				obj[sub.Name] = "x"
				apitest.WantError(t, c.Do("POST", base, b), 400, path, "read-only")
				continue
			}
			obj[sub.Name] = wrongType(sub)
			apitest.WantError(t, c.Do("POST", base, b), 400, path)
		}
	}
	rec := c.Do("POST", base, full).Want(t, 201).Object(t)
	for _, f := range def.Fields {
		if f.Immutable {
			apitest.WantError(t, c.Do("PUT", base+"/"+apitest.IDOf(t, rec), map[string]any{f.Name: full[f.Name]}), 400, f.Name)
		}
		if f.ReadOnly {
			apitest.WantError(t, c.Do("PUT", base+"/"+apitest.IDOf(t, rec), map[string]any{f.Name: "x"}), 400, f.Name, "read-only")
		}
	}
	apitest.WantError(t, c.Do("PUT", base+"/"+apitest.IDOf(t, rec), map[string]any{"notAField": 1}), 400, "notAField")
	if got := c.Do("GET", base+"/"+apitest.IDOf(t, rec), nil).Want(t, 200).Object(t); apitest.JSONOf(got) != apitest.JSONOf(rec) {
		t.Errorf("refused updates changed the record from %s to %s", apitest.JSONOf(rec), apitest.JSONOf(got))
	}
}

// contractEmptyTexts sends "" for each text a create takes (and [""] for
// each list of texts or ids): the service refuses it (400 naming the
// field) unless the field keeps its text verbatim, and the document must
// refuse exactly what the service refuses (minLength), so that a
// validating client or proxy neither sends what the service refuses nor
// refuses what it takes.
func contractEmptyTexts(t *testing.T, e *apitest.Env, def *resource.Def, base string) {
	c := e.Org(t)
	required := sample(t, c, def, false)
	for _, f := range def.Fields {
		var empty any
		switch {
		case f.ReadOnly:
			continue
		case f.Kind == resource.String || f.Kind == resource.Text || f.Kind == resource.URL || f.Kind == resource.Email || f.Kind == resource.Ref:
			empty = ""
		case f.Kind == resource.Strings || f.Kind == resource.Refs:
			empty = []any{""}
		default:
			continue
		}
		body := copyBody(t, required)
		body[f.Name] = empty
		b, _ := json.Marshal(body)
		allowed := apitest.Allows("POST", base, b)
		switch r := c.Do("POST", base, body); {
		case r.Status == 201 && allowed != nil:
			t.Errorf("%s %s: the service takes it, the document refuses it: %v", f.Name, apitest.JSONOf(empty), allowed)
		case r.Status == 400 && allowed == nil:
			t.Errorf("%s %s: the service refuses it (%s), the document allows it", f.Name, apitest.JSONOf(empty), r.Body)
		case r.Status != 201 && r.Status != 400:
			t.Errorf("%s %s: %d %s", f.Name, apitest.JSONOf(empty), r.Status, r.Body)
		}
	}
}

// mutable lists the fields a PUT may change.
func mutable(def *resource.Def) []resource.Field {
	var out []resource.Field
	for _, f := range def.Fields {
		if !f.ReadOnly && !f.Immutable {
			out = append(out, f)
		}
	}
	return out
}

func contractUpdate(t *testing.T, e *apitest.Env, def *resource.Def, base string) {
	c := e.Org(t)
	full := sample(t, c, def, true)
	created := c.Do("POST", base, full).Want(t, 201)
	rec := created.Object(t)
	path := base + "/" + apitest.IDOf(t, rec)

	// Nothing changes: {} and the same values keep the record and its ETag.
	same := map[string]any{}
	for _, f := range mutable(def) {
		same[f.Name] = full[f.Name]
	}
	for _, body := range []map[string]any{{}, same} {
		r := c.Do("PUT", path, body).Want(t, 200)
		if apitest.JSONOf(r.Object(t)) != apitest.JSONOf(rec) {
			t.Errorf("PUT %s changed the record from %s to %s", apitest.JSONOf(body), apitest.JSONOf(rec), apitest.JSONOf(r.Object(t)))
		}
		if apitest.ETagOf(t, r) != apitest.ETagOf(t, created) {
			t.Errorf("PUT %s moved the ETag", apitest.JSONOf(body))
		}
	}

	// One field changes, the others stay.
	changed := false
	for _, f := range mutable(def) {
		v, ok := otherValue(t, c, f, rec[f.Name], full)
		if !ok {
			continue
		}
		got := c.Do("PUT", path, map[string]any{f.Name: v}).Want(t, 200).Object(t)
		if !apitest.Contains(got[f.Name], v) {
			t.Errorf("PUT %s: the record holds %s", apitest.JSONOf(map[string]any{f.Name: v}), apitest.JSONOf(got[f.Name]))
		}
		for _, g := range def.AllFields() {
			if g.Name != f.Name && g.Name != resource.FieldUpdatedAt && !sameJSON(got[g.Name], rec[g.Name]) {
				t.Errorf("PUT of %s changed %s from %s to %s", f.Name, g.Name, apitest.JSONOf(rec[g.Name]), apitest.JSONOf(got[g.Name]))
			}
		}
		if got[resource.FieldUpdatedAt].(string) < rec[resource.FieldUpdatedAt].(string) {
			t.Errorf("updatedAt went back from %v to %v", rec[resource.FieldUpdatedAt], got[resource.FieldUpdatedAt])
		}
		rec, changed = got, true
		break
	}
	if !changed {
		t.Fatalf("no field of %s could be changed by the sample generator", def.Name)
	}

	// null clears each optional field to its empty value.
	for _, f := range mutable(def) {
		if f.Required {
			apitest.WantError(t, c.Do("PUT", path, map[string]any{f.Name: nil}), 400, f.Name)
			continue
		}
		got := c.Do("PUT", path, map[string]any{f.Name: nil}).Want(t, 200).Object(t)
		if !sameJSON(got[f.Name], emptyOf(f)) {
			t.Errorf("PUT {%q: null}: the record holds %s, want %s", f.Name, apitest.JSONOf(got[f.Name]), apitest.JSONOf(emptyOf(f)))
		}
	}
	if got := c.Do("GET", path, nil).Want(t, 200).Object(t); got[resource.FieldCreatedAt] != rec[resource.FieldCreatedAt] || got["id"] != rec["id"] {
		t.Errorf("updates changed id or createdAt: %s", apitest.JSONOf(got))
	}
}

func contractList(t *testing.T, e *apitest.Env, def *resource.Def, base string) {
	c := e.Org(t)
	var want []string
	for range 3 {
		want = append(want, apitest.IDOf(t, c.Do("POST", base, sample(t, c, def, true)).Want(t, 201).Object(t)))
	}
	// A record with only its required fields has no value for the optional
	// sort fields; it is listed all the same.
	want = append(want, apitest.IDOf(t, c.Do("POST", base, sample(t, c, def, false)).Want(t, 201).Object(t)))

	if got := apitest.IDsOf(t, c.Do("GET", base, nil).Want(t, 200).List(t)); !sameIDs(got, want) {
		t.Errorf("GET %s: %v, want %v", base, got, want)
	}
	if got := apitest.IDsOf(t, apitest.PageAll(t, c, base+"?limit=1")); !sameIDs(got, want) {
		t.Errorf("paging by one: %v, want each of %v once", got, want)
	}

	for _, name := range def.SortFields() {
		f, ok := def.Field(name)
		if !ok {
			t.Fatalf("sort field %s is not a field", name)
		}
		for _, dir := range []string{"asc", "desc"} {
			q := fmt.Sprintf("%s?sort=%s&direction=%s", base, name, dir)
			recs := c.Do("GET", q, nil).Want(t, 200).List(t)
			if got := apitest.IDsOf(t, recs); !sameIDs(got, want) {
				t.Errorf("GET %s: %v, want each of %v once", q, got, want)
			}
			if dir == "asc" {
				paged := apitest.PageAll(t, c, q+"&limit=1")
				if got, all := apitest.IDsOf(t, paged), apitest.IDsOf(t, recs); !slices.Equal(got, all) {
					t.Errorf("GET %s by one: %v, all at once %v", q, got, all)
				}
			}
			distinct := map[string]bool{}
			for i, r := range recs {
				distinct[apitest.JSONOf(r[name])] = true
				if i == 0 {
					continue
				}
				cmp := compareSort(f, recs[i-1][name], r[name])
				if dir == "asc" && cmp > 0 || dir == "desc" && cmp < 0 {
					t.Errorf("GET %s: %s before %s", q, apitest.JSONOf(recs[i-1][name]), apitest.JSONOf(r[name]))
				}
			}
			if len(distinct) < 2 {
				t.Errorf("GET %s: the samples have one value of %s only; the order is not tested", q, name)
			}
		}
	}
	apitest.WantError(t, c.Do("GET", base+"?sort=notAField", nil), 400, "sort")
	apitest.WantError(t, c.Do("GET", base+"?bogus=1", nil), 400, "bogus")
	if filters := def.Filters(); len(filters) >= 2 {
		apitest.WantError(t, c.Do("GET", base+"?"+filters[0]+"=x&"+filters[1]+"=y", nil), 400, filters[0], filters[1])
	}
}

func contractFilters(t *testing.T, e *apitest.Env, def *resource.Def, base string) {
	for _, name := range def.Filters() {
		t.Run(name, func(t *testing.T) {
			f, _ := def.Field(name)
			c := e.Org(t)
			first := sample(t, c, def, true)
			second := sample(t, c, def, true)
			if v, ok := otherValue(t, c, f, first[name], second); ok {
				second[name] = v
			}
			var recs []map[string]any
			for _, b := range []map[string]any{first, second, sample(t, c, def, false)} {
				recs = append(recs, c.Do("POST", base, b).Want(t, 201).Object(t))
			}
			values := map[string]bool{}
			for _, r := range recs {
				if r[name] == nil {
					continue
				}
				value := fmt.Sprint(r[name])
				values[value] = true
				var want []string
				for _, o := range recs {
					if o[name] != nil && (fmt.Sprint(o[name]) == value || f.Fold && strings.EqualFold(fmt.Sprint(o[name]), value)) {
						want = append(want, apitest.IDOf(t, o))
					}
				}
				asked := []string{value}
				if f.Fold {
					asked = append(asked, strings.ToUpper(value))
				}
				for _, v := range asked {
					q := base + "?" + name + "=" + url.QueryEscape(v)
					if got := apitest.IDsOf(t, apitest.PageAll(t, c, q)); !sameIDs(got, want) {
						t.Errorf("GET %s: %v, want %v", q, got, want)
					}
				}
			}
			if len(values) < 2 {
				t.Errorf("the samples have one value of %s only; the filter is not tested", name)
			}
			if got := c.Do("GET", base+"?"+name+"="+url.QueryEscape("nothing-matches"), nil); got.Status == 200 && len(got.List(t)) != 0 {
				t.Errorf("?%s=nothing-matches: %s", name, got.Body)
			}
		})
	}
}

func contractIsolation(t *testing.T, e *apitest.Env, def *resource.Def, base string) {
	a, b := e.Org(t), e.Org(t)
	full := sample(t, a, def, true)
	rec := a.Do("POST", base, full).Want(t, 201).Object(t)
	path := base + "/" + apitest.IDOf(t, rec)
	b.Do("GET", path, nil).Want(t, 404)
	b.Do("PUT", path, map[string]any{}).Want(t, 404)
	b.Do("DELETE", path, nil).Want(t, 404)
	if l := b.Do("GET", base, nil).Want(t, 200); strings.Contains(string(l.Body), apitest.IDOf(t, rec)) {
		t.Errorf("another organization lists the record: %s", l.Body)
	}
	if got := a.Do("GET", path, nil).Want(t, 200).Object(t); apitest.JSONOf(got) != apitest.JSONOf(rec) {
		t.Errorf("another organization's calls changed the record: %s", apitest.JSONOf(got))
	}

	// A reference names a record of the caller's organization, on create
	// and on update.
	for _, ref := range refPaths(def) {
		f, _ := def.Field(ref.field)
		for _, id := range []string{createTarget(t, b, ref.target), "nope_01junkjunkjunkjunkjunkjunk"} {
			body := copyBody(t, full)
			ref.set(body, id)
			apitest.WantError(t, a.Do("POST", base, body), 400, ref.path)
			if !f.Immutable {
				apitest.WantError(t, a.Do("PUT", path, map[string]any{ref.field: body[ref.field]}), 400, ref.path)
			}
		}
	}
	if got := a.Do("GET", path, nil).Want(t, 200).Object(t); apitest.JSONOf(got) != apitest.JSONOf(rec) {
		t.Errorf("refused references changed the record: %s", apitest.JSONOf(got))
	}
}

func contractConflicts(t *testing.T, e *apitest.Env, def *resource.Def, base string) {
	c := e.Org(t)
	// A PUT or DELETE with a stale If-Match changes nothing.
	full := sample(t, c, def, true)
	created := c.Do("POST", base, full).Want(t, 201)
	rec := created.Object(t)
	path := base + "/" + apitest.IDOf(t, rec)
	var change map[string]any
	for _, f := range mutable(def) {
		if v, ok := otherValue(t, c, f, rec[f.Name], full); ok {
			change = map[string]any{f.Name: v}
			break
		}
	}
	fresh := c.Do("PUT", path, change, "If-Match", apitest.ETagOf(t, created)).Want(t, 200)
	apitest.WantError(t, c.Do("PUT", path, map[string]any{}, "If-Match", apitest.ETagOf(t, created)), 412, "If-Match")
	apitest.WantError(t, c.Do("DELETE", path, nil, "If-Match", apitest.ETagOf(t, created)), 412, "If-Match")
	if got := c.Do("GET", path, nil).Want(t, 200).Object(t); apitest.JSONOf(got) != apitest.JSONOf(fresh.Object(t)) {
		t.Errorf("stale writes changed the record to %s", apitest.JSONOf(got))
	}

	// A unique value is one record's.
	for _, f := range def.Fields {
		if !f.Unique {
			continue
		}
		first := sample(t, c, def, false)
		v := sampleValue(t, c, f, first)
		first[f.Name] = v
		firstID := apitest.IDOf(t, c.Do("POST", base, first).Want(t, 201).Object(t))
		second := sample(t, c, def, false)
		if s, ok := v.(string); ok && f.Fold {
			v = strings.ToUpper(s)
		}
		second[f.Name] = v
		apitest.WantError(t, c.Do("POST", base, second), 409, f.Name)
		// Nor can another record take it by an update; once the first
		// record lets go of it, it is free.
		second[f.Name] = sampleValue(t, c, f, second)
		secondID := apitest.IDOf(t, c.Do("POST", base, second).Want(t, 201).Object(t))
		apitest.WantError(t, c.Do("PUT", base+"/"+secondID, map[string]any{f.Name: v}), 409, f.Name)
		c.Do("DELETE", base+"/"+firstID, nil).Want(t, 204)
		c.Do("PUT", base+"/"+secondID, map[string]any{f.Name: v}).Want(t, 200)
	}

	// A record a Restrict reference points at is not deleted while it does.
	for _, other := range resources.All() {
		for _, f := range other.Fields {
			if !f.Restrict || f.Target != def.Name {
				continue
			}
			target := apitest.IDOf(t, c.Do("POST", base, sample(t, c, def, false)).Want(t, 201).Object(t))
			body := sample(t, c, other, false)
			body[f.Name] = target
			referrer := apitest.IDOf(t, c.Do("POST", "/v1/"+other.Name, body).Want(t, 201).Object(t))
			apitest.WantError(t, c.Do("DELETE", base+"/"+target, nil), 409, referrer)
			c.Do("GET", base+"/"+target, nil).Want(t, 200)
			c.Do("DELETE", "/v1/"+other.Name+"/"+referrer, nil).Want(t, 204)
			c.Do("DELETE", base+"/"+target, nil).Want(t, 204)
		}
	}
}

func contractDelete(t *testing.T, e *apitest.Env, def *resource.Def, base string) {
	c := e.Org(t)
	path := base + "/" + apitest.IDOf(t, c.Do("POST", base, sample(t, c, def, true)).Want(t, 201).Object(t))
	if r := c.Do("DELETE", path, nil).Want(t, 204); len(r.Body) != 0 {
		t.Errorf("DELETE answered a body: %s", r.Body)
	}
	c.Do("GET", path, nil).Want(t, 404)
	c.Do("DELETE", path, nil).Want(t, 404)
	if got := c.Do("GET", base, nil).Want(t, 200).List(t); len(got) != 0 {
		t.Errorf("a deleted record is listed: %s", apitest.JSONOf(got))
	}
}

// TestEveryRouteAnswers404ToAnotherOrganizationAnd401WithoutCredentials
// walks every route of the route table, hand-written ones too, with the ids
// of real records of organization A: organization B's key gets 404 from
// every route that names one, and sees none of A's records in any other
// answer; no /v1 route answers without credentials. A route whose path
// parameters the test cannot fill fails it, so no route is added without
// being covered.
func TestEveryRouteAnswers404ToAnotherOrganizationAnd401WithoutCredentials(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	a, b := e.Org(t), e.Org(t)

	// The id of a record of A for each collection path.
	ids := map[string]string{}
	ids["companies"] = apitest.IDOf(t, apitest.CreateCompany(t, a, map[string]any{"canonicalName": "A's company"}))
	wf := apitest.CreateWorkflow(t, a, map[string]any{"name": "A's workflow"})
	ids["workflows"] = apitest.IDOf(t, wf)
	ids["workflow-runs"] = apitest.IDOf(t, a.Do("POST", "/v1/workflows/"+ids["workflows"]+"/runs", map[string]any{}).Want(t, 202).Object(t))
	for _, def := range resources.All() {
		body := sample(t, a, def, true)
		if def.Name == "lists" {
			body["resourceType"] = "company"
		}
		ids[def.Name] = apitest.IDOf(t, a.Do("POST", "/v1/"+def.Name, body).Want(t, 201).Object(t))
	}
	a.Do("POST", "/v1/lists/"+ids["lists"]+"/entries", map[string]any{"recordId": ids["companies"]}).Want(t, 201)
	keyOfA := e.Key(t, a.Org, "admin").ClientID
	enriched := a.Do("POST", "/v1/enrichments/resources/companies/"+ids["companies"], map[string]any{"values": []any{
		map[string]any{"property": "sector", "value": "A's sector", "source": "provider", "confidence": 50}}}).Want(t, 201).List(t)
	// A's change history and outbound webhooks: an event of its company, an
	// endpoint and a delivery to it.
	var delivery string
	ids["events"], ids["webhook-endpoints"], delivery = historyOf(t, e, a, ids["companies"])
	ids["imports"] = apitest.IDOf(t, a.Do("POST", "/v1/imports", map[string]any{"resource": "companies", "format": "csv"}).Want(t, 201).Object(t))
	ids["exports"] = apitest.IDOf(t, a.Do("POST", "/v1/exports", map[string]any{"resource": "companies"}).Want(t, 201).Object(t))
	params := map[string]string{
		"{clientId}":     keyOfA,
		"{recordId}":     ids["companies"], // the company on A's list
		"{resourceType}": "companies",
		"{resourceId}":   ids["companies"],           // A's company
		"{valueId}":      enriched[0]["id"].(string), // its candidate
		"{deliveryId}":   delivery,                   // the delivery to A's endpoint
	}
	var secrets []string
	for _, id := range ids {
		secrets = append(secrets, id)
	}
	secrets = append(secrets, keyOfA, delivery)

	// fill puts A's ids into a route's path: {id} is the record of the
	// collection the path starts with.
	fill := func(path string) (string, bool) {
		segs := strings.Split(path, "/")
		for i, s := range segs {
			if !strings.HasPrefix(s, "{") {
				continue
			}
			v, ok := params[s]
			if s == "{id}" && i > 0 {
				v, ok = ids[segs[i-1]]
			}
			if !ok {
				return "", false
			}
			segs[i] = v
		}
		return strings.Join(segs, "/"), true
	}
	// bodies are valid requests where a route reads one, so a 404 is not
	// hidden behind a 400.
	bodies := map[string]any{
		"POST /v1/lists/{id}/entries":  map[string]any{"recordId": ids["companies"]},
		"PATCH /v1/workflow-runs/{id}": map[string]any{"title": "B's title"},
		"POST /v1/enrichments/resources/{resourceType}/{resourceId}": map[string]any{"values": []any{
			map[string]any{"property": "sector", "value": "B's sector", "source": "provider", "confidence": 100}}},
		"PATCH /v1/enrichments/resources/{resourceType}/{resourceId}/{valueId}": map[string]any{"pinned": true},
		"PATCH /v1/webhook-endpoints/{id}":                                      map[string]any{"description": "B's endpoint", "enabled": false},
		"POST /v1/webhook-endpoints/{id}/secret/rotate":                         map[string]any{"overlapSeconds": 0},
	}

	table := slices.Clone(api.Routes())
	// Deletes last, so a delete that wrongly succeeded cannot hide behind
	// the 404s of the calls after it.
	slices.SortStableFunc(table, func(x, y routes.Route) int {
		return boolInt(x.Method == "DELETE") - boolInt(y.Method == "DELETE")
	})
	for _, rt := range table {
		if !rt.Authenticated() {
			continue // /healthz and signed webhook deliveries name no organization's key
		}
		path, ok := fill(rt.Path)
		if !ok {
			t.Errorf("%s %s: the test does not know how to fill its path parameters; teach it", rt.Method, rt.Path)
			continue
		}
		var body any
		if rt.Method == "POST" || rt.Method == "PUT" || rt.Method == "PATCH" {
			body = map[string]any{}
			if bb, ok := bodies[rt.Method+" "+rt.Path]; ok {
				body = bb
			}
		}
		if got := e.Anonymous(t).Do(rt.Method, path, body); got.Status != 401 {
			t.Errorf("%s %s without credentials: %d %s, want 401", rt.Method, path, got.Status, got.Body)
		}
		got := b.Do(rt.Method, path, body)
		if strings.Contains(rt.Path, "{") {
			if got.Status != 404 {
				t.Errorf("%s %s by another organization: %d %s, want 404", rt.Method, path, got.Status, got.Body)
			}
			continue
		}
		if got.Status >= 500 {
			t.Errorf("%s %s by another organization: %d %s", rt.Method, path, got.Status, got.Body)
		}
		for _, id := range secrets {
			if strings.Contains(string(got.Body), id) {
				t.Errorf("%s %s by another organization answers %s of organization A: %s", rt.Method, path, id, got.Body)
			}
		}
	}
	// Reading several documents at once leaves out another organization's.
	if got := b.Do("GET", "/v1/documents/ids="+ids["documents"], nil).Want(t, 200); len(got.List(t)) != 0 {
		t.Errorf("documents by ids of another organization: %s", got.Body)
	}
	// A's records are all still there.
	for name, id := range ids {
		a.Do("GET", "/v1/"+name+"/"+id, nil).Want(t, 200)
	}
	if got := a.Do("GET", "/v1/webhook-endpoints/"+ids["webhook-endpoints"]+"/deliveries", nil).Want(t, 200).List(t); len(got) == 0 ||
		!slices.ContainsFunc(got, func(d map[string]any) bool { return d["id"] == delivery }) {
		t.Errorf("A's delivery %s is no longer listed: %s", delivery, apitest.JSONOf(got))
	}
}

// historyOf gives organization a a change history, a webhook endpoint on a
// receiver of the test and a delivery to it, and answers their ids: the
// created event of a's company, the endpoint, the delivery. In process,
// all through the API, with the history running (the table's stream read,
// apitest.Env.StartEvents) until the test ends. The Lambda functions
// (SOURCEBASE_TARGET=lambdas) refuse endpoints on this machine's addresses,
// as in AWS, and nothing reads their table's stream (which the test
// binary's tests share): there the endpoint and its delivery are made by
// this process's endpoints service, which may reach the receiver (as the
// local Lambda front's process may with WEBHOOKS_ALLOW_LOOPBACK=true), and
// the event is kept as the events function keeps one.
func historyOf(t *testing.T, e *apitest.Env, a *apitest.Client, company string) (event, endpoint, delivery string) {
	t.Helper()
	recv := apitest.NewReceiver(t, nil)
	if apitest.Lambdas() {
		ctx := store.WithActor(t.Context(), store.Actor{Type: store.ActorAPIKey, ID: a.ClientID})
		svc := endpoints.New(e.Store, kinds.Events(), &outbound.Client{AllowLoopback: true}, nil)
		hook := recv.URL + "/a"
		ep, err := svc.Create(ctx, a.Org, endpoints.Input{URL: &hook})
		if err != nil {
			t.Fatalf("create A's webhook endpoint: %v", err)
		}
		d, err := svc.Test(ctx, a.Org, ep.ID)
		if err != nil || d.Status != endpoints.Succeeded {
			t.Fatalf("A's test delivery: %+v, %v", d, err)
		}
		data := a.Do("GET", "/v1/companies/"+company, nil).Want(t, 200).Object(t)
		ev := history.Event{ID: ids.New("evt"), Type: "company.created", OccurredAt: clock.Now(), Actor: store.ActorOf(ctx),
			Resource: history.Resource{Type: "company", ID: company}}
		ev.Data, _ = json.Marshal(data)
		if err := e.Deps.History.Append(ctx, history.Derived{Org: a.Org, Event: ev}); err != nil {
			t.Fatalf("keep A's event: %v", err)
		}
		return ev.ID, ep.ID, d.ID
	}
	evs := e.StartEvents(t)
	endpoint = apitest.IDOf(t, a.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL + "/a"}).Want(t, 201).Object(t))
	d := a.Do("POST", "/v1/webhook-endpoints/"+endpoint+"/test", nil).Want(t, 200).Object(t)
	if d["status"] != "succeeded" {
		t.Fatalf("A's test delivery: %v", d)
	}
	apitest.Caught(t, evs)
	created := a.Do("GET", "/v1/events?type=company.created&resourceId="+company, nil).Want(t, 200).List(t)
	if len(created) != 1 {
		t.Fatalf("A's company has %d created events, want 1: %s", len(created), apitest.JSONOf(created))
	}
	return apitest.IDOf(t, created[0]), endpoint, apitest.IDOf(t, d)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
