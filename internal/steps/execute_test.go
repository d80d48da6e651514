package steps

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// mustParse parses steps written as JSON, failing the test on a validation error.
func mustParse(t *testing.T, raw string) []Step {
	t.Helper()
	steps, err := Parse([]byte(raw))
	if err != nil {
		t.Fatalf("Parse(%s): %v", raw, err)
	}
	return steps
}

// jsonObject decodes a JSON object literal the way run input arrives.
func jsonObject(t *testing.T, raw string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

func TestExecuteResolvesParameters(t *testing.T) {
	t.Parallel()
	input := `{"name":"Acme","n":2.5,"nothing":null,"people":[{"name":"Ann","age":30},{"name":"Bo","age":40}],"tags":["a","b"],"odd.key":true,
		"byKey":{"h":1,"g":2,"f":3,"e":4,"d":5,"c":6,"b":7,"a":8},"tree":{"b":{"v":2,"w":{"v":3}},"a":{"v":1},"c":[{"v":4},{"v":5}]}}`
	tests := []struct {
		name  string
		steps string
		want  string // the run output as JSON
	}{
		{"no steps returns the input", `[]`, input},
		{"literal values pass through", `[{"id":"a","type":"set","with":{"s":"$.name","n":1,"b":false,"z":null,"l":[1,"x"]}}]`,
			`{"s":"$.name","n":1,"b":false,"z":null,"l":[1,"x"]}`},
		{"a definite path yields the single value", `[{"id":"a","type":"set","with":{"name.$":"$.input.name","n.$":"$.input.n","first.$":"$.input.people[0].name","last.$":"$.input.tags[-1]"}}]`,
			`{"name":"Acme","n":2.5,"first":"Ann","last":"b"}`},
		{"a definite path to null yields null", `[{"id":"a","type":"set","with":{"v.$":"$.input.nothing"}}]`, `{"v":null}`},
		{"bracket notation reaches keys with dots", `[{"id":"a","type":"set","with":{"v.$":"$.input['odd.key']"}}]`, `{"v":true}`},
		{"the root path yields the whole context", `[{"id":"a","type":"set","with":{"all.$":"$"}}]`, `{"all":{"input":` + input + `,"steps":{}}}`},
		{"objects nested in with are resolved", `[{"id":"a","type":"set","with":{"company":{"canonicalName.$":"$.input.name","location":{"city":"Oslo","note.$":"$.input.tags[0]"}}}}]`,
			`{"company":{"canonicalName":"Acme","location":{"city":"Oslo","note":"a"}}}`},
		{"objects inside arrays are resolved, strings in arrays are literal", `[{"id":"a","type":"set","with":{"list":[{"v.$":"$.input.name"},"$.input.name",[{"w.$":"$.input.n"}]]}}]`,
			`{"list":[{"v":"Acme"},"$.input.name",[{"w":2.5}]]}`},
		{"a wildcard yields an array of matches", `[{"id":"a","type":"set","with":{"names.$":"$.input.people[*].name"}}]`, `{"names":["Ann","Bo"]}`},
		{"a filter yields an array of matches", `[{"id":"a","type":"set","with":{"old.$":"$.input.people[?(@.age > 35)].name"}}]`, `{"old":["Bo"]}`},
		{"a descent yields an array of matches", `[{"id":"a","type":"set","with":{"ages.$":"$..age"}}]`, `{"ages":[30,40]}`},
		{"a slice yields an array of matches", `[{"id":"a","type":"set","with":{"t.$":"$.input.tags[0:1]"}}]`, `{"t":["a"]}`},
		{"a union yields an array of matches", `[{"id":"a","type":"set","with":{"t.$":"$.input.tags[1,0]"}}]`, `{"t":["b","a"]}`},
		{"a wildcard over an object yields members in key order", `[{"id":"a","type":"set","with":{"v.$":"$.input.byKey.*"}}]`, `{"v":[8,7,6,5,4,3,2,1]}`},
		{"a filter over an object yields members in key order", `[{"id":"a","type":"set","with":{"v.$":"$.input.byKey[?(@ > 4)]"}}]`, `{"v":[8,7,6,5]}`},
		{"a descent yields values before descendants, in document order", `[{"id":"a","type":"set","with":{"v.$":"$.input.tree..v","n.$":"$.input.tree.b..*"}}]`, `{"v":[1,2,3,4,5],"n":[2,{"v":3},3]}`},
		{"a union over object keys keeps the selectors' order", `[{"id":"a","type":"set","with":{"v.$":"$.input.byKey['h','a']"}}]`, `{"v":[1,8]}`},
		{"an indefinite path matching nothing yields an empty array", `[{"id":"a","type":"set","with":{"none.$":"$.input.missing[*]"}}]`, `{"none":[]}`},
		{"a wildcard over a single value still yields an array", `[{"id":"a","type":"set","with":{"one.$":"$.input.people[?(@.name == 'Ann')].age"}}]`, `{"one":[30]}`},
		{"later steps read earlier outputs", `[
			{"id":"first","type":"set","with":{"greeting":"hi","who.$":"$.input.name"}},
			{"id":"second","type":"set","with":{"msg.$":"$.steps.first.greeting","again.$":"$.steps['first'].who","prev.$":"$.steps.first"}}]`,
			`{"msg":"hi","again":"Acme","prev":{"greeting":"hi","who":"Acme"}}`},
		{"the output is the last step's output", `[{"id":"a","type":"set","with":{"x":1}},{"id":"b","type":"set","with":{"y":2}}]`, `{"y":2}`},
		{"a step without with outputs an empty object", `[{"id":"a","type":"set"}]`, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := Executor{}.Execute(context.Background(), "org1", mustParse(t, tt.steps), jsonObject(t, input), false)
			if err != nil {
				t.Fatalf("Execute: %v", err)
			}
			if res.Error != nil {
				t.Fatalf("run failed: %+v", res.Error)
			}
			if want := jsonObject(t, tt.want); !reflect.DeepEqual(res.Output, want) {
				t.Errorf("output = %#v\nwant %#v", res.Output, want)
			}
		})
	}
}

