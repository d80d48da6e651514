// Package testenv gives tests a real DynamoDB API server: one DynamoDB Local
// process per test binary, started on first use, or the one that the run
// shares (dynamolocal.EnvShared, set by make test), and a fresh table under
// an access key no running test holds, so tests run in parallel and leave
// nothing behind (a finished test's tables are deleted and its key reused).
//
// A package using it calls Main from TestMain.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/dev/dynamolocal"
	"github.com/sourcebase/sourcebase/internal/dev/testinputs"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

var (
	inMain   bool
	own      bool
	once     sync.Once
	server   *dynamolocal.Server
	shared   string // the endpoint of the run's shared server, when used
	startErr error
	// managed is the endpoint Endpoint returns, once it has returned one.
	managed atomic.Pointer[string]
)

// OwnServer makes the package start a DynamoDB Local of its own even when
// the run shares one: call it from TestMain before Main. For a package that
// keeps a server busy for minutes. DynamoDB Local serves one call at a time
// (one lock over its storage), so such a package on the shared server would
// hold every other package's calls behind its own.
func OwnServer() { own = true }

// Main runs the package's tests and stops the server afterwards.
func Main(m *testing.M) { MainThen(m, nil) }

// keptLog receives every record of the package's tests, and checkLog
// reads it once they are over (KeepLog).
var (
	keptLog  slog.Handler
	checkLog func() error
)

// KeepLog has Main send every record logged during the tests to h (the
// service's own JSON lines, for a check of the whole run's log), besides
// the warnings and errors it shows on stderr, and call check once the tests
// are over: an error it returns fails the run. Call it before Main.
func KeepLog(h slog.Handler, check func() error) { keptLog, checkLog = h, check }

// tee sends every record to all, and warnings and errors to warn too.
type tee struct{ warn, all slog.Handler }

func (t tee) Enabled(context.Context, slog.Level) bool { return true }

func (t tee) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		t.warn.Handle(ctx, r.Clone())
	}
	return t.all.Handle(ctx, r)
}

func (t tee) WithAttrs(as []slog.Attr) slog.Handler {
	return tee{t.warn.WithAttrs(as), t.all.WithAttrs(as)}
}

func (t tee) WithGroup(name string) slog.Handler {
	return tee{t.warn.WithGroup(name), t.all.WithGroup(name)}
}

// MainThen is Main, calling after (when non-nil) once the tests are over:
// for a package that prepares more than tables, such as built binaries to
// remove.
func MainThen(m *testing.M, after func()) {
	inMain = true
	// One access log line per request would bury failure output and
	// benchmark results; warnings and errors still show.
	var h slog.Handler = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})
	if keptLog != nil {
		h = tee{warn: h, all: keptLog}
	}
	slog.SetDefault(slog.New(h))
	// No SDK in a test may look for real credentials or instance metadata.
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	code := m.Run()
	if checkLog != nil {
		if err := checkLog(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: the run's log: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	if after != nil {
		after()
	}
	atExit.Lock()
	for i := len(atExit.fns) - 1; i >= 0; i-- {
		atExit.fns[i]()
	}
	atExit.Unlock()
	if server != nil {
		server.Stop()
	}
	os.Exit(code)
}

// atExit are what AtExit registered.
var atExit struct {
	sync.Mutex
	fns []func()
}

// AtExit registers fn to run once the package's tests are over (before
// DynamoDB Local stops; the last registered first): for what a test binary
// starts once, such as a helper process.
func AtExit(fn func()) {
	atExit.Lock()
	defer atExit.Unlock()
	atExit.fns = append(atExit.fns, fn)
}

// Endpoint returns the URL of the running DynamoDB Local, starting it if needed.
func Endpoint(tb testing.TB) string {
	tb.Helper()
	if !inMain {
		tb.Fatal("testenv: call testenv.Main(m) from the package's TestMain")
	}
	once.Do(func() {
		// DynamoDB Local is an npm package: a new version in
		// package-lock.json runs every test that stores again.
		testinputs.Files("package-lock.json")
		// Read past the test cache (os.Getenv would make the variable
		// part of a cached result's key): which server answers does not
		// change a result, and each run's shared server has a new port,
		// so an unchanged package of make test-fast would never answer
		// from the cache.
		if ep, _ := syscall.Getenv(dynamolocal.EnvShared); ep != "" && !own {
			shared = ep
			managed.Store(&shared)
			return
		}
		server, startErr = dynamolocal.Start(context.Background(), dynamolocal.Options{})
		if startErr == nil {
			managed.Store(&server.Endpoint)
		}
	})
	if startErr != nil {
		tb.Fatalf("testenv: start DynamoDB Local: %v", startErr)
	}
	return *managed.Load()
}

