package httpapi_test

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
)

// codedAnswer is what an error writer answered.
type codedAnswer struct {
	status      int
	code, param string
	params      int
	body        string
	header      http.Header
}

func answered(w *httptest.ResponseRecorder) codedAnswer {
	return codedAnswer{status: w.Code, code: w.Header().Get("X-Error-Code"), param: w.Header().Get("X-Error-Param"),
		params: len(w.Header().Values("X-Error-Param")), body: strings.TrimSuffix(w.Body.String(), "\n"), header: w.Header()}
}

func TestErrorAnswersEachErrorWithItsCodeStatusAndUnchangedBody(t *testing.T) {
	r := httptest.NewRequest("GET", "/v1/companies", nil)
	for _, tc := range []struct {
		err    error
		status int
		code   apperr.Code
		param  string
		body   string
	}{
		{apperr.Invalid("location.city", "must be a string"), 400, apperr.CodeInvalidBody, "location.city",
			`{"error":"Invalid request body: location.city must be a string"}`},
		{apperr.Invalid("", "must be a JSON object"), 400, apperr.CodeInvalidBody, "", `{"error":"Invalid request body: must be a JSON object"}`},
		{apperr.InvalidQuery("page", "must be an integer from 1 to 100"), 400, apperr.CodeInvalidQuery, "page",
			`{"error":"Invalid query parameter: page must be an integer from 1 to 100"}`},
		{apperr.InvalidPath("ids", "names 101 ids; at most 100 at once"), 400, apperr.CodeInvalidPath, "ids",
			`{"error":"Invalid path: ids names 101 ids; at most 100 at once"}`},
		{apperr.InvalidHeader("Idempotency-Key", "must be 1 to 255 printable ASCII characters, sent once."), 400, apperr.CodeInvalidHeader, "Idempotency-Key",
			`{"error":"Invalid header: Idempotency-Key must be 1 to 255 printable ASCII characters, sent once."}`},
		{auth.ErrUnauthenticated, 401, apperr.CodeUnauthenticated, "", `{"error":"invalid api key or clientId"}`},
		{fmt.Errorf("authenticate: %w", auth.ErrUnauthenticated), 401, apperr.CodeUnauthenticated, "", `{"error":"invalid api key or clientId"}`},
		{apperr.Forbidden("managing API keys requires an admin key"), 403, apperr.CodeForbidden, "", `{"error":"managing API keys requires an admin key"}`},
		{apperr.ErrNotFound, 404, apperr.CodeNotFound, "", `{"error":"not found"}`},
		{fmt.Errorf("get cmp_1: %w", apperr.ErrNotFound), 404, apperr.CodeNotFound, "", `{"error":"not found"}`},
		{apperr.Conflict("only a failed run can be retried"), 409, apperr.CodeConflict, "", `{"error":"only a failed run can be retried"}`},
		{apperr.ErrConflict, 409, apperr.CodeConflict, "", `{"error":"conflict"}`},
		{apperr.ConcurrentWrite("try again"), 409, apperr.CodeConcurrentWrite, "", `{"error":"try again"}`},
		{apperr.Referenced("industry ind_1 is referenced"), 409, apperr.CodeReferenced, "", `{"error":"industry ind_1 is referenced"}`},
		{uniqueViolation{}, 409, apperr.CodeUniqueViolation, "externalId", `{"error":"externalId \"crm-7\" is already used"}`},
		{apperr.PreconditionFailed("the record has changed"), 412, apperr.CodePreconditionFailed, "", `{"error":"the record has changed"}`},
		{apperr.TooLarge("request body exceeds the 1 MiB limit"), 413, apperr.CodePayloadTooLarge, "", `{"error":"request body exceeds the 1 MiB limit"}`},
		{apperr.ErrTooLarge, 413, apperr.CodePayloadTooLarge, "", `{"error":"too large"}`},
		{apperr.RecordTooLarge("the record exceeds the 400 KB item size limit of the table"), 413, apperr.CodeRecordTooLarge, "",
			`{"error":"the record exceeds the 400 KB item size limit of the table"}`},
		{errors.New("boom"), 500, apperr.CodeInternal, "", `{"error":"internal error"}`},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			w := httptest.NewRecorder()
			httpapi.Error(w, r, tc.err)
			got := answered(w)
			if got.status != tc.status || got.code != string(tc.code) || got.param != tc.param || got.body != tc.body || got.params > 1 {
				t.Errorf("answered %d %q %q %s, want %d %q %q %s", got.status, got.code, got.param, got.body, tc.status, tc.code, tc.param, tc.body)
			}
		})
	}
	w := httptest.NewRecorder()
	httpapi.Error(w, r, apperr.Unavailable(errors.New("timeout"), "storage unavailable: timeout"))
	if got := answered(w); got.status != 503 || got.code != "unavailable" || got.header.Get("Retry-After") == "" ||
		strings.Contains(got.body, "timeout") {
		t.Errorf("unavailable answered %d %q %v %s", got.status, got.code, got.header, got.body)
	}
}

