package recordsapi_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestCompaniesAreFilteredByExternalIdAndPagedWithTheCursor(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	want := apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Acme", "externalId": "crm-1"}))
	apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Other", "externalId": "crm-2"})
	apitest.CreateCompany(t, c, map[string]any{"canonicalName": "None"})
	other := e.Org(t)
	apitest.CreateCompany(t, other, map[string]any{"canonicalName": "Theirs", "externalId": "crm-1"})

	got := apitest.IDsOf(t, c.Do("GET", "/v1/companies?externalId=crm-1", nil).Want(t, 200).List(t))
	if !slices.Equal(got, []string{want}) {
		t.Errorf("?externalId=crm-1 listed %v, want only %s (not the other organization's)", got, want)
	}
	if got := c.Do("GET", "/v1/companies?externalId=nobody", nil).Want(t, 200).List(t); len(got) != 0 {
		t.Errorf("?externalId=nobody listed %d companies, want none", len(got))
	}
}

func TestCompaniesAreFilteredByWebsiteHostHoweverTheWebsiteIsWritten(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	var want []string
	for _, site := range []string{"https://www.acme.com/about", "http://acme.com", "https://ACME.com/"} {
		want = append(want, apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Acme " + site, "website": site})))
	}
	apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Elsewhere", "website": "https://acme.org"})
	apitest.CreateCompany(t, c, map[string]any{"canonicalName": "No site"})
	slices.Reverse(want) // newest first

	got := apitest.IDsOf(t, apitest.PageAll(t, c, "/v1/companies?website="+url.QueryEscape("www.Acme.com")+"&limit=2"))
	if !slices.Equal(got, want) {
		t.Errorf("?website=www.Acme.com paged %v, want %v", got, want)
	}
}

func TestACompanyListTakesOneLookupFilterAndRejectsUnknownParameters(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	r := c.Do("GET", "/v1/companies?externalId=a&website=acme.com", nil).Want(t, 400)
	if msg := r.Error(t); !strings.Contains(msg, "website") || !strings.Contains(msg, "externalId") {
		t.Errorf("two filters: error %q does not name both parameters", msg)
	}
	r = c.Do("GET", "/v1/companies?name=Acme", nil).Want(t, 400)
	if msg := r.Error(t); !strings.Contains(msg, "name") || !strings.Contains(msg, "website") {
		t.Errorf("unknown parameter: error %q does not name it and the accepted filters", msg)
	}
	// A lookup filter with a sort no index serves with it: the lookup's
	// records, ordered in memory.
	r = c.Do("GET", "/v1/companies?externalId=a&sort=canonicalName", nil).Want(t, 200)
	if plan := r.Header.Get("X-Query-Plan"); plan != "index:companies.externalId+sort" {
		t.Errorf("filter with a sort: served by %q", plan)
	}
}

func TestWorkflowRunsAreFilteredByWorkflowIdAndPagedWithTheCursor(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	a := apitest.WorkflowWith(t, c, "A", apitest.Step("s", "set", map[string]any{"v": 1}))
	b := apitest.WorkflowWith(t, c, "B", apitest.Step("s", "set", map[string]any{"v": 2}))
	var want []string
	for range 3 {
		want = append(want, apitest.IDOf(t, apitest.RunToEnd(t, c, a, nil)))
	}
	apitest.RunToEnd(t, c, b, nil)
	slices.Reverse(want)

	got := apitest.IDsOf(t, apitest.PageAll(t, c, "/v1/workflow-runs?workflowId="+a+"&limit=2"))
	if !slices.Equal(got, want) {
		t.Errorf("?workflowId=%s paged %v, want %v", a, got, want)
	}
	other := e.Org(t)
	if got := other.Do("GET", "/v1/workflow-runs?workflowId="+a, nil).Want(t, 200).List(t); len(got) != 0 {
		t.Errorf("another organization filtering by this workflow listed %d runs, want none", len(got))
	}
}

func TestWorkflowRunsAreFilteredByStatus(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	ok := apitest.WorkflowWith(t, c, "Fine", apitest.Step("s", "set", map[string]any{"v": 1}))
	bad := apitest.WorkflowWith(t, c, "Broken", apitest.Step("stop", "fail", map[string]any{"message": "no"}))
	var completed, failed []string
	for range 3 {
		completed = append(completed, apitest.IDOf(t, apitest.RunToEnd(t, c, ok, nil)))
	}
	for range 2 {
		run := apitest.RunToEnd(t, c, bad, nil)
		apitest.WantStatus(t, run, "failed")
		failed = append(failed, apitest.IDOf(t, run))
	}
	slices.Reverse(completed)
	slices.Reverse(failed)

	got := apitest.IDsOf(t, apitest.PageAll(t, c, "/v1/workflow-runs?status=completed&limit=2"))
	if !slices.Equal(got, completed) {
		t.Errorf("?status=completed paged %v, want %v", got, completed)
	}
	if got := apitest.IDsOf(t, c.Do("GET", "/v1/workflow-runs?status=failed", nil).Want(t, 200).List(t)); !slices.Equal(got, failed) {
		t.Errorf("?status=failed listed %v, want %v", got, failed)
	}
	if got := c.Do("GET", "/v1/workflow-runs?status=queued", nil).Want(t, 200).List(t); len(got) != 0 {
		t.Errorf("?status=queued listed %d finished runs, want none: a run leaves its old status when it moves on", len(got))
	}
}

func TestAWorkflowRunListRejectsAnUnknownStatusTwoFiltersAndUnknownParameters(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	cases := []struct{ query, names string }{
		{"status=done", "status"},
		{"status=", "status"},
		{"status=failed&workflowId=wf_1", "workflowId"},
		{"state=failed", "state"},
	}
	for _, tc := range cases {
		msg := c.Do("GET", "/v1/workflow-runs?"+tc.query, nil).Want(t, 400).Error(t)
		if !strings.Contains(msg, tc.names) {
			t.Errorf("?%s: error %q does not name %s", tc.query, msg, tc.names)
		}
	}
	if msg := c.Do("GET", "/v1/workflow-runs?status=done", nil).Want(t, 400).Error(t); !strings.Contains(msg, "completed") {
		t.Errorf("?status=done: error %q does not list the statuses", msg)
	}
}
