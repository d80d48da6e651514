package steps

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// recordingMetrics answers a write with the body it was given.
type recordingMetrics struct{ body map[string]any }

func (m *recordingMetrics) WritePoints(_ context.Context, _ string, body map[string]any, _ bool) ([]any, error) {
	m.body = body
	return body["points"].([]any), nil
}

func TestWriteMetricPointsCompletesEachPointWithTheStepsDefaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		with    string
		want    string // the points sent to the write, as JSON
		wantErr string
	}{
		{"points pass as they are", `{"points":[{"resource":"deals:d1","key":"metric:arr","date":"2025-01-31","value":1,"source":"crm"}]}`,
			`[{"date":"2025-01-31","key":"metric:arr","resource":"deals:d1","source":"crm","value":1}]`, ""},
		{"resourceType and resourceId make the resource", `{"resourceType":"companies","resourceId.$":"$.input.id","key":"metric:revenue","source":"crm","points":[{"date":"2025-01-31","value":1}]}`,
			`[{"date":"2025-01-31","key":"metric:revenue","resource":"companies:cmp_1","source":"crm","value":1}]`, ""},
		{"a point's own fields beat the defaults", `{"resource":"companies:a","source":"crm","points":[{"resource":"companies:b","source":"web","key":"metric:x","date":"2025-01-31","value":1}]}`,
			`[{"date":"2025-01-31","key":"metric:x","resource":"companies:b","source":"web","value":1}]`, ""},
		{"resourceType without resourceId", `{"resourceType":"companies","points":[]}`, "", "resourceType and resourceId go together"},
		{"resource and resourceType", `{"resource":"companies:a","resourceType":"companies","resourceId":"b","points":[]}`, "", "not both"},
		{"points from a path that is no array", `{"points.$":"$.input.id"}`, "", "points must be an array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := &recordingMetrics{}
			steps := mustParse(t, `[{"id":"w","type":"writeMetricPoints","with":`+tc.with+`}]`)
			res, err := Executor{Metrics: m}.Execute(context.Background(), "org_1", steps, map[string]any{"id": "cmp_1"}, false)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" {
				if res.Error == nil || !strings.Contains(res.Error.Message, tc.wantErr) || res.Error.Step != "w" {
					t.Fatalf("run error %+v, want one of step w containing %q", res.Error, tc.wantErr)
				}
				return
			}
			if res.Error != nil {
				t.Fatalf("run failed: %+v", res.Error)
			}
			got, _ := json.Marshal(m.body["points"])
			if string(got) != tc.want {
				t.Errorf("points written %s, want %s", got, tc.want)
			}
		})
	}
}

func TestParseRequiresThePointsOfAWriteMetricPointsStep(t *testing.T) {
	t.Parallel()
	for with, want := range map[string]string{
		`{}`:             "steps[0].with.points",
		`{"points":"x"}`: "steps[0].with.points",
		`{"points":{}}`:  "steps[0].with.points",
	} {
		_, err := Parse([]byte(`[{"id":"w","type":"writeMetricPoints","with":` + with + `}]`))
		if ve, ok := err.(*ValidationError); !ok || ve.Field != want {
			t.Errorf("with %s: error %v, want one naming %s", with, err, want)
		}
	}
	if _, err := Parse([]byte(`[{"id":"w","type":"writeMetricPoints","with":{"points.$":"$.input.points"}}]`)); err != nil {
		t.Errorf("points from a path: %v", err)
	}
}
