package streamsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// DynamoDB Local 3.x writes an empty map in a stream record's image as
// {} instead of {"M":{}} (its GetItem answers are right; the web service
// is right; see awslabs/amazon-dynamodb-local-samples#37), and the Streams
// SDK decodes a value without a member as the value decoded just before
// it in the same map or list: an empty map would reach the Handler as a
// copy of another attribute, or as nil. Since an attribute value is never
// {} otherwise, and Local writes empty lists right, a GetRecords answer is
// repaired before the SDK decodes it: every {} value of an image becomes
// the empty map it stands for. An answer without {} is left untouched
// (every answer of AWS).

// withEmptyMapRepair is a per-call option of GetRecords that repairs the
// answer.
func withEmptyMapRepair(o *dynamodbstreams.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		// Last of the deserialize step: it sees the HTTP answer first,
		// before the operation's deserializer reads it.
		return s.Deserialize.Add(emptyMapRepair{}, middleware.After)
	})
}

// emptyMapRepair rewrites the body of a successful GetRecords answer.
type emptyMapRepair struct{}

// ID names the middleware in the stack.
func (emptyMapRepair) ID() string { return "StreamsEmptyMapRepair" }

// HandleDeserialize repairs the raw answer of the attempt.
func (emptyMapRepair) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	if err != nil {
		return out, md, err
	}
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if !ok || resp.StatusCode != http.StatusOK || resp.Body == nil {
		return out, md, nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return out, md, fmt.Errorf("read the GetRecords answer: %w", err)
	}
	body = repairEmptyMaps(body)
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return out, md, nil
}

// repairEmptyMaps returns a GetRecords answer with every attribute value
// {} of its records' images (at any depth) written {"M":{}}. An answer it
// cannot parse, or that holds no such value, is returned as it is.
func repairEmptyMaps(body []byte) []byte {
	if !bytes.Contains(body, []byte("{}")) {
		return body
	}
	var answer map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers come out as they went in
	if err := dec.Decode(&answer); err != nil {
		return body // the SDK's deserializer reports it
	}
	records, _ := answer["Records"].([]any)
	repaired := false
	for _, r := range records {
		r, _ := r.(map[string]any)
		change, _ := r["dynamodb"].(map[string]any)
		for _, image := range []string{"Keys", "NewImage", "OldImage"} {
			item, _ := change[image].(map[string]any)
			for name, v := range item {
				var r bool
				if item[name], r = repairValue(v); r {
					repaired = true
				}
			}
		}
	}
	if !repaired {
		return body
	}
	out, err := json.Marshal(answer)
	if err != nil {
		return body
	}
	return out
}

// repairValue returns an attribute value with its empty maps written
// {"M":{}}, and whether it changed anything.
func repairValue(v any) (any, bool) {
	av, isObject := v.(map[string]any)
	if !isObject {
		return v, false
	}
	if len(av) == 0 {
		return map[string]any{"M": map[string]any{}}, true
	}
	repaired := false
	if m, isMap := av["M"].(map[string]any); isMap {
		for k, e := range m {
			var r bool
			if m[k], r = repairValue(e); r {
				repaired = true
			}
		}
	}
	if l, isList := av["L"].([]any); isList {
		for i, e := range l {
			var r bool
			if l[i], r = repairValue(e); r {
				repaired = true
			}
		}
	}
	return av, repaired
}
