package api_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
)

// The rate limit tests are keysapi's but for this one, which stays with the
// whole service: it also asks for the OpenAPI document (/v1/openapi.json),
// which only the whole service's handler serves.

func TestEveryAuthenticatedAnswerCarriesTheKeysRateLimitHeaders(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	r := c.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK)
	if r.Header.Get("X-RateLimit-Limit") != strconv.FormatInt(ratelimit.Defaults.KeyPerMinute, 10) {
		t.Errorf("X-RateLimit-Limit %q, want the default %d", r.Header.Get("X-RateLimit-Limit"), ratelimit.Defaults.KeyPerMinute)
	}
	remaining, _ := strconv.Atoi(r.Header.Get("X-RateLimit-Remaining"))
	reset, _ := strconv.Atoi(r.Header.Get("X-RateLimit-Reset"))
	if remaining < 1 || remaining >= int(ratelimit.Defaults.KeyPerMinute) || reset < 1 || reset > 60 {
		t.Errorf("remaining %q, reset %q", r.Header.Get("X-RateLimit-Remaining"), r.Header.Get("X-RateLimit-Reset"))
	}
	// Errors after authentication count too; the document needs no key.
	c.Do("GET", "/v1/companies/cmp_01nosuchcompany0000000000", nil).Want(t, http.StatusNotFound)
	if r := e.Anonymous(t).Do("GET", "/v1/openapi.json", nil); r.Header.Get("X-RateLimit-Limit") != "" {
		t.Errorf("the public document is counted against a key")
	}
}
