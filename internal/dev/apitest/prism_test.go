package apitest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

// The Prism check itself (apitest.Env.ThroughPrism): what it must catch,
// against a stand-in service answering as told.
func TestThePrismCheckCatchesWhatTheDocumentDoesNotAllow(t *testing.T) {
	testenv.Long(t, "Prism's proxy, left out of the edit loop")
	t.Parallel()
	company := `{"data":{"id":"cmp_1","canonicalName":"Acme","alternativeNames":[],"website":null,"linkedinUrl":null,` +
		`"description":null,"shortDescription":null,"sector":null,"subsector":null,"industry":null,"location":{},` +
		`"companyType":null,"origin":"user","externalId":null,"externalReference":{},"tags":[],"assignees":[],"custom":{},` +
		`"employeeCount":null,"ownershipStatus":null,"lastValuation":null,"lastAmountRaised":null,"totalMoneyRaised":null,` +
		`"lastRoundDate":null,"lastFinancials":{},"enrichment":{},"lastEnrichedAt":null,"lastEnrichmentStartedAt":null,` +
		`"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}}`
	answers := map[string]struct {
		status int
		body   string
	}{
		"GET /v1/companies/cmp_1":       {200, company},
		"GET /v1/companies/cmp_added":   {200, strings.Replace(company, `"origin"`, `"addedLater":1,"origin"`, 1)},
		"GET /v1/companies/cmp_drift":   {200, strings.Replace(company, `"sector":null,`, "", 1)},
		"POST /v1/companies":            {201, company},
		"PUT /v1/companies/cmp_refused": {400, `{"error":"Invalid request body: canonicalName must be a string"}`},
	}
	var mu sync.Mutex
	reached := map[string]int{}
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.Method+" "+r.URL.Path]
		if !ok {
			a.status, a.body = 404, `{"error":"no such endpoint"}`
		}
		mu.Lock()
		reached[r.Method+" "+r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if a.status >= 400 {
			w.Header().Set("X-Error-Code", string(apperr.StatusCode(a.status)))
		}
		w.WriteHeader(a.status)
		fmt.Fprint(w, a.body)
	}))
	t.Cleanup(service.Close)
	e := (&apitest.Env{URL: service.URL}).ThroughPrism(t)

	tests := []struct {
		name, method, path, body string
		status                   int
		wantErr                  string // "" for none
		reached                  int    // times the service saw the call
	}{
		{"a declared answer passes", "GET", "/v1/companies/cmp_1", "", 200, "", 1},
		{"an answer with a field added since passes (the published document)", "GET", "/v1/companies/cmp_added", "", 200, "", 1},
		{"an answer without a field it always has", "GET", "/v1/companies/cmp_drift", "", 500, "sector", 1},
		{"a request the document allows is forwarded", "POST", "/v1/companies", `{"canonicalName":"Acme"}`, 201, "", 1},
		{"a request the document refuses but the service accepts", "POST", "/v1/companies", `{"canonicalName":42}`, 201, "the service accepts it", 1},
		{"a request both refuse is answered by the service", "PUT", "/v1/companies/cmp_refused", `{"canonicalName":42}`, 400, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			clear(reached)
			mu.Unlock()
			rec := &recorder{TB: t}
			c := e.Anonymous(rec)
			c.ClientID, c.Secret = "client", "secret"
			var body any
			if tt.body != "" {
				body = tt.body
			}
			r := c.Do(tt.method, tt.path, body)
			if r.Status != tt.status {
				t.Errorf("answered %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			// (The contract check reports too: only Prism's reports count here.)
			var prism []string
			for _, e := range rec.errors {
				if strings.HasPrefix(e, "prism: ") {
					prism = append(prism, e)
				}
			}
			found := strings.Join(prism, "\n")
			switch {
			case tt.wantErr == "" && found != "":
				t.Errorf("unexpected violations: %s", found)
			case tt.wantErr != "" && !strings.Contains(found, tt.wantErr):
				t.Errorf("Prism's check reported %q, want one about %q", found, tt.wantErr)
			}
			mu.Lock()
			defer mu.Unlock()
			if got := reached[tt.method+" "+tt.path]; got != tt.reached {
				t.Errorf("the service saw the call %d times, want %d", got, tt.reached)
			}
		})
	}
}

// recorder keeps the errors a Client reports instead of failing the test.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