// uniqueViolation is a coded error of another package (a store.UniqueError).
type uniqueViolation struct{}

func (uniqueViolation) Error() string          { return `externalId "crm-7" is already used` }
func (uniqueViolation) Unwrap() error          { return apperr.ErrConflict }
func (uniqueViolation) ErrorCode() apperr.Code { return apperr.CodeUniqueViolation }
func (uniqueViolation) ErrorParam() string     { return "externalId" }

func TestEveryWriterOfAnErrorSetsACodeOfItsStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		write  func(w http.ResponseWriter)
		status int
		code   apperr.Code
	}{
		{"Refuse", func(w http.ResponseWriter) {
			httpapi.Refuse(w, apperr.CodeNoSuchEndpoint, "", "no such endpoint: GET /x")
		}, 404, apperr.CodeNoSuchEndpoint},
		{"ErrorBody 404", func(w http.ResponseWriter) { httpapi.ErrorBody(w, 404, "not found") }, 404, apperr.CodeNotFound},
		{"ErrorBody 400", func(w http.ResponseWriter) { httpapi.ErrorBody(w, 400, "bad") }, 400, apperr.CodeInvalidRequest},
		{"ErrorBody 415", func(w http.ResponseWriter) { httpapi.ErrorBody(w, 415, "json only") }, 415, apperr.CodeUnsupportedMediaType},
		{"ErrorBody 500", func(w http.ResponseWriter) { httpapi.ErrorBody(w, 500, "internal error") }, 500, apperr.CodeInternal},
		{"a rate limit's refusal", func(w http.ResponseWriter) {
			httpapi.RateLimit(w, ratelimit.Decision{Limit: 1, Scope: ratelimit.ScopeKey}, "this API key")
		}, 429, apperr.CodeRateLimited},
		{"a body that cannot be encoded", func(w http.ResponseWriter) {
			w.Header().Set("X-Error-Param", "stale")
			httpapi.JSON(w, 200, map[string]any{"n": math.NaN()})
		}, 500, apperr.CodeInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			tc.write(w)
			got := answered(w)
			if got.status != tc.status || got.code != string(tc.code) || got.params != 0 {
				t.Errorf("answered %d %q (X-Error-Param %q), want %d %q", got.status, got.code, got.param, tc.status, tc.code)
			}
		})
	}
	// A success carries no code.
	w := httptest.NewRecorder()
	httpapi.Data(w, 200, map[string]string{"id": "x"})
	if got := answered(w); got.code != "" || got.params != 0 {
		t.Errorf("a success carries %v", got.header)
	}
}

func TestTheErrorParamIsAValidHeaderValueOrNotSent(t *testing.T) {
	long := strings.Repeat("a", httpapi.MaxErrorParam)
	for _, tc := range []struct{ param, want string }{
		{"location.city", "location.city"},
		{"points[1].value", "points[1].value"},
		{"custom.café", "custom.caf%C3%A9"},
		{"custom.100%", "custom.100%25"},
		{"custom.a\r\nX-Injected: 1", "custom.a%0D%0AX-Injected: 1"},
		{"custom.\x7f", "custom.%7F"},
		{long, long},
		{long + "a", ""},
		{strings.Repeat("é", httpapi.MaxErrorParam/6+1), ""}, // over the limit once encoded
		{"", ""},
	} {
		h := http.Header{}
		h.Set("X-Error-Param", "an earlier one")
		httpapi.SetErrorCode(h, apperr.CodeInvalidBody, tc.param)
		if got := h.Values("X-Error-Param"); tc.want == "" && len(got) != 0 || tc.want != "" && (len(got) != 1 || got[0] != tc.want) {
			t.Errorf("param %q: X-Error-Param %q, want %q", tc.param, got, tc.want)
		}
		if got := h.Get("X-Error-Code"); got != "invalid_body" {
			t.Errorf("X-Error-Code %q", got)
		}
	}
}
