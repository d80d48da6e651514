package apitest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/api"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/apitest/wholeservice"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) {
	apitest.Serve(wholeservice.Service)
	testenv.Main(m)
}

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

// BenchmarkGetCompany compares an authenticated GET of one company with
// the bare aws-sdk-go-v2 GetItem of the same item through the same client,
// in one run, so the service's overhead reads as a ratio of ns/op,
// allocs/op and B/op.
func BenchmarkGetCompany(b *testing.B) {
	s := seed(b, 100)
	id := s.ids[50]
	path := "/v1/companies/" + id
	s.warm(b, path)
	b.Run("service", func(b *testing.B) {
		s.calls.Reset()
		b.ReportAllocs()
		for b.Loop() {
			s.client.Do("GET", path, nil).Want(b, http.StatusOK)
		}
		b.ReportMetric(float64(s.calls.Count())/float64(b.N), "ddbcalls/op")
	})
	b.Run("handler", func(b *testing.B) {
		// The handler stack alone, without the HTTP client and server:
		// what serving the request adds to its GetItem.
		h := api.Handler(s.env.Deps, lambdas.Companies)
		s.calls.Reset()
		b.ReportAllocs()
		for b.Loop() {
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("X-Service-Client-Id", s.client.ClientID)
			req.Header.Set("X-Service-Api-Key", s.client.Secret)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("handler: %d %s", rec.Code, rec.Body)
			}
		}
		b.ReportMetric(float64(s.calls.Count())/float64(b.N), "ddbcalls/op")
	})
	b.Run("sdk-getitem", func(b *testing.B) {
		k := store.RecordKey(s.client.Org, store.TypeCompany, id)
		in := &dynamodb.GetItemInput{TableName: aws.String(s.env.Store.Table), Key: map[string]types.AttributeValue{
			store.AttrPK: &types.AttributeValueMemberS{Value: k.PK}, store.AttrSK: &types.AttributeValueMemberS{Value: k.SK},
		}}
		b.ReportAllocs()
		for b.Loop() {
			out, err := s.env.Store.DB.GetItem(b.Context(), in)
			if err != nil || out.Item == nil {
				b.Fatalf("GetItem: %v (item %v)", err, out)
			}
		}
	})
}

// BenchmarkListCompanies100 compares listing 100 companies with the bare
// SDK Query of the same 100 items.
func BenchmarkListCompanies100(b *testing.B) {
	s := seed(b, 100)
	const path = "/v1/companies?limit=100"
	s.warm(b, path)
	b.Run("service", func(b *testing.B) {
		s.calls.Reset()
		b.ReportAllocs()
		for b.Loop() {
			if got := len(s.client.Do("GET", path, nil).Want(b, http.StatusOK).List(b)); got != 100 {
				b.Fatalf("listed %d companies, want 100", got)
			}
		}
		b.ReportMetric(float64(s.calls.Count())/float64(b.N), "ddbcalls/op")
	})
	b.Run("sdk-query", func(b *testing.B) {
		in := &dynamodb.QueryInput{
			TableName:                aws.String(s.env.Store.Table),
			KeyConditionExpression:   aws.String("#pk = :pk"),
			ExpressionAttributeNames: map[string]string{"#pk": store.AttrPK},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": &types.AttributeValueMemberS{Value: store.OrgPartition(s.client.Org, store.TypeCompany)},
			},
			Limit: aws.Int32(100),
		}
		b.ReportAllocs()
		for b.Loop() {
			out, err := s.env.Store.DB.Query(b.Context(), in)
			if err != nil || len(out.Items) != 100 {
				b.Fatalf("Query: %v (%d items)", err, len(out.Items))
			}
		}
	})
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