func TestExecuteWithNoStepsAndNilInputOutputsEmptyObject(t *testing.T) {
	t.Parallel()
	res, err := Executor{}.Execute(context.Background(), "org1", nil, nil, false)
	if err != nil || res.Error != nil {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	if res.Output == nil || len(res.Output) != 0 {
		t.Errorf("output = %#v, want {}", res.Output)
	}
}

func TestExecuteNeverMutatesInputOrEarlierOutputs(t *testing.T) {
	t.Parallel()
	input := jsonObject(t, `{"o":{"k":1}}`)
	steps := mustParse(t, `[{"id":"a","type":"set","with":{"o.$":"$.input.o"}},{"id":"b","type":"set","with":{"o.$":"$.steps.a.o"}}]`)
	res, err := Executor{}.Execute(context.Background(), "org1", steps, input, false)
	if err != nil || res.Error != nil {
		t.Fatalf("Execute = %+v, %v", res, err)
	}
	res.Output["o"].(map[string]any)["k"] = 2
	if input["o"].(map[string]any)["k"] != float64(1) {
		t.Error("changing the output changed the caller's input")
	}
	if steps[0].With["o.$"] != "$.input.o" {
		t.Error("executing changed the step definition")
	}
}

func TestExecuteFailsTheRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		steps    string
		wantStep string
		wantMsg  string // exact message unless wantPart
		wantPart bool
	}{
		{"a fail step ends the run with its message", `[{"id":"stop","type":"fail","with":{"message":"no company found"}}]`, "stop", "no company found", false},
		{"a fail step message can come from a path", `[{"id":"stop","type":"fail","with":{"message.$":"$.input.reason"}}]`, "stop", "bad data", false},
		{"a fail step message from a path must be a string", `[{"id":"stop","type":"fail","with":{"message.$":"$.input.count"}}]`, "stop", `step "stop": message must be a string, got number`, false},
		{"a definite path matching nothing fails naming step and path", `[{"id":"ok","type":"set"},{"id":"look","type":"set","with":{"deep":{"v.$":"$.input.missing.key"}}}]`,
			"look", `step "look": path "$.input.missing.key" in with.deep.v.$ matched nothing`, false},
		{"an index out of range matches nothing", `[{"id":"i","type":"set","with":{"v.$":"$.input.list[5]"}}]`, "i", `path "$.input.list[5]"`, true},
		{"a path to a later step matches nothing", `[{"id":"a","type":"set","with":{"v.$":"$.steps.b.x"}},{"id":"b","type":"set","with":{"x":1}}]`, "a", `path "$.steps.b.x"`, true},
		{"a definite path into an object inside an array", `[{"id":"arr","type":"set","with":{"l":[{"v.$":"$.input.nope"}]}}]`, "arr", "with.l[0].v.$", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			steps := mustParse(t, tt.steps)
			// A step after the failing one must not run: it would fail differently.
			steps = append(steps, Step{ID: "after", Type: TypeFail, With: map[string]any{"message": "later step ran"}})
			res, err := Executor{}.Execute(context.Background(), "org1", steps, jsonObject(t, `{"reason":"bad data","count":3,"list":[1]}`), false)
			if err != nil {
				t.Fatalf("Execute returned a Go error for a failed run: %v", err)
			}
			if res.Error == nil {
				t.Fatalf("run succeeded with %v", res.Output)
			}
			if res.Output != nil {
				t.Errorf("failed run has output %v", res.Output)
			}
			if res.Error.Step != tt.wantStep {
				t.Errorf("failed step = %q, want %q", res.Error.Step, tt.wantStep)
			}
			if tt.wantPart && !strings.Contains(res.Error.Message, tt.wantMsg) || !tt.wantPart && res.Error.Message != tt.wantMsg {
				t.Errorf("message = %q, want %q", res.Error.Message, tt.wantMsg)
			}
		})
	}
}

