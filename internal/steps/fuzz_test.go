package steps

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
)

var fuzzSeedSteps = []string{
	`[]`,
	`[{"id":"m","type":"writeMetricPoints","with":{"resourceType":"companies","resourceId.$":"$.input.name","key":"metric:x","points":[{"date":"2025-01-31","value":1}]}}]`,
	`null`,
	`[{"id":"a","type":"set","with":{"x":1,"name.$":"$.input.name","o":{"p.$":"$..p"},"l":[{"q.$":"$.input.l[*]"},"s"]}}]`,
	`[{"id":"a","type":"set","with":{"v.$":"$.input.o[?(@.n > 1)].n"}},{"id":"b","type":"set","with":{"w.$":"$.steps.a.v"}}]`,
	`[{"id":"a","type":"fail","with":{"message.$":"$.input.name"}}]`,
	`[{"id":"a","type":"fail","with":{"message":"stop"}},{"id":"b","type":"set"}]`,
	`[{"id":"up","type":"upsertCompany","with":{"canonicalName.$":"$.input.name"}},{"id":"t","type":"tagCompany","with":{"companyId.$":"$.steps.up.company.id","tags":["x"]}}]`,
	`[{"id":"a","type":"set","with":{"v.$":"$.input['k','name']","w.$":"$.input.l[-1:]","z.$":"$"}}]`,
	`[{"id":"a","type":"set","with":{"a":1,"a":2}}]`,
	`[{"id":"a","type":"set","with":{"x.$":"$.a$"}}]`,
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeedSteps {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		steps, err := Parse(raw)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
			}
			if ve.Field == "" || ve.Message == "" {
				t.Fatalf("validation error without field or message: %+v", ve)
			}
			return
		}
		if steps == nil {
			t.Fatal("valid input parsed to a nil slice")
		}
		assertRoundTrip(t, steps)
	})
}

// echoCompanies answers every write with a record built from its arguments,
// so fuzzed company steps run end to end without a store.
type echoCompanies struct{}

func (echoCompanies) Upsert(_ context.Context, _ string, fields map[string]any, dryRun bool) (UpsertResult, error) {
	if dryRun {
		return UpsertResult{WouldCreate: fields}, nil
	}
	return UpsertResult{Company: map[string]any{"id": "c1", "fields": fields}, Created: true}, nil
}

func (echoCompanies) AddTags(_ context.Context, _, companyID string, tags []string, dryRun bool) (UpsertResult, error) {
	res := UpsertResult{Company: map[string]any{"id": companyID, "tags": tags}}
	if dryRun {
		res.WouldUpdate = map[string]any{"tags": tags}
	}
	return res, nil
}

// echoMetrics answers a write with the points it was given.
type echoMetrics struct{}

func (echoMetrics) WritePoints(_ context.Context, _ string, body map[string]any, _ bool) ([]any, error) {
	points, _ := body["points"].([]any)
	return points, nil
}

func FuzzExecute(f *testing.F) {
	inputs := []string{`{}`, `{"name":"Acme","l":[1,"two",{"p":3}],"o":{"a":{"n":1},"b":{"n":2}},"k":null}`, `null`}
	for i, s := range fuzzSeedSteps {
		f.Add(s, inputs[i%len(inputs)], i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, rawSteps, rawInput string, dryRun bool) {
		steps, err := Parse([]byte(rawSteps))
		if err != nil {
			return
		}
		var input map[string]any
		if err := json.Unmarshal([]byte(rawInput), &input); err != nil {
			return
		}
		exec := Executor{Companies: echoCompanies{}, Metrics: echoMetrics{}}
		res, err := exec.Execute(context.Background(), "org1", steps, input, dryRun)
		if err != nil {
			t.Fatalf("Execute returned a Go error: %v", err)
		}
		if (res.Error == nil) == (res.Output == nil) {
			t.Fatalf("want exactly one of output and error, got %+v", res)
		}
		if res.Error != nil && !slices.ContainsFunc(steps, func(s Step) bool { return s.ID == res.Error.Step }) {
			t.Fatalf("run error names unknown step %q", res.Error.Step)
		}
		if _, err := json.Marshal(res.Output); err != nil {
			t.Fatalf("output is not JSON: %v", err)
		}
		// A retry of the same run must produce the same result.
		again, err := exec.Execute(context.Background(), "org1", steps, input, dryRun)
		if err != nil || !reflect.DeepEqual(res, again) {
			t.Fatalf("second run differs:\n%+v\n%+v (%v)", res, again, err)
		}
	})
}
