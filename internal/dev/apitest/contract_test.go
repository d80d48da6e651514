package apitest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// The contract check itself: what it must catch.
func TestTheContractCheckCatchesDrift(t *testing.T) {
	company := `{"data":{"id":"cmp_1","canonicalName":"Acme","alternativeNames":[],"website":null,"linkedinUrl":null,` +
		`"description":null,"shortDescription":null,"sector":null,"subsector":null,"industry":null,"location":{},` +
		`"companyType":null,"origin":"user","externalId":null,"externalReference":{},"tags":[],"assignees":[],"custom":{},` +
		`"employeeCount":null,"ownershipStatus":null,"lastValuation":null,"lastAmountRaised":null,"totalMoneyRaised":null,` +
		`"lastRoundDate":null,"lastFinancials":{},"enrichment":{},"lastEnrichedAt":null,"lastEnrichmentStartedAt":null,` +
		`"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}}`
	get, _ := http.NewRequest("GET", "http://localhost/v1/companies/cmp_1", nil)
	post, _ := http.NewRequest("POST", "http://localhost/v1/companies", nil)
	post.Header.Set("Content-Type", "application/json")
	json := http.Header{"Content-Type": {"application/json"}}
	tests := []struct {
		name    string
		req     *http.Request
		body    string
		status  int
		answer  string
		wantErr string
	}{
		{"a declared answer passes", get, "", 200, company, ""},
		{"an unknown field in an answer", get, "", 200, strings.Replace(company, `"canonicalName"`, `"nickname":"x","canonicalName"`, 1), "nickname"},
		{"a field an answer always has left out", get, "", 200, strings.Replace(company, `"sector":null,`, "", 1), "sector"},
		{"null where an answer never has it", get, "", 200, strings.Replace(company, `"origin":"user"`, `"origin":null`, 1), "origin"},
		{"a date-time that is not one", get, "", 200, strings.Replace(company, `"createdAt":"2026-01-01T00:00:00.000Z"`, `"createdAt":"yesterday"`, 1), "createdAt"},
		{"a wrong type inside a referenced schema", get, "", 200, strings.Replace(company, `"tags":[]`, `"tags":[42]`, 1), "tags"},
		{"an answer of a media type it does not declare", get, "", 200, company, "Content-Type"},
		{"an undeclared status", get, "", http.StatusTeapot, `{"error":"short and stout"}`, "status"},
		{"an error answer without its envelope", get, "", 404, `{"message":"not found"}`, "error"},
		{"an accepted request the document does not allow", post, `{"canonicalName": 42}`, 201, company, "request"},
		{"a refused invalid request is not checked", post, `{"canonicalName": 42}`, 400, `{"error":"Invalid request body: canonicalName must be a string"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := json.Clone()
			if strings.HasPrefix(tt.name, "an answer of a media type") {
				h.Set("Content-Type", "text/html")
			}
			if code := apperr.StatusCode(tt.status); code.Status() == tt.status {
				h.Set("X-Error-Code", string(code)) // as every error answer does
			}
			err := apitest.Contract(tt.req, []byte(tt.body), tt.status, h, []byte(tt.answer))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected drift: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("no drift found, want one about %s", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("drift %v, want one about %s", err, tt.wantErr)
			}
		})
	}
}

// The error code check: every error answer, routed or not, carries one
// code of its status.
func TestTheContractCheckWantsAnErrorCodeOfTheStatusOnEveryErrorAnswer(t *testing.T) {
	get, _ := http.NewRequest("GET", "http://localhost/v1/companies/cmp_1", nil)
	unrouted, _ := http.NewRequest("GET", "http://localhost/v1/nothing", nil)
	tests := []struct {
		name    string
		req     *http.Request
		status  int
		header  []string
		wantErr string
	}{
		{"a code of the status", get, 404, []string{"X-Error-Code", "not_found"}, ""},
		{"another code of the status", unrouted, 404, []string{"X-Error-Code", "no_such_endpoint"}, ""},
		{"a param of a code that has one", unrouted, 400, []string{"X-Error-Code", "invalid_query", "X-Error-Param", "page"}, ""},
		{"no code", get, 404, nil, "X-Error-Code"},
		{"no code on an unrouted answer", unrouted, 404, nil, "X-Error-Code"},
		{"an unknown code", get, 404, []string{"X-Error-Code", "gone"}, "none of"},
		{"a code of another status", get, 404, []string{"X-Error-Code", "conflict"}, "409"},
		{"a param of a code that has none", get, 404, []string{"X-Error-Code", "not_found", "X-Error-Param", "id"}, "X-Error-Param"},
		{"a code on a success", get, 200, []string{"X-Error-Code", "not_found"}, "200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{"Content-Type": {"application/json"}}
			for i := 0; i+1 < len(tt.header); i += 2 {
				h.Add(tt.header[i], tt.header[i+1])
			}
			var err error
			if tt.status >= 400 { // the whole check, as every call gets it
				err = apitest.Contract(tt.req, nil, tt.status, h, []byte(`{"error":"x"}`))
			} else {
				err = apitest.ErrorCode(tt.status, h)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("not caught, want an error about %s", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("%v, want an error about %s", err, tt.wantErr)
			}
		})
	}
}