func TestExecuteReturnsCancellationAsAnError(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Executor{}.Execute(ctx, "org1", mustParse(t, `[{"id":"a","type":"set"}]`), nil, false)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestExecuteReturnsCancellationDuringACompanyWriteAsAnError(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	companies := &recordingCompanies{onCall: cancel, err: context.Canceled}
	steps := mustParse(t, `[{"id":"up","type":"upsertCompany","with":{"canonicalName":"Acme"}}]`)
	res, err := Executor{Companies: companies}.Execute(ctx, "org1", steps, nil, false)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Execute = %+v, %v; want context.Canceled", res, err)
	}
}

// company is a typed record, standing in for the company package's own type,
// to check that outputs are converted to plain JSON.
type company struct {
	ID            string   `json:"id"`
	CanonicalName string   `json:"canonicalName"`
	Tags          []string `json:"tags,omitempty"`
}

// companyCall records one call to recordingCompanies.
type companyCall struct {
	Method    string
	Org       string
	Fields    map[string]any
	CompanyID string
	Tags      []string
	DryRun    bool
}

// recordingCompanies records calls and answers with a canned result; it does
// not model the store (the real implementation is tested against DynamoDB).
type recordingCompanies struct {
	mu     sync.Mutex
	calls  []companyCall
	result UpsertResult
	err    error
	onCall func()
}

func (r *recordingCompanies) record(c companyCall) (UpsertResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	if r.onCall != nil {
		r.onCall()
	}
	return r.result, r.err
}

func (r *recordingCompanies) Upsert(_ context.Context, org string, fields map[string]any, dryRun bool) (UpsertResult, error) {
	return r.record(companyCall{Method: "Upsert", Org: org, Fields: fields, DryRun: dryRun})
}

func (r *recordingCompanies) AddTags(_ context.Context, org, companyID string, tags []string, dryRun bool) (UpsertResult, error) {
	return r.record(companyCall{Method: "AddTags", Org: org, CompanyID: companyID, Tags: tags, DryRun: dryRun})
}

