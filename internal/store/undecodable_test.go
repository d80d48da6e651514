package store_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Not parallel: it captures the process's logger.
func TestAnUndecodableItemIsSkippedInListsAndLoggedOnceByItsKeyWithoutItsContent(t *testing.T) {
	var logs syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	s := testenv.Store(t)
	c := things(s)
	seed(t, c, "o", "a", "b")
	docs := []string{
		`{"name":"s3cret-name","count":"s3cret-count"}`, // a field of the wrong type
		`{"name":"s3cret-name",`,                        // cut short
		`{"name":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	}
	var broken []string
	for _, doc := range docs {
		id := ids.New("thg")
		broken = append(broken, id)
		_, err := s.DB.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(s.Table), Item: map[string]types.AttributeValue{
			store.AttrPK:  &types.AttributeValueMemberS{Value: store.RecordKey("o", "THING", id).PK},
			store.AttrSK:  &types.AttributeValueMemberS{Value: id},
			store.AttrDoc: &types.AttributeValueMemberS{Value: doc},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		p, err := c.List(t.Context(), "o", store.Query{Limit: 10})
		if err != nil || len(p.Items) != 2 {
			t.Fatalf("List = %d records, %v; want the 2 readable ones", len(p.Items), err)
		}
	}
	out := logs.String()
	for _, id := range broken {
		if n := strings.Count(out, id); n != 1 {
			t.Errorf("the undecodable item %s is logged %d times, want once:\n%s", id, n, out)
		}
	}
	if strings.Contains(out, "s3cret") {
		t.Errorf("the log quotes a stored record:\n%s", out)
	}
}
