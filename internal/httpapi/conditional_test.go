package httpapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// notes is a declared resource whose PATCH, PUT and DELETE the router
// makes conditional on If-Match.
var notes = &resource.Def{Name: "notes", Singular: "note", Type: "NOTE", IDPrefix: "note", Function: "things",
	Fields: []resource.Field{{Name: "text", Kind: resource.String, Required: true}}}

var noteRoutes = []routes.Route{
	{Function: "things", Method: "GET", Path: "/v1/notes/{id}"},
	{Function: "things", Method: "PATCH", Path: "/v1/notes/{id}"},
	{Function: "things", Method: "DELETE", Path: "/v1/notes/{id}"},
}

// noteServer serves notes from a real table and returns it with a way to
// create a note directly (its id and ETag).
func noteServer(t *testing.T) (*server, func() (string, string)) {
	t.Helper()
	var svc *resource.Service
	org := func(r *http.Request) string { p, _ := auth.FromContext(r.Context()); return p.OrgID }
	handlers := map[string]http.Handler{
		"GET /v1/notes/{id}": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec, err := svc.Get(r.Context(), org(r), r.PathValue("id"))
			if err != nil {
				httpapi.Error(w, r, err)
				return
			}
			httpapi.Data(w, 200, rec)
		}),
		"PATCH /v1/notes/{id}": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := httpapi.ReadBody(w, r)
			if err == nil {
				var rec *resource.Record
				if rec, err = svc.Update(r.Context(), org(r), r.PathValue("id"), body); err == nil {
					httpapi.Data(w, 200, rec)
					return
				}
			}
			httpapi.Error(w, r, err)
		}),
		"DELETE /v1/notes/{id}": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := svc.Delete(r.Context(), org(r), r.PathValue("id")); err != nil {
				httpapi.Error(w, r, err)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}),
	}
	s := newServer(t, noteRoutes, handlers)
	svc, _ = resource.NewRegistry(s.st, []*resource.Def{notes}, nil).Service("notes")
	return s, func() (string, string) {
		rec, err := svc.Create(context.Background(), s.org, []byte(`{"text":"first"}`))
		if err != nil {
			t.Fatal(err)
		}
		return rec.ID(), rec.ETag()
	}
}

func TestIfMatchMakesAWriteConditionalOnTheStrongETagsSent(t *testing.T) {
	t.Parallel()
	s, create := noteServer(t)
	_, tag := create()
	if tag != `"1"` {
		t.Fatalf("a new note's ETag is %s", tag)
	}
	for _, c := range []struct {
		name    string
		ifMatch []string
		status  int
	}{
		{"no If-Match", nil, 200},
		{"the current tag", []string{`"1"`}, 200},
		{"any version", []string{`*`}, 200},
		{"a list holding it", []string{`"7", "1", "9"`}, 200},
		{"two headers, the second holding it", []string{`"7"`, `"1"`}, 200},
		{"a list with *", []string{`"7", *`}, 200},
		{"another version", []string{`"2"`}, 412},
		{"a weak tag never matches", []string{`W/"1"`}, 412},
		{"an unquoted tag", []string{`1`}, 412},
		{"not a version", []string{`"one"`}, 412},
		{"version zero", []string{`"0"`}, 412},
		{"an empty tag", []string{`""`}, 412},
	} {
		id, _ := create()
		var header []string
		for _, v := range c.ifMatch {
			header = append(header, "If-Match", v)
		}
		a := s.do(t, s.admin, "PATCH", "/v1/notes/"+id, `{"text":"second"}`, header...)
		if a.status != c.status {
			t.Errorf("%s: %d %s, want %d", c.name, a.status, a.body, c.status)
			continue
		}
		got := s.do(t, s.admin, "GET", "/v1/notes/"+id, "")
		changed := got.header.Get("ETag") == `"2"`
		if changed != (c.status == 200) {
			t.Errorf("%s: answered %d, and the note is now at %s", c.name, a.status, got.header.Get("ETag"))
		}
		if c.status == 200 && a.header.Get("ETag") != `"2"` {
			t.Errorf("%s: the changed note's ETag is %q", c.name, a.header.Get("ETag"))
		}
	}
}

func TestIfMatchMakesADeleteConditionalAndIsNotAppliedToReads(t *testing.T) {
	t.Parallel()
	s, create := noteServer(t)
	id, tag := create()
	if a := s.do(t, s.admin, "GET", "/v1/notes/"+id, "", "If-Match", `"99"`); a.status != 200 {
		t.Errorf("a read with another If-Match: %d %s", a.status, a.body)
	}
	if a := s.do(t, s.admin, "DELETE", "/v1/notes/"+id, "", "If-Match", `"99"`); a.status != 412 {
		t.Errorf("a delete of another version: %d %s", a.status, a.body)
	}
	if a := s.do(t, s.admin, "DELETE", "/v1/notes/"+id, "", "If-Match", tag); a.status != 204 {
		t.Errorf("a delete of the current version: %d %s", a.status, a.body)
	}
	// A precondition names its record: If-Match of a record that is gone
	// is still "not found".
	if a := s.do(t, s.admin, "DELETE", "/v1/notes/"+id, "", "If-Match", tag); a.status != 404 {
		t.Errorf("a delete of a deleted note: %d %s", a.status, a.body)
	}
}