// Client returns a DynamoDB client with an access key of its own: DynamoDB
// Local keeps a separate set of tables per access key, so what one test
// creates no other test sees (the key goes to a later test only once every
// table under it is deleted: ClientAt). The client's HTTP requests go through
// transport when it is non-nil (to count calls, say). It has the service's
// own client options (deadlines, retries, error classification).
func Client(tb testing.TB, transport http.RoundTripper) *dynamodb.Client {
	tb.Helper()
	return ClientAt(tb, Endpoint(tb), transport, store.TimeoutsFor(StoreTimeout()))
}

// StoreTimeout is the deadline of a store call in tests: twice the
// service's default, times Scale, so that a healthy call on a busy
// machine does not answer 503. (Tests of deadlines set their own.)
func StoreTimeout() time.Duration { return Scaled(2 * store.DefaultCallTimeout) }

// ClientAt is Client for the DynamoDB API at endpoint with timeouts t: for
// tests that run (and pause) a server of their own or shorten deadlines.
//
// On the package's DynamoDB Local (Endpoint) the access key comes from a
// pool: when the test ends, every table under it is deleted and the key
// goes back for a later test. DynamoDB Local keeps a database per access
// key, each with three background jobs that wake every second and read
// all of its tables' schemas through the one lock every call takes; with
// a key per test, the hundreds of databases of internal/api's run took 15
// of the server's 88 s of CPU from the tests' calls (docs/decisions.md).
func ClientAt(tb testing.TB, endpoint string, transport http.RoundTripper, t store.Timeouts) *dynamodb.Client {
	tb.Helper()
	key := "t" + ids.Random(10)
	if ep := managed.Load(); ep != nil && endpoint == *ep {
		key = AccessKey(tb)
	}
	hc := &http.Client{}
	if transport != nil {
		hc.Transport = transport
	}
	return newClient(endpoint, key, hc, t)
}

// ClientThrough is Client for a proxy in front of the package's DynamoDB
// Local (Endpoint) listening at endpoint, such as a partitionsim.Sim: its
// access key is a pooled one, so the tables made through the proxy are
// deleted when the test ends.
func ClientThrough(tb testing.TB, endpoint string) *dynamodb.Client {
	tb.Helper()
	return newClient(endpoint, AccessKey(tb), &http.Client{}, store.TimeoutsFor(StoreTimeout()))
}

// AccessKey returns an access key of the package's DynamoDB Local
// (Endpoint) that no running test holds, for a program the test runs
// against it: when the test ends, every table under the key is deleted and
// the key goes back to the pool.
func AccessKey(tb testing.TB) string {
	tb.Helper()
	endpoint := Endpoint(tb)
	key := keys.take()
	tb.Cleanup(func() { keys.release(endpoint, key) })
	return key
}

func newClient(endpoint, key string, hc *http.Client, t store.Timeouts) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(key, "secret", ""),
		HTTPClient:   hc,
	}, store.ClientOptions(t))
}

// keys is the pool of access keys whose databases hold no table.
var keys keyPool

type keyPool struct {
	mu   sync.Mutex
	free []string
}

func (p *keyPool) take() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		key := p.free[n-1]
		p.free = p.free[:n-1]
		return key
	}
	return "t" + ids.Random(10)
}

// release deletes every table under key and returns the key to the pool;
// a key whose tables could not all be deleted is dropped instead, so no
// later test sees what an earlier one left. It uses a client of its own:
// the test's may inject faults or have short deadlines.
func (p *keyPool) release(endpoint, key string) {
	db := newClient(endpoint, key, &http.Client{}, store.TimeoutsFor(StoreTimeout()))
	ctx, cancel := context.WithTimeout(context.Background(), Scaled(30*time.Second))
	defer cancel()
	var names []string
	pages := dynamodb.NewListTablesPaginator(db, &dynamodb.ListTablesInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return
		}
		names = append(names, page.TableNames...)
	}
	for _, name := range names {
		_, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		var missing *types.ResourceNotFoundException
		if err != nil && !errors.As(err, &missing) {
			return
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, key)
}

// Store returns a store over a freshly created table that no other test sees.
func Store(tb testing.TB) *store.Store {
	tb.Helper()
	return StoreWith(tb, nil)
}

// StoreWith is Store with the client's requests going through transport.
func StoreWith(tb testing.TB, transport http.RoundTripper) *store.Store {
	tb.Helper()
	return StoreOn(tb, Client(tb, transport))
}

