package apitest_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apitest"
	"github.com/sourcebase/sourcebase/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// seeded is a running service with one organization holding n companies,
// whose DynamoDB calls are counted.
type seeded struct {
	env    *apitest.Env
	client *apitest.Client
	calls  *testenv.CountingTransport
	ids    []string
}

func seed(tb testing.TB, n int) *seeded {
	tb.Helper()
	calls := &testenv.CountingTransport{}
	env := apitest.NewWith(tb, apitest.Options{Transport: calls})
	client := env.Org(tb)
	s := &seeded{env: env, client: client, calls: calls}
	for i := range n {
		c := client.Do("POST", "/v1/companies", map[string]any{
			"canonicalName": fmt.Sprintf("Company %03d", i),
			"website":       fmt.Sprintf("https://company%03d.example", i),
			"companyType":   "operating",
			"tags":          []string{"seed"},
		}).Want(tb, http.StatusCreated).Object(tb)
		s.ids = append(s.ids, c["id"].(string))
	}
	return s
}

// warm makes one request so that the key is verified and cached, then
// zeroes the call count.
func (s *seeded) warm(tb testing.TB, path string) {
	tb.Helper()
	s.client.Do("GET", path, nil).Want(tb, http.StatusOK)
	s.calls.Reset()
}

func BenchmarkGetCompany(b *testing.B) {
	s := seed(b, 100)
	path := "/v1/companies/" + s.ids[50]
	s.warm(b, path)
	for b.Loop() {
		s.client.Do("GET", path, nil).Want(b, http.StatusOK)
	}
	b.ReportMetric(float64(s.calls.Count())/float64(b.N), "ddbcalls/op")
}

func BenchmarkListCompanies100(b *testing.B) {
	s := seed(b, 100)
	const path = "/v1/companies?limit=100"
	s.warm(b, path)
	for b.Loop() {
		if got := len(s.client.Do("GET", path, nil).Want(b, http.StatusOK).List(b)); got != 100 {
			b.Fatalf("listed %d companies, want 100", got)
		}
	}
	b.ReportMetric(float64(s.calls.Count())/float64(b.N), "ddbcalls/op")
}

func TestWarmAuthenticatedGetCostsOneDynamoDBRead(t *testing.T) {
	t.Parallel()
	s := seed(t, 100)
	tests := []struct {
		name string
		path string
		want func(t *testing.T, r *apitest.Response)
	}{
		{"get one company", "/v1/companies/" + s.ids[7], func(t *testing.T, r *apitest.Response) {
			if id := r.Object(t)["id"]; id != s.ids[7] {
				t.Errorf("got company %v, want %s", id, s.ids[7])
			}
		}},
		{"list 100 companies", "/v1/companies?limit=100", func(t *testing.T, r *apitest.Response) {
			if n := len(r.List(t)); n != 100 {
				t.Errorf("listed %d companies, want 100", n)
			}
		}},
	}
	s.warm(t, "/v1/companies/"+s.ids[0])
	for _, tt := range tests {
		// Sequential on purpose: the subtests share one call counter.
		t.Run(tt.name, func(t *testing.T) {
			s.calls.Reset()
			r := s.client.Do("GET", tt.path, nil).Want(t, http.StatusOK)
			if n := s.calls.Count(); n != 1 {
				t.Errorf("GET %s with a cached key made %d DynamoDB calls, want exactly 1", tt.path, n)
			}
			tt.want(t, r)
		})
	}
}
