package api_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Stored records that the JSON decoder refuses.
var undecodableDocs = map[string]string{
	"nested 10,001 levels": `{"status":"queued","input":{"deep":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`,
	"invalid JSON":         `{"status":"queued","input":{"a":`,
}

// putRaw writes an item straight into the table, as a damaged or older
// record would be found there.
func putRaw(t *testing.T, e *apitest.Env, attrs map[string]string) {
	t.Helper()
	testenv.PutRaw(t, e.Store, attrs)
}

// putUnreadableRun stores a run of the workflow whose record cannot be
// decoded, unfinished, with the index entries a real run has.
// putUnreadableRun stores a run that cannot be decoded, as the table's
// layout 1 indexed an unfinished run (its marker in GSI4): the sweeps of
// layout 2 still find it.
func putUnreadableRun(t *testing.T, e *apitest.Env, org, workflowID, doc string) string {
	t.Helper()
	id := ids.New("run")
	part := store.OrgPartition(org, "RUN")
	putRaw(t, e, map[string]string{
		store.AttrPK: part, store.AttrSK: id, store.AttrType: "RUN", store.AttrDoc: doc,
		store.GSI3.PK: part + "#workflowId=" + workflowID, store.GSI3.SK: id,
		store.GSI4.PK: "GLOBAL#RUN#active=1", store.GSI4.SK: id,
	})
	return id
}

func TestOneUnreadableRunNeverFailsTheRunListsItsReadOrTheStartUpRecovery(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	wf := apitest.WorkflowWith(t, c, "W")
	var good, broken []string
	for range 2 {
		good = append(good, apitest.IDOf(t, apitest.RunToEnd(t, c, wf, map[string]any{})))
	}
	for _, doc := range undecodableDocs {
		broken = append(broken, putUnreadableRun(t, e, c.Org, wf, doc))
	}
	all := append(slices.Clone(good), broken...)
	slices.Reverse(all)

	wantUnreadable := func(run map[string]any) {
		t.Helper()
		msg, _ := apitest.ObjectAt(t, run, "error")["message"].(string)
		if run["status"] != "failed" || !strings.HasPrefix(msg, "the stored run could not be read: ") || run["workflowId"] != wf {
			t.Errorf("an unreadable run reads as %s; want failed, of its workflow, saying the stored run could not be read", apitest.JSONOf(run))
		}
	}
	for _, path := range []string{"/v1/workflow-runs", "/v1/workflows/" + wf + "/runs"} {
		list := c.Do("GET", path, nil).Want(t, 200).List(t)
		if got := apitest.IDsOf(t, list); !slices.Equal(got, all) {
			t.Errorf("GET %s lists %v, want %v", path, got, all)
		}
		for _, run := range list {
			if slices.Contains(broken, run["id"].(string)) {
				wantUnreadable(run)
			}
		}
		if got, _ := apitest.Walk(t, c, path+"?limit=1", "id"); !slices.Equal(got, all) {
			t.Errorf("paging %s by one = %v, want %v", path, got, all)
		}
	}
	for _, id := range broken {
		wantUnreadable(c.Do("GET", "/v1/workflow-runs/"+id, nil).Want(t, 200).Object(t))
	}

	if apitest.Lambdas() {
		// Recover sweeps the runs of every organization in the table, which
		// in this mode the other tests share (and their runs are running).
		return
	}
	resumed, failed, err := e.Deps.Runs.Recover(t.Context())
	if err != nil || resumed != 0 || failed != len(broken) {
		t.Fatalf("Recover = %d resumed, %d failed, %v; want the %d unreadable runs failed", resumed, failed, err, len(broken))
	}
	if resumed, failed, err := e.Deps.Runs.Recover(t.Context()); err != nil || resumed+failed != 0 {
		t.Errorf("a second Recover = %d resumed, %d failed, %v; want nothing left unfinished", resumed, failed, err)
	}
	for _, id := range broken {
		wantUnreadable(c.Do("GET", "/v1/workflow-runs/"+id, nil).Want(t, 200).Object(t))
	}
	for _, id := range good {
		apitest.WantStatus(t, c.Do("GET", "/v1/workflow-runs/"+id, nil).Want(t, 200).Object(t), "completed")
	}
}

func TestAnUndecodableCompanyIsLeftOutOfListsInEveryOrder(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	var good []string
	for _, n := range []string{"Beta", "Alpha"} {
		good = append(good, apitest.IDOf(t, apitest.CreateCompany(t, c, map[string]any{"canonicalName": n})))
	}
	part := store.OrgPartition(c.Org, "COMPANY")
	for _, doc := range undecodableDocs {
		id := ids.New("cmp")
		putRaw(t, e, map[string]string{
			store.AttrPK: part, store.AttrSK: id, store.AttrType: "COMPANY", store.AttrDoc: doc,
			store.GSI1.PK: part, store.GSI1.SK: "broken\x00" + id,
		})
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{good[1], good[0]}},
		{"direction=asc", good},
		{"sort=canonicalName&direction=asc", []string{good[1], good[0]}},
	} {
		if got := apitest.ListIDs(t, c, tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("GET /v1/companies?%s = %v, want the readable companies %v", tc.query, got, tc.want)
		}
	}
}