func TestExecuteCompanySteps(t *testing.T) {
	t.Parallel()
	acme := company{ID: "c1", CanonicalName: "Acme", Tags: []string{"old", "new"}}
	tests := []struct {
		name      string
		steps     string
		dryRun    bool
		result    UpsertResult
		wantCalls []companyCall
		wantOut   string
	}{
		{
			name:      "upsert passes resolved fields and outputs the record",
			steps:     `[{"id":"up","type":"upsertCompany","with":{"canonicalName.$":"$.input.name","location":{"city.$":"$.input.city"},"tags":["x"]}}]`,
			result:    UpsertResult{Company: acme, Created: true},
			wantCalls: []companyCall{{Method: "Upsert", Org: "org1", Fields: map[string]any{"canonicalName": "Acme", "location": map[string]any{"city": "Oslo"}, "tags": []any{"x"}}}},
			wantOut:   `{"company":{"id":"c1","canonicalName":"Acme","tags":["old","new"]},"created":true}`,
		},
		{
			name:      "upsert of an existing company reports created false",
			steps:     `[{"id":"up","type":"upsertCompany","with":{"externalId":"e1"}}]`,
			result:    UpsertResult{Company: &acme},
			wantCalls: []companyCall{{Method: "Upsert", Org: "org1", Fields: map[string]any{"externalId": "e1"}}},
			wantOut:   `{"company":{"id":"c1","canonicalName":"Acme","tags":["old","new"]},"created":false}`,
		},
		{
			name:      "dry-run upsert that would create",
			steps:     `[{"id":"up","type":"upsertCompany","with":{"canonicalName":"Acme"}}]`,
			dryRun:    true,
			result:    UpsertResult{WouldCreate: map[string]any{"canonicalName": "Acme"}},
			wantCalls: []companyCall{{Method: "Upsert", Org: "org1", Fields: map[string]any{"canonicalName": "Acme"}, DryRun: true}},
			wantOut:   `{"dryRun":true,"wouldCreate":{"canonicalName":"Acme"}}`,
		},
		{
			name:      "dry-run upsert that would create outputs the record under its placeholder id",
			steps:     `[{"id":"up","type":"upsertCompany","with":{"canonicalName":"Acme"}}]`,
			dryRun:    true,
			result:    UpsertResult{Created: true, Company: company{ID: "dry_cmp_1", CanonicalName: "Acme"}, WouldCreate: map[string]any{"canonicalName": "Acme"}},
			wantCalls: []companyCall{{Method: "Upsert", Org: "org1", Fields: map[string]any{"canonicalName": "Acme"}, DryRun: true}},
			wantOut:   `{"dryRun":true,"wouldCreate":{"canonicalName":"Acme"},"company":{"id":"dry_cmp_1","canonicalName":"Acme"}}`,
		},
		{
			name:      "dry-run upsert that would update",
			steps:     `[{"id":"up","type":"upsertCompany","with":{"canonicalName":"Acme","sector":"Tech"}}]`,
			dryRun:    true,
			result:    UpsertResult{Company: acme, WouldUpdate: map[string]any{"sector": "Tech"}},
			wantCalls: []companyCall{{Method: "Upsert", Org: "org1", Fields: map[string]any{"canonicalName": "Acme", "sector": "Tech"}, DryRun: true}},
			wantOut:   `{"dryRun":true,"wouldUpdate":{"sector":"Tech"},"company":{"id":"c1","canonicalName":"Acme","tags":["old","new"]}}`,
		},
		{
			name:      "dry-run upsert that would change nothing",
			steps:     `[{"id":"up","type":"upsertCompany","with":{"canonicalName":"Acme"}}]`,
			dryRun:    true,
			result:    UpsertResult{Company: acme},
			wantCalls: []companyCall{{Method: "Upsert", Org: "org1", Fields: map[string]any{"canonicalName": "Acme"}, DryRun: true}},
			wantOut:   `{"dryRun":true,"wouldUpdate":{},"company":{"id":"c1","canonicalName":"Acme","tags":["old","new"]}}`,
		},
		{
			name: "tagCompany reads the company id from an earlier step's output",
			steps: `[{"id":"up","type":"upsertCompany","with":{"canonicalName":"Acme"}},
				{"id":"tag","type":"tagCompany","with":{"companyId.$":"$.steps.up.company.id","tags.$":"$.input.tags[*]"}}]`,
			result: UpsertResult{Company: acme},
			wantCalls: []companyCall{
				{Method: "Upsert", Org: "org1", Fields: map[string]any{"canonicalName": "Acme"}},
				{Method: "AddTags", Org: "org1", CompanyID: "c1", Tags: []string{"new", "old"}},
			},
			wantOut: `{"company":{"id":"c1","canonicalName":"Acme","tags":["old","new"]}}`,
		},
		{
			name:      "dry-run tagCompany",
			steps:     `[{"id":"tag","type":"tagCompany","with":{"companyId":"c1","tags":["new"]}}]`,
			dryRun:    true,
			result:    UpsertResult{Company: acme, WouldUpdate: map[string]any{"tags": []string{"old", "new"}}},
			wantCalls: []companyCall{{Method: "AddTags", Org: "org1", CompanyID: "c1", Tags: []string{"new"}, DryRun: true}},
			wantOut:   `{"dryRun":true,"wouldUpdate":{"tags":["old","new"]},"company":{"id":"c1","canonicalName":"Acme","tags":["old","new"]}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			companies := &recordingCompanies{result: tt.result}
			input := jsonObject(t, `{"name":"Acme","city":"Oslo","tags":["new","old"]}`)
			res, err := Executor{Companies: companies}.Execute(context.Background(), "org1", mustParse(t, tt.steps), input, tt.dryRun)
			if err != nil || res.Error != nil {
				t.Fatalf("Execute = %+v, %v", res.Error, err)
			}
			if !reflect.DeepEqual(companies.calls, tt.wantCalls) {
				t.Errorf("calls = %#v\nwant %#v", companies.calls, tt.wantCalls)
			}
			if want := jsonObject(t, tt.wantOut); !reflect.DeepEqual(res.Output, want) {
				t.Errorf("output = %#v\nwant %#v", res.Output, want)
			}
		})
	}
}

func TestExecuteCompanyStepFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		steps   string
		err     error
		wantMsg string
	}{
		{"a company error fails the step with its message", `[{"id":"up","type":"upsertCompany","with":{"canonicalName":"Acme","companyType":"bank"}}]`,
			errors.New("companyType: must be one of operating, investor"), "companyType: must be one of operating, investor"},
		{"a tagging error fails the step with its message", `[{"id":"tag","type":"tagCompany","with":{"companyId":"c9","tags":["x"]}}]`,
			errors.New("company c9 not found"), "company c9 not found"},
		{"a resolved companyId must be a string", `[{"id":"tag","type":"tagCompany","with":{"companyId.$":"$.input.n","tags":["x"]}}]`,
			nil, `step "tag": companyId must be a non-empty string, got number`},
		{"a resolved companyId must not be empty", `[{"id":"tag","type":"tagCompany","with":{"companyId.$":"$.input.empty","tags":["x"]}}]`,
			nil, `step "tag": companyId must be a non-empty string, got an empty string`},
		{"resolved tags must be an array", `[{"id":"tag","type":"tagCompany","with":{"companyId":"c1","tags.$":"$.input.empty"}}]`,
			nil, `step "tag": tags: must be an array of strings, got string`},
		{"resolved tags must be strings", `[{"id":"tag","type":"tagCompany","with":{"companyId":"c1","tags.$":"$.input.mixed"}}]`,
			nil, `step "tag": tags[1]: must be a non-empty string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			companies := &recordingCompanies{err: tt.err}
			input := jsonObject(t, `{"n":1,"empty":"","mixed":["a",2]}`)
			steps := mustParse(t, tt.steps)
			res, err := Executor{Companies: companies}.Execute(context.Background(), "org1", steps, input, false)
			if err != nil {
				t.Fatalf("Execute returned a Go error for a failed step: %v", err)
			}
			if res.Error == nil || res.Error.Message != tt.wantMsg || res.Error.Step != steps[0].ID {
				t.Fatalf("run error = %+v, want %q in step %q", res.Error, tt.wantMsg, steps[0].ID)
			}
			if tt.err == nil && len(companies.calls) != 0 {
				t.Errorf("companies called despite invalid parameters: %v", companies.calls)
			}
		})
	}
}

