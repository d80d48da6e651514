package streamsapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// DynamoDB Local keeps one shard per stream and never splits it, and its
// iterators outlive any test: what shard lineage, paging through the
// description, and expired or trimmed iterators ask of the Poller is
// tested against fakeStreams, a Streams API (and DescribeTable) serving
// shards a test lays out.
type fakeStreams struct {
	mu     sync.Mutex
	shards []*fakeShard // in the order DescribeStream lists them, one per page
	calls  []string     // what was asked, in order
	// fail maps a call ("GetRecords P 1": the shard and the iterator's
	// position) to the error type its first occurrence answers.
	fail map[string]string
}

type fakeShard struct {
	id, parent string
	seqs       []int // the sequence numbers of its records, ascending
	closed     bool
}

const fakeStream = "arn:aws:dynamodb:local:0:table/t/stream/fake"

func (f *fakeStreams) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in map[string]any
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	str := func(k string) string { s, _ := in[k].(string); return s }
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	answer := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	failure := func(call string) bool {
		typ, ok := f.fail[call]
		if !ok {
			return false
		}
		delete(f.fail, call)
		f.calls = append(f.calls, call+" -> "+typ)
		w.Header().Set("X-Amzn-ErrorType", typ)
		w.WriteHeader(http.StatusBadRequest)
		answer(map[string]string{"__type": "com.amazonaws.dynamodb.v20120810#" + typ, "message": "injected"})
		return true
	}
	switch op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDBStreams_20120810."); op {
	case "DynamoDB_20120810.DescribeTable":
		answer(map[string]any{"Table": map[string]any{
			"TableName": str("TableName"), "TableStatus": "ACTIVE", "LatestStreamArn": fakeStream,
			"StreamSpecification": map[string]any{"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"},
		}})
	case "DescribeStream":
		i := 0
		if start := str("ExclusiveStartShardId"); start != "" {
			i = slices.IndexFunc(f.shards, func(s *fakeShard) bool { return s.id == start }) + 1
		}
		desc := map[string]any{"StreamArn": fakeStream, "StreamStatus": "ENABLED", "StreamViewType": "NEW_AND_OLD_IMAGES", "Shards": []any{}}
		if i < len(f.shards) {
			s := f.shards[i]
			shard := map[string]any{"ShardId": s.id, "SequenceNumberRange": map[string]any{"StartingSequenceNumber": "1"}}
			if s.parent != "" {
				shard["ParentShardId"] = s.parent
			}
			desc["Shards"] = []any{shard}
			desc["LastEvaluatedShardId"] = s.id // one shard per page
		}
		answer(map[string]any{"StreamDescription": desc})
	case "GetShardIterator":
		s := f.shard(str("ShardId"))
		pos := 0
		if str("ShardIteratorType") == "AFTER_SEQUENCE_NUMBER" {
			seq, _ := strconv.Atoi(str("SequenceNumber"))
			pos = slices.Index(s.seqs, seq) + 1
		}
		call := fmt.Sprintf("GetShardIterator %s %s%s", s.id, str("ShardIteratorType"), str("SequenceNumber"))
		f.calls = append(f.calls, call)
		answer(map[string]any{"ShardIterator": fmt.Sprintf("%s|%d", s.id, pos)})
	case "GetRecords":
		id, p, _ := strings.Cut(str("ShardIterator"), "|")
		s, pos := f.shard(id), 0
		pos, _ = strconv.Atoi(p)
		if failure(fmt.Sprintf("GetRecords %s %d", id, pos)) {
			return
		}
		end := min(len(s.seqs), pos+int(in["Limit"].(float64)))
		var records []any
		for _, seq := range s.seqs[pos:end] {
			records = append(records, map[string]any{
				"eventID": fmt.Sprintf("%s-%d", id, seq), "eventName": "MODIFY",
				"dynamodb": map[string]any{
					"ApproximateCreationDateTime": 1735732800, "SequenceNumber": strconv.Itoa(seq),
					"Keys":     map[string]any{"pk": map[string]any{"S": "item"}},
					"NewImage": map[string]any{"pk": map[string]any{"S": "item"}, "v": map[string]any{"N": strconv.Itoa(seq)}},
				},
			})
		}
		out := map[string]any{"Records": records}
		if !s.closed || end < len(s.seqs) {
			out["NextShardIterator"] = fmt.Sprintf("%s|%d", id, end)
		} else {
			f.calls = append(f.calls, "closed "+id)
		}
		answer(out)
	default:
		http.Error(w, "unexpected "+op, http.StatusBadRequest)
	}
}

