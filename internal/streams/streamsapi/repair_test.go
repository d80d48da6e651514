package streamsapi

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestRepairEmptyMaps(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{
			name: "empty maps at every depth, as DynamoDB Local writes them",
			in: `{"Records":[{"eventID":"e1","dynamodb":{"ApproximateCreationDateTime":1795623960.000,` +
				`"Keys":{"pk":{"S":"x"}},` +
				`"NewImage":{"pk":{"S":"x"},"top":{},"l":{"L":[{},{"L":[]},{"S":"{}"}]},"m":{"M":{"in":{},"s":{"S":"a"}}}},` +
				`"OldImage":{"pk":{"S":"x"},"top":{}},"SequenceNumber":"000000000000000000001"}}],"NextShardIterator":"it"}`,
			want: `{"Records":[{"eventID":"e1","dynamodb":{"ApproximateCreationDateTime":1795623960.000,` +
				`"Keys":{"pk":{"S":"x"}},` +
				`"NewImage":{"pk":{"S":"x"},"top":{"M":{}},"l":{"L":[{"M":{}},{"L":[]},{"S":"{}"}]},"m":{"M":{"in":{"M":{}},"s":{"S":"a"}}}},` +
				`"OldImage":{"pk":{"S":"x"},"top":{"M":{}}},"SequenceNumber":"000000000000000000001"}}],"NextShardIterator":"it"}`,
		},
		{
			name: "an answer without empty values is left as it is",
			in:   `{"Records":[{"dynamodb":{"NewImage":{"s":{"S":"{}"},"m":{"M":{}}}}}], "NextShardIterator":"it"}`,
		},
		{
			name: "nor is one that does not parse",
			in:   `{"Records":[{}`,
		},
	} {
		got := repairEmptyMaps([]byte(c.in))
		if c.want == "" {
			if string(got) != c.in {
				t.Errorf("%s: %s became %s", c.name, c.in, got)
			}
			continue
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: %v: %s", c.name, err, got)
		}
		if err := json.Unmarshal([]byte(c.want), &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