func TestExecuteWithoutCompaniesReturnsAnError(t *testing.T) {
	t.Parallel()
	steps := mustParse(t, `[{"id":"up","type":"upsertCompany","with":{"canonicalName":"Acme"}}]`)
	if _, err := (Executor{}).Execute(context.Background(), "org1", steps, nil, false); err == nil {
		t.Fatal("Execute succeeded without Companies")
	}
}

func TestExecuteFailsUnknownTypesFromUnvalidatedSteps(t *testing.T) {
	t.Parallel()
	steps := []Step{{ID: "x", Type: "http"}}
	res, err := Executor{}.Execute(context.Background(), "org1", steps, nil, false)
	if err != nil || res.Error == nil || res.Error.Step != "x" || !strings.Contains(res.Error.Message, `unknown type "http"`) {
		t.Fatalf("Execute = %+v, %v", res.Error, err)
	}
}

func TestExecuteFailsAStepWhoseOutputIsTooLarge(t *testing.T) {
	t.Parallel()
	// Each step copies the whole context, doubling it; unbounded, fifty of
	// them would need 2^50 times the input's memory.
	raw := make([]string, MaxSteps)
	for i := range raw {
		raw[i] = `{"id":"s` + strings.Repeat("x", i) + `","type":"set","with":{"all.$":"$"}}`
	}
	input := map[string]any{"blob": strings.Repeat("a", 10_000)}
	res, err := Executor{}.Execute(context.Background(), "org1", mustParse(t, "["+strings.Join(raw, ",")+"]"), input, false)
	if err != nil {
		t.Fatal(err)
	}
	if res.Error == nil || !strings.Contains(res.Error.Message, "more than the 224 KiB (229376 bytes) a step may output") {
		t.Fatalf("run error = %+v, want the output size limit", res.Error)
	}
}