func (f *fakeStreams) shard(id string) *fakeShard {
	for _, s := range f.shards {
		if s.id == id {
			return s
		}
	}
	panic("no shard " + id)
}

func (f *fakeStreams) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// fakePoller is a Poller of table t on the fake Streams API.
func fakePoller(t *testing.T, f *fakeStreams) *Poller {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", "")}
	p := &Poller{
		Streams: NewStreamsClient(cfg, srv.URL),
		DB: dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
			o.BaseEndpoint, o.DisableValidateResponseChecksum = aws.String(srv.URL), true
		}),
		Table: "t",
		Batch: 1, // one record per read: failures land between records
	}
	p.Log, _ = logger()
	return p
}

// A child shard is read only after its parent has been read to its end;
// a shard whose parent is no longer described is read at once; every
// page of the description is read.
func TestPollerReadsParentShardsFirst(t *testing.T) {
	t.Parallel()
	f := &fakeStreams{shards: []*fakeShard{
		// The child is listed first: the order of the description must
		// not matter.
		{id: "child", parent: "parent", seqs: []int{30, 31}},
		{id: "parent", parent: "trimmed", seqs: []int{10, 11, 12}, closed: true},
		{id: "orphan", parent: "trimmed", seqs: []int{20}},
	}}
	var got collector
	p := fakePoller(t, f)
	p.Handle = got.handle
	start(t, p)
	caught(t, p)

	var seqs []string
	for _, r := range got.all() {
		seqs = append(seqs, r.Sequence)
	}
	parentFirst := slices.DeleteFunc(slices.Clone(seqs), func(s string) bool { return s == "20" })
	if want := []string{"10", "11", "12", "30", "31"}; !slices.Equal(parentFirst, want) || !slices.Contains(seqs, "20") {
		t.Errorf("records %v: want the parent's (10-12) before the child's (30, 31), and the orphan's (20)", seqs)
	}
	calls := f.called()
	closed := slices.Index(calls, "closed parent")
	child := slices.Index(calls, "GetShardIterator child TRIM_HORIZON")
	if closed < 0 || child < closed {
		t.Errorf("the child was read before its parent ended: %v", calls)
	}
}

// An expired iterator is renewed after the last handled record: nothing
// is handed twice. Trimmed records restart the shard from its oldest
// record: what was handled comes again, nothing is skipped.
func TestPollerRenewsIterators(t *testing.T) {
	t.Parallel()
	f := &fakeStreams{
		shards: []*fakeShard{
			{id: "a", seqs: []int{1, 2, 3}},
			{id: "b", seqs: []int{5, 6}},
		},
		fail: map[string]string{
			"GetRecords a 1": "ExpiredIteratorException",
			"GetRecords b 2": "TrimmedDataAccessException",
			"GetRecords a 2": "ValidationException", // an unknown iterator: a new one after a backoff
		},
	}
	var got collector
	p := fakePoller(t, f)
	p.Handle = got.handle
	start(t, p)
	caught(t, p)

	perShard := map[string][]string{}
	for _, r := range got.all() {
		shard, _, _ := strings.Cut(r.ID, "-")
		perShard[shard] = append(perShard[shard], r.Sequence)
	}
	if want := []string{"1", "2", "3"}; !slices.Equal(perShard["a"], want) {
		t.Errorf("shard a: %v, want %v", perShard["a"], want)
	}
	if want := []string{"5", "6", "5", "6"}; !slices.Equal(perShard["b"], want) {
		t.Errorf("shard b: %v, want %v (read again from its oldest record)", perShard["b"], want)
	}
	calls := f.called()
	for _, want := range []string{"GetShardIterator a AFTER_SEQUENCE_NUMBER1", "GetShardIterator a AFTER_SEQUENCE_NUMBER2"} {
		if !slices.Contains(calls, want) {
			t.Errorf("calls %v: want %q", calls, want)
		}
	}
	if n := strings.Count(strings.Join(calls, "\n"), "GetShardIterator b TRIM_HORIZON"); n != 2 {
		t.Errorf("calls %v: shard b started from TRIM_HORIZON %d times, want 2", calls, n)
	}
}
