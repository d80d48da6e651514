package api_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/dynamolocal"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

// fault is a transport that, while armed, replaces DynamoDB's answers.
type fault struct {
	armed atomic.Bool
	// answer serves a request while armed.
	answer func(r *http.Request) (*http.Response, error)
}

func (f *fault) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.armed.Load() {
		return f.answer(r)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// faultEnv is a service whose table calls go through a fault transport.
func faultEnv(t *testing.T, noCache bool) (*apitest.Env, *fault) {
	t.Helper()
	f := &fault{}
	st := testenv.StoreOn(t, testenv.ClientAt(t, testenv.Endpoint(t), f, apitest.FaultTimeouts()))
	return apitest.NewWith(t, apitest.Options{Store: st, NoCache: noCache}), f
}

func TestAFrozenTableAnswers503WithRetryAfterInsteadOfHanging(t *testing.T) {
	testenv.Long(t, "waits out storage timeouts")
	t.Parallel()
	e, f := faultEnv(t, false)
	c := e.Org(t)
	c.Do("GET", "/v1/companies", nil).Want(t, 200) // the key is now cached
	f.answer = apitest.Frozen
	f.armed.Store(true)

	apitest.WantUnavailable(t, apitest.Bounded(t, c, "GET", "/v1/companies", nil))
	apitest.WantUnavailable(t, apitest.Bounded(t, c, "POST", "/v1/companies", map[string]any{"canonicalName": "Acme", "companyType": "operating"}))
	apitest.WantUnavailable(t, apitest.Bounded(t, c, "GET", "/healthz", nil))

	f.armed.Store(false)
	apitest.Bounded(t, c, "GET", "/healthz", nil).Want(t, 200)
	apitest.Bounded(t, c, "GET", "/v1/companies", nil).Want(t, 200)
}

func TestCredentialsThatCannotBeVerifiedBecauseTheTableIsDownAnswer503(t *testing.T) {
	testenv.Long(t, "waits out storage timeouts")
	t.Parallel()
	e, f := faultEnv(t, true) // no key cache: every request looks its key up
	c := e.Org(t)
	f.answer = apitest.Frozen
	f.armed.Store(true)
	apitest.WantUnavailable(t, apitest.Bounded(t, c, "GET", "/v1/companies", nil))
	// A wrong secret cannot be told from a right one either: still 503, never 200.
	wrong := e.Anonymous(t)
	wrong.ClientID, wrong.Secret = c.ClientID, "not-the-secret"
	apitest.WantUnavailable(t, apitest.Bounded(t, wrong, "GET", "/v1/companies", nil))
}

func TestThrottlingAndServerErrorsThatOutlastTheRetriesAnswer503(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		answer func(*http.Request) (*http.Response, error)
	}{
		{"throttling", apitest.DynamoError(400, "ThrottlingException")},
		{"provisioned throughput exceeded", apitest.DynamoError(400, "ProvisionedThroughputExceededException")},
		{"internal server error", apitest.DynamoError(500, "InternalServerError")},
		{"service unavailable", apitest.DynamoError(503, "ServiceUnavailable")},
		{"connection refused", func(r *http.Request) (*http.Response, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, f := faultEnv(t, false)
			c := e.Org(t)
			c.Do("GET", "/v1/companies", nil).Want(t, 200)
			// The list's Query is counted: a rate-limit lease or a cache
			// fill that falls due meanwhile makes calls of its own.
			var calls atomic.Int32
			f.answer = func(r *http.Request) (*http.Response, error) {
				if r.Header.Get("X-Amz-Target") == "DynamoDB_20120810.Query" {
					calls.Add(1)
				}
				return tc.answer(r)
			}
			f.armed.Store(true)
			apitest.WantUnavailable(t, apitest.Bounded(t, c, "GET", "/v1/companies", nil))
			// One layer retries: the SDK's, with 3 attempts in all.
			if n := calls.Load(); n != 3 {
				t.Errorf("%d attempts of the list's Query reached the table, want 3 (one retry layer)", n)
			}
		})
	}
}

func TestAPausedDynamoDBLocalAnswers503AndTheServiceRecoversWhenItResumes(t *testing.T) {
	testenv.Long(t, "pauses DynamoDB Local")
	t.Parallel()
	ddb, err := dynamolocal.Start(context.Background(), dynamolocal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ddb.Stop)
	st := testenv.StoreOn(t, testenv.ClientAt(t, ddb.Endpoint, nil, apitest.FaultTimeouts()))
	e := apitest.NewWith(t, apitest.Options{Store: st})
	c := e.Org(t)
	apitest.CreateCompany(t, c, map[string]any{"canonicalName": "Acme", "companyType": "operating"})

	if err := ddb.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ddb.Signal(syscall.SIGCONT) })
	apitest.WantUnavailable(t, apitest.Bounded(t, c, "GET", "/v1/companies", nil))
	apitest.WantUnavailable(t, apitest.Bounded(t, c, "GET", "/healthz", nil))

	if err := ddb.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Once the process runs again the table answers again.
	deadline := time.Now().Add(testenv.Scaled(30 * time.Second))
	for {
		r := apitest.Bounded(t, c, "GET", "/v1/companies", nil)
		if r.Status == 200 {
			if n := len(r.List(t)); n != 1 {
				t.Errorf("%d companies after the table resumed, want 1", n)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the table answers %d %s 20s after it resumed", r.Status, r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAWriteWhoseTransactionIsCancelledForThrottlingAnswers503 holds a
// transaction DynamoDB cancels because it throttled one of its items (a
// table, an index or a partition over its throughput: HTTP 400
// TransactionCanceledException with a ThrottlingError reason) to what any
// throttle answers: retried by the SDK, then 503 with Retry-After, never a
// 500 — and nothing written, so the same request succeeds afterwards.
func TestAWriteWhoseTransactionIsCancelledForThrottlingAnswers503(t *testing.T) {
	t.Parallel()
	e, f := faultEnv(t, false)
	c := e.Org(t)
	c.Do("GET", "/v1/companies", nil).Want(t, 200)
	var calls atomic.Int32
	f.answer = func(r *http.Request) (*http.Response, error) {
		if r.Header.Get("X-Amz-Target") != "DynamoDB_20120810.TransactWriteItems" {
			return http.DefaultTransport.RoundTrip(r)
		}
		calls.Add(1)
		body := `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException",` +
			`"Message":"Transaction cancelled, please refer cancellation reasons for specific reasons [ThrottlingError, None]",` +
			`"CancellationReasons":[{"Code":"ThrottlingError","Message":"Throughput exceeds the current capacity for one or more global secondary indexes."},{"Code":"None"}]}`
		return &http.Response{StatusCode: 400, Status: "400 Bad Request", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}}, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
	company := map[string]any{"canonicalName": "Acme", "companyType": "operating", "externalId": "ext-throttled"}
	f.armed.Store(true)
	apitest.WantUnavailable(t, apitest.Bounded(t, c, "POST", "/v1/companies", company))
	if n := calls.Load(); n != 3 {
		t.Errorf("%d attempts of the create's transaction, want 3 (the SDK's retries)", n)
	}
	f.armed.Store(false)
	created := c.Do("POST", "/v1/companies", company).Want(t, http.StatusCreated).Object(t)
	if list := apitest.Companies(t, c); len(list) != 1 || list[0]["id"] != created["id"] {
		t.Errorf("companies after a throttled create and a good one: %s", apitest.JSONOf(list))
	}
}
