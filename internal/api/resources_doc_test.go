package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/api/recordsapi/listspec"
	"github.com/sourcebase/sourcebase/internal/resources"
)

// docs/resources.md, as generated from the registry (api.DocRoutes),
// labels every route of a kind of record as it answers: PUT /v1/<name> is
// the upsert by a unique field (?match=, 201 created or 200 updated;
// If-Match is for a record's PUT), POST /v1/<name>/batch answers 200 with
// one result per operation, a record's PUT and DELETE honour If-Match.
func TestTheResourcesDocLabelsEachRouteAsItAnswers(t *testing.T) {
	t.Parallel()
	labels := map[string]string{} // by route pattern
	for _, line := range strings.Split(resources.Markdown(api.DocRoutes, listspec.DocList), "\n") {
		// | `PUT` | `/v1/companies` | label |
		cells := strings.SplitN(strings.TrimSuffix(line, " |"), " | ", 3)
		if len(cells) == 3 && strings.HasPrefix(cells[0], "| `") {
			labels[strings.Trim(cells[0], "| `")+" "+strings.Trim(cells[1], "`")] = cells[2]
		}
	}
	has := func(pattern string, want, not []string) {
		t.Helper()
		label := labels[pattern]
		for _, w := range want {
			if !strings.Contains(label, w) {
				t.Errorf("%s is labelled %q: it does not say %s", pattern, label, w)
			}
		}
		for _, n := range not {
			if strings.Contains(label, n) {
				t.Errorf("%s is labelled %q: it says %s", pattern, label, n)
			}
		}
	}
	upserts, batches := 0, 0
	for _, rt := range api.Routes() {
		if rt.Resource == "" {
			continue
		}
		if _, ok := labels[rt.Pattern()]; !ok {
			t.Errorf("%s, a route of %s, is not in docs/resources.md", rt.Pattern(), rt.Resource)
			continue
		}
		one := strings.HasSuffix(rt.Path, "/{id}")
		switch {
		case rt.Method == http.MethodPut && !one:
			upserts++
			has(rt.Pattern(), []string{"upsert by a unique field", "`?match=`", "`201`", "`200`"}, []string{"If-Match", "partial update"})
		case rt.Method == http.MethodPost && strings.HasSuffix(rt.Path, "/batch"):
			batches++
			has(rt.Pattern(), []string{"`200` with one result per operation"}, []string{"create:", "`201`"})
		case (rt.Method == http.MethodPut || rt.Method == http.MethodDelete) && one:
			has(rt.Pattern(), []string{"`If-Match` honoured"}, nil)
		}
	}
	if upserts == 0 || batches == 0 {
		t.Errorf("%d upserts and %d batches documented", upserts, batches)
	}
	has("PUT /v1/companies", []string{"`?match=` `externalId`", "the company created", "`200` with it updated"}, nil)
	has("POST /v1/companies/batch", []string{"`create`, `update`, `upsert`, `delete`"}, nil)
}
