package apitest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apitest"
)

// The contract check itself: what it must catch.
func TestTheContractCheckCatchesDrift(t *testing.T) {
	company := `{"data":{"id":"cmp_1","canonicalName":"Acme","createdAt":"2026-01-01T00:00:00.000Z"}}`
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
		{"an undeclared status", get, "", http.StatusTeapot, `{"error":"short and stout"}`, "status"},
		{"an error answer without its envelope", get, "", 404, `{"message":"not found"}`, "error"},
		{"an accepted request the document does not allow", post, `{"canonicalName": 42}`, 201, company, "request"},
		{"a refused invalid request is not checked", post, `{"canonicalName": 42}`, 400, `{"error":"Invalid request body: canonicalName must be a string"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := apitest.Contract(tt.req, []byte(tt.body), tt.status, json, []byte(tt.answer))
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
