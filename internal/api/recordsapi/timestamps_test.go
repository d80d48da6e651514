package recordsapi_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

var apiTimestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// checkTimestamps fails for every field named "...At" under v that is a
// string not in the API's one timestamp format; it returns how many it saw.
func checkTimestamps(t *testing.T, where string, v any) int {
	t.Helper()
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && strings.HasSuffix(k, "At") {
				n++
				if !apiTimestamp.MatchString(s) {
					t.Errorf("%s.%s = %q, want RFC 3339 UTC with exactly three fractional digits", where, k, s)
				}
				continue
			}
			n += checkTimestamps(t, where+"."+k, e)
		}
	case []any:
		for _, e := range v {
			n += checkTimestamps(t, where+"[]", e)
		}
	}
	return n
}

func TestEveryTimestampTheAPIReturnsHasExactlyThreeFractionalDigitsInUTC(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	company := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Acme"}).Want(t, 201)
	id := apitest.IDOf(t, company.Object(t))
	wf := c.Do("POST", "/v1/workflows", map[string]any{"name": "W", "steps": []any{apitest.Step("s", "set", map[string]any{"x": 1})}}).Want(t, 201)
	run := apitest.AwaitRun(t, c, apitest.IDOf(t, c.Do("POST", "/v1/workflows/"+apitest.IDOf(t, wf.Object(t))+"/runs", map[string]any{}).Want(t, 202).Object(t)))

	seen := 0
	for _, r := range []*apitest.Response{
		company,
		c.Do("GET", "/v1/companies/"+id, nil).Want(t, 200),
		c.Do("PUT", "/v1/companies/"+id, map[string]any{"sector": "X"}).Want(t, 200),
		c.Do("GET", "/v1/companies", nil).Want(t, 200),
		wf,
		c.Do("GET", "/v1/workflows", nil).Want(t, 200),
		c.Do("GET", "/v1/workflow-runs", nil).Want(t, 200),
		c.Do("GET", "/v1/keys", nil).Want(t, 200),
	} {
		seen += checkTimestamps(t, "data", r.Data(t))
	}
	seen += checkTimestamps(t, "run", run)
	// createdAt/updatedAt of companies (4 responses, 1 record each but the
	// list) and workflows, run times, key times: dozens in all.
	if seen < 20 {
		t.Fatalf("saw only %d timestamps", seen)
	}
	keys := c.Do("GET", "/v1/keys", nil).Want(t, 200).List(t)
	if len(keys) == 0 || keys[0]["lastUsedAt"] == nil {
		t.Fatalf("the key in use shows no lastUsedAt: %v", keys)
	}
}
