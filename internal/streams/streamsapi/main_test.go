package streamsapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/streams"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// wait is the longest a test waits for the Poller to catch up.
func wait() time.Duration { return testenv.Scaled(30 * time.Second) }

// pollerFor returns a Poller of the tables db sees. DynamoDB Local keeps
// a set of tables per access key, so its Streams client has db's region
// and credentials, and the endpoint serving both APIs, as the dev server's.
func pollerFor(tb testing.TB, db *dynamodb.Client) *Poller {
	tb.Helper()
	return &Poller{Streams: ClientOf(db), DB: db}
}

// start runs p until the test ends, then checks Run stopped as it should.
func start(t *testing.T, p *Poller) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v, want context.Canceled", err)
		}
	})
}

// caught waits until p has handled every change written so far.
func caught(t *testing.T, p *Poller) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait())
	defer cancel()
	if err := p.Caught(ctx); err != nil {
		t.Fatalf("Caught: %v", err)
	}
}

// collector is a Handler that keeps every record it is handed.
type collector struct {
	mu      sync.Mutex
	records []streams.Record
}

func (c *collector) handle(_ context.Context, records []streams.Record) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, records...)
	return len(records), nil
}

func (c *collector) all() []streams.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.records)
}

// logBuffer is a log destination safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// logger logs every level to a buffer the test reads.
func logger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// Items of the tests: pk is the item's name, sk is fixed.
func key(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"sk": &types.AttributeValueMemberS{Value: "item"},
	}
}

func putItem(t *testing.T, db *dynamodb.Client, table string, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatal(err)
	}
}

// put writes item pk with attribute v.
func put(t *testing.T, db *dynamodb.Client, table, pk string, v int) {
	t.Helper()
	item := key(pk)
	item["v"] = &types.AttributeValueMemberN{Value: fmt.Sprint(v)}
	putItem(t, db, table, item)
}

// set updates attribute v of item pk.
func set(t *testing.T, db *dynamodb.Client, table, pk string, v int) {
	t.Helper()
	_, err := db.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName:                 aws.String(table),
		Key:                       key(pk),
		UpdateExpression:          aws.String("SET v = :v"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: fmt.Sprint(v)}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

// del deletes item pk.
func del(t *testing.T, db *dynamodb.Client, table, pk string) {
	t.Helper()
	if _, err := db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key(pk)}); err != nil {
		t.Fatal(err)
	}
}

// render writes an item in one canonical text: attributes and map members
// sorted by name, set members sorted, numbers in lowest terms (DynamoDB
// keeps a set's members and a number's digits in its own form).
func render(item map[string]types.AttributeValue) string {
	if item == nil {
		return "nil"
	}
	return renderValue(&types.AttributeValueMemberM{Value: item})
}

func renderValue(v types.AttributeValue) string {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return fmt.Sprintf("S%q", v.Value)
	case *types.AttributeValueMemberN:
		return "N" + number(v.Value)
	case *types.AttributeValueMemberB:
		return "B" + base64.StdEncoding.EncodeToString(v.Value)
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprintf("BOOL%t", v.Value)
	case *types.AttributeValueMemberNULL:
		return fmt.Sprintf("NULL%t", v.Value)
	case *types.AttributeValueMemberSS:
		return "SS" + sorted(v.Value, func(s string) string { return fmt.Sprintf("%q", s) })
	case *types.AttributeValueMemberNS:
		return "NS" + sorted(v.Value, number)
	case *types.AttributeValueMemberBS:
		return "BS" + sorted(v.Value, base64.StdEncoding.EncodeToString)
	case *types.AttributeValueMemberL:
		parts := make([]string, len(v.Value))
		for i, e := range v.Value {
			parts[i] = renderValue(e)
		}
		return "L[" + strings.Join(parts, ",") + "]"
	case *types.AttributeValueMemberM:
		parts := make([]string, 0, len(v.Value))
		for k, e := range v.Value {
			parts = append(parts, fmt.Sprintf("%q:", k)+renderValue(e))
		}
		sort.Strings(parts)
		return "M{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprintf("?%T", v)
}

func sorted[T any](vs []T, f func(T) string) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = f(v)
	}
	sort.Strings(parts)
	return "[" + strings.Join(parts, ",") + "]"
}

func number(s string) string {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return "bad:" + s
	}
	return r.RatString()
}
