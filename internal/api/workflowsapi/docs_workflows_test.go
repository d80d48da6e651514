package workflowsapi_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// docExample is one example of docs/workflows.md: a workflow, a run body
// and the output or error the run must end with.
type docExample struct {
	title                     string
	workflow, run, want       string
	wantFailed                bool
	workflowSeen, runSeen, ok bool
}

var docBlock = regexp.MustCompile("(?s)```json (workflow|run|output|error)\n(.*?)```")

// docExamples reads the examples of docs/workflows.md: under each "###"
// heading, the blocks ```json workflow, ```json run and ```json output (or
// ```json error).
func docExamples(t *testing.T) []docExample {
	t.Helper()
	b, err := os.ReadFile("../../../docs/workflows.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []docExample
	for _, section := range strings.Split(string(b), "\n### ")[1:] {
		ex := docExample{title: strings.SplitN(section, "\n", 2)[0]}
		for _, m := range docBlock.FindAllStringSubmatch(section, -1) {
			switch m[1] {
			case "workflow":
				ex.workflow, ex.workflowSeen = m[2], true
			case "run":
				ex.run, ex.runSeen = m[2], true
			case "output", "error":
				ex.want, ex.wantFailed, ex.ok = m[2], m[1] == "error", true
			}
		}
		if ex.workflowSeen || ex.runSeen || ex.ok {
			if !ex.workflowSeen || !ex.runSeen || !ex.ok {
				t.Fatalf("example %q needs a workflow, a run and an output or error block", ex.title)
			}
			out = append(out, ex)
		}
	}
	if len(out) < 6 {
		t.Fatalf("found %d examples in docs/workflows.md", len(out))
	}
	return out
}

func TestTheExamplesOfTheWorkflowDocsRunAsDocumented(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	for _, ex := range docExamples(t) {
		t.Run(ex.title, func(t *testing.T) {
			t.Parallel()
			c := e.As(t, c)
			wf := c.Do("POST", "/v1/workflows", ex.workflow).Want(t, 201).Object(t)
			run := apitest.AwaitRun(t, c, apitest.IDOf(t, c.Do("POST", "/v1/workflows/"+apitest.IDOf(t, wf)+"/runs", ex.run).Want(t, 202).Object(t)))
			var want any
			if err := json.Unmarshal([]byte(ex.want), &want); err != nil {
				t.Fatalf("the documented result is not JSON: %v", err)
			}
			field, status := "output", "completed"
			if ex.wantFailed {
				field, status = "error", "failed"
			}
			apitest.WantStatus(t, run, status)
			if !apitest.Contains(run[field], want) {
				t.Fatalf("run %s is\n%s\nwhich does not contain the documented\n%s", field, apitest.JSONOf(run[field]), apitest.JSONOf(want))
			}
		})
	}
}