// StoreOn creates a fresh table with db and returns a store over it. The
// table's name is new too: on a pooled access key (ClientAt), a call that
// an earlier test left running finds no table of that name rather than
// this test's.
func StoreOn(tb testing.TB, db *dynamodb.Client) *store.Store {
	tb.Helper()
	name := "sourcebase-test-" + ids.Random(8)
	if _, err := store.CreateTable(context.Background(), db, name); err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	return store.New(db, name)
}

// DamageDoc overwrites the stored JSON of the item at key with JSON that
// does not parse, as a damaged record would be found.
func DamageDoc(tb testing.TB, st *store.Store, key store.Key) {
	tb.Helper()
	_, err := st.DB.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(st.Table),
		Key: map[string]types.AttributeValue{
			store.AttrPK: &types.AttributeValueMemberS{Value: key.PK},
			store.AttrSK: &types.AttributeValueMemberS{Value: key.SK},
		},
		UpdateExpression:          aws.String("SET #doc = :bad"),
		ConditionExpression:       aws.String("attribute_exists(#doc)"),
		ExpressionAttributeNames:  map[string]string{"#doc": store.AttrDoc},
		ExpressionAttributeValues: map[string]types.AttributeValue{":bad": &types.AttributeValueMemberS{Value: `{"steps":`}},
	})
	if err != nil {
		tb.Fatalf("testenv: damage %v: %v", key, err)
	}
}

// PutRaw writes an item straight into st's table, bypassing the store's
// codec: string attributes as given and version 1, as a damaged or older
// record would be found there.
func PutRaw(tb testing.TB, st *store.Store, attrs map[string]string) {
	tb.Helper()
	item := map[string]types.AttributeValue{store.AttrVersion: &types.AttributeValueMemberN{Value: "1"}}
	for k, v := range attrs {
		item[k] = &types.AttributeValueMemberS{Value: v}
	}
	if _, err := st.DB.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(st.Table), Item: item}); err != nil {
		tb.Fatal(err)
	}
}

// CountingTransport counts the DynamoDB API calls a client makes: the
// first attempt of each, never the SDK's retries of it (on a busy machine
// a call may time out and be retried; it is still one call).
type CountingTransport struct {
	mu   sync.Mutex
	n    int
	byOp map[string]int // by operation: "Query", "GetItem", ...
}

// RoundTrip counts a first attempt and forwards the request.
func (c *CountingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if FirstAttempt(r) {
		_, op, _ := strings.Cut(r.Header.Get("X-Amz-Target"), ".")
		c.mu.Lock()
		c.n++
		if c.byOp == nil {
			c.byOp = map[string]int{}
		}
		c.byOp[op]++
		c.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(r)
}

// CountOf returns the number of requests of one operation ("Query") so
// far: for a test of one call's paging, which a cache fill or a rate
// limit lease that falls due meanwhile must not count against.
func (c *CountingTransport) CountOf(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byOp[op]
}

// FirstAttempt reports whether r is the SDK's first attempt of a call
// rather than a retry: the SDK numbers attempts in its amz-sdk-request
// header ("attempt=1; max=3"). A request without it counts as a first.
func FirstAttempt(r *http.Request) bool {
	h := r.Header.Get("Amz-Sdk-Request")
	return h == "" || strings.HasPrefix(h, "attempt=1;") || h == "attempt=1"
}

// Count returns the number of requests so far.
func (c *CountingTransport) Count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// Reset sets the count to zero.
func (c *CountingTransport) Reset() {
	c.mu.Lock()
	c.n, c.byOp = 0, nil
	c.mu.Unlock()
}

// ScanText is every string and binary attribute of every item of st's
// table, as "name=value" text: for tests that look for what must never be
// stored (a secret in clear).
func ScanText(tb testing.TB, st *store.Store) []string {
	tb.Helper()
	var out []string
	var start map[string]types.AttributeValue
	for {
		res, err := st.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(st.Table), ExclusiveStartKey: start})
		if err != nil {
			tb.Fatal(err)
		}
		for _, item := range res.Items {
			for name, v := range item {
				switch v := v.(type) {
				case *types.AttributeValueMemberS:
					out = append(out, name+"="+v.Value)
				case *types.AttributeValueMemberB:
					out = append(out, name+"="+string(v.Value))
				}
			}
		}
		if start = res.LastEvaluatedKey; len(start) == 0 {
			return out
		}
	}
}

// Unanswering returns the URL of an address that never answers HTTP: a
// listener on loopback, held until tb ends, that closes every connection
// it accepts. A closed server's URL would do only until the kernel gives
// its port to the next server that asks, which may be one of the test's
// own (a test then reached a server it meant to be unreachable).
func Unanswering(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testenv: listen: %v", err)
	}
	tb.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return "http://" + l.Addr().String()
}
