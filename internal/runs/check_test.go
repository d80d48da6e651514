package runs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/enrichment"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/steps"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// saveCheckCase is a workflow whose last step writes: what its runs do
// with the input, and what the check made when it is saved says.
type saveCheckCase struct {
	name  string
	steps string // the workflow's steps, JSON
	input map[string]any
	// refused is the parameter the check names, "" when the step is
	// accepted (and its runs complete).
	refused string
	// says is in the run's error and in the check's; saveSays, when
	// set, is in the check's instead (a message the run words less
	// helpfully).
	says, saveSays string
}

// upsert is an upsertCompany step "up" with the fields with, JSON.
func upsert(with string) string {
	return `{"id":"up","type":"upsertCompany","with":` + with + `}`
}

// upsertThen is steps that file a company ("up"), then step.
func upsertThen(step string) string {
	return `[` + upsert(`{"canonicalName":"Acme"}`) + `,` + step + `]`
}

// A step is refused when it is saved exactly when its runs refuse it:
// for each kind of step that writes a record (upsertCompany, tagCompany,
// addEnrichment), a field, tag or value every run refuses is refused,
// naming it, and one the runs accept is accepted. The workflows are
// saved unchecked here, so that their runs show what they refuse.
func TestTheSaveCheckOfEachWritingStepAgreesWithItsRuns(t *testing.T) {
	t.Parallel()
	st := testenv.Store(t)
	wfs := workflows.NewService(st, "http://example.test")
	cs := companies.NewService(st)
	svc := runs.NewService(st, wfs, cs, runs.UseEngine(held{}))
	svc.UseEnrichment(enrichment.NewService(st, func(context.Context, string, string) (bool, error) { return false, nil },
		enrichment.Companies(cs)))
	long := strings.Repeat("x", 101)
	cases := []saveCheckCase{
		// upsertCompany: the company's update body.
		{name: "upsertCompany: writable fields, literal and from paths", steps: `[` + upsert(`{"canonicalName":"Acme","website":"acme.com",
			"description":null,"sector.$":"$.input.sector","location":{"city.$":"$.input.city"}}`) + `]`,
			input: map[string]any{"sector": "Fintech", "city": "Paris"}},
		{name: "upsertCompany: an enrichable attribute, a workflow candidate", steps: `[` + upsert(`{"canonicalName":"Acme","industry":"Payments","shortDescription.$":"$.input.s"}`) + `]`,
			input: map[string]any{"s": "Pays."}},
		{name: "upsertCompany: a read-only field", steps: `[` + upsert(`{"canonicalName":"Acme","employeeCount":5}`) + `]`,
			refused: "steps[0].with.employeeCount", says: "employeeCount is read-only"},
		{name: "upsertCompany: a read-only field a path sets", steps: `[` + upsert(`{"canonicalName":"Acme","employeeCount.$":"$.input.n"}`) + `]`,
			input: map[string]any{"n": 5}, refused: "steps[0].with.employeeCount.$", says: "employeeCount is read-only"},
		{name: "upsertCompany: a read-only field of the API's", steps: `[` + upsert(`{"canonicalName":"Acme","origin":"user"}`) + `]`,
			refused: "steps[0].with.origin", says: "origin is read-only"},
		{name: "upsertCompany: an unknown field", steps: `[` + upsert(`{"canonicalName":"Acme","foundedYear.$":"$.input.y"}`) + `]`,
			input: map[string]any{"y": 1999}, refused: "steps[0].with.foundedYear.$", says: "foundedYear is not an accepted field"},
		{name: "upsertCompany: a literal value of the wrong kind", steps: `[` + upsert(`{"canonicalName":"Acme","website":"not a url"}`) + `]`,
			refused: "steps[0].with.website", says: "website must be a URL"},
		{name: "upsertCompany: an unknown part of a literal object", steps: `[` + upsert(`{"canonicalName":"Acme","location":{"zip":"75001"}}`) + `]`,
			refused: "steps[0].with.location.zip", says: "location.zip is not an accepted field"},
		{name: "upsertCompany: a value a path sets, known only at run time", steps: `[` + upsert(`{"canonicalName":"Acme","website.$":"$.input.site"}`) + `]`,
			input: map[string]any{"site": "https://acme.example"}},

		// tagCompany: the company's tags.
		{name: "tagCompany: tags", steps: upsertThen(`{"id":"tag","type":"tagCompany","with":{"companyId.$":"$.steps.up.company.id","tags":["a","b"]}}`)},
		{name: "tagCompany: a tag too long", steps: upsertThen(`{"id":"tag","type":"tagCompany","with":{"companyId.$":"$.steps.up.company.id","tags":["a","` + long + `"]}}`),
			refused: "steps[1].with.tags[1]", says: "tags[1] must be at most 100 characters"},
		{name: "tagCompany: a blank tag", steps: upsertThen(`{"id":"tag","type":"tagCompany","with":{"companyId.$":"$.steps.up.company.id","tags":["  "]}}`),
			refused: "steps[1].with.tags[0]", says: "tags[0] must not be empty"},
		{name: "tagCompany: tags a path sets", steps: upsertThen(`{"id":"tag","type":"tagCompany","with":{"companyId.$":"$.steps.up.company.id","tags.$":"$.input.tags"}}`),
			input: map[string]any{"tags": []any{"x"}}},

		// addEnrichment: candidates of the record's enrichable attributes.
		{name: "addEnrichment: a read-only attribute, which enrichment sets", steps: upsertThen(`{"id":"enrich","type":"addEnrichment","with":{"resourceId.$":"$.steps.up.company.id",
			"values":[{"property":"employeeCount","value":40,"confidence":60}]}}`)},
		{name: "addEnrichment: a value a path sets", steps: upsertThen(`{"id":"enrich","type":"addEnrichment","with":{"resourceId.$":"$.steps.up.company.id",
			"values":[{"property":"employeeCount","value.$":"$.input.n","confidence":60}]}}`), input: map[string]any{"n": 12}},
		{name: "addEnrichment: an attribute that is not enrichable", steps: upsertThen(`{"id":"enrich","type":"addEnrichment","with":{"resourceId.$":"$.steps.up.company.id",
			"values":[{"property":"origin","value":"user","confidence":60}]}}`),
			refused: "steps[1].with.values[0].property", says: "values[0].property must be one of"},
		{name: "addEnrichment: an attribute that is not enrichable, its value from a path", steps: upsertThen(`{"id":"enrich","type":"addEnrichment","with":{"resourceId.$":"$.steps.up.company.id",
			"values":[{"property":"sector","value":"Fintech","confidence":60},{"property":"origin","value.$":"$.input.o","confidence":60}]}}`),
			input: map[string]any{"o": "user"}, refused: "steps[1].with.values[1].property", says: "values[1].property must be one of"},
		{name: "addEnrichment: a literal value of the wrong kind", steps: upsertThen(`{"id":"enrich","type":"addEnrichment","with":{"resourceId.$":"$.steps.up.company.id",
			"values":[{"property":"employeeCount","value":"many","confidence":60}]}}`),
			refused: "steps[1].with.values[0].value", says: "values[0].value must be a number"},
		{name: "addEnrichment: a type without enrichment", steps: upsertThen(`{"id":"enrich","type":"addEnrichment","with":{"resourceType":"widgets",
			"resourceId.$":"$.steps.up.company.id","values":[{"property":"sector","value":"Fintech","confidence":60}]}}`),
			refused: "steps[1].with.resourceType", says: "not found", saveSays: `"widgets" has no enrichment values`},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			org := fmt.Sprint("org", i) // an organization per case: each files its own Acme
			parsed, err := steps.Parse([]byte(tc.steps))
			if err != nil {
				t.Fatalf("the steps do not parse: %v", err)
			}
			saved := svc.CheckSteps(parsed)
			wf, err := wfs.Create(ctx, org, workflows.Input{Name: jsonbody.Field[string]{Set: true, Value: tc.name},
				Steps: jsonbody.Field[[]steps.Step]{Set: true, Value: parsed}})
			if err != nil {
				t.Fatal(err)
			}
			queued, err := svc.Create(ctx, org, wf, runs.NewRun{StartedBy: runs.StartedByAPI, Input: tc.input})
			if err != nil {
				t.Fatal(err)
			}
			run, err := svc.Execute(ctx, runs.ExecutionInput{OrganizationID: org, RunID: queued.ID, WorkflowID: wf.ID})
			if err != nil {
				t.Fatal(err)
			}
			if tc.refused == "" {
				if saved != nil {
					t.Errorf("the check refuses a step its runs accept: %v", saved)
				}
				if run.Status != runs.Completed {
					t.Errorf("the run is %s (%+v), want completed", run.Status, run.Error)
				}
				return
			}
			if run.Status != runs.Failed || run.Error == nil || run.Error.Step != parsed[len(parsed)-1].ID || !strings.Contains(run.Error.Message, tc.says) {
				t.Fatalf("the run is %s (%+v), want failed at its last step with %q", run.Status, run.Error, tc.says)
			}
			var ve *steps.ValidationError
			if !errors.As(saved, &ve) || ve.Field != tc.refused {
				t.Fatalf("the check says %v, want it to refuse %s", saved, tc.refused)
			}
			want := tc.says
			if tc.saveSays != "" {
				want = tc.saveSays
			}
			step := parsed[len(parsed)-1]
			if !strings.Contains(ve.Message, want) || !strings.Contains(ve.Message, fmt.Sprintf("step %d (%q, %s)", len(parsed)-1, step.ID, step.Type)) {
				t.Errorf("the check says %q, want the step named and %q", ve.Message, want)
			}
		})
	}
}
