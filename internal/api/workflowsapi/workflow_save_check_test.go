package workflowsapi_test

import (
	"reflect"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// A workflow whose step writes what every run would refuse (a read-only
// company field) is a 400 when it is created or updated, naming the step
// and the field, and nothing changes; what the runs accept (enrichable
// attributes an upsert makes workflow candidates, read-only attributes
// an addEnrichment step adds candidates of) is saved and runs.
func TestAStepWritingAReadOnlyFieldIsRefusedWhenTheWorkflowIsSaved(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	broken := []any{
		apitest.Step("read", "set", map[string]any{"name.$": "$.input.name"}),
		apitest.Step("size", "set", map[string]any{"n.$": "$.input.employees"}),
		apitest.Step("up", "upsertCompany", map[string]any{"canonicalName.$": "$.steps.read.name", "employeeCount.$": "$.steps.size.n"}),
	}
	r := c.Do("POST", "/v1/workflows", map[string]any{"name": "Broken", "steps": broken})
	apitest.WantError(t, r, 400, `steps[2].with.employeeCount.$ is refused: step 2 ("up", upsertCompany) would fail on every run with: employeeCount is read-only`)
	apitest.WantParam(t, r, "steps[2].with.employeeCount.$")
	if list := c.Do("GET", "/v1/workflows", nil).Want(t, 200).List(t); len(list) != 0 {
		t.Errorf("a refused create stored %d workflows", len(list))
	}

	works := []any{
		apitest.Step("up", "upsertCompany", map[string]any{"canonicalName.$": "$.input.name", "website": "https://saved.example",
			"sector": "Fintech", "description.$": "$.input.about"}),
		apitest.Step("enrich", "addEnrichment", map[string]any{"resourceId.$": "$.steps.up.company.id",
			"values": []any{map[string]any{"property": "employeeCount", "value.$": "$.input.employees", "confidence": 70}}}),
	}
	wf := apitest.CreateWorkflow(t, c, map[string]any{"name": "Works", "steps": works})
	path := "/v1/workflows/" + apitest.IDOf(t, wf)
	run := apitest.RunToEnd(t, c, apitest.IDOf(t, wf), map[string]any{"input": map[string]any{"name": "Saved Co", "about": "Pays.", "employees": 12}})
	apitest.WantStatus(t, run, "completed")

	before := c.Do("GET", path, nil).Want(t, 200).Object(t)
	r = c.Do("PUT", path, map[string]any{"steps": append(works,
		apitest.Step("tag", "tagCompany", map[string]any{"companyId.$": "$.steps.up.company.id", "tags": []any{"ok", " "}}))})
	apitest.WantError(t, r, 400, `steps[2].with.tags[1] is refused: step 2 ("tag", tagCompany) would fail on every run with: tags[1] must not be empty`)
	apitest.WantParam(t, r, "steps[2].with.tags[1]")
	if after := c.Do("GET", path, nil).Want(t, 200).Object(t); !reflect.DeepEqual(after, before) {
		t.Errorf("a refused update changed the workflow:\nbefore %s\nafter  %s", apitest.JSONOf(before), apitest.JSONOf(after))
	}
}
