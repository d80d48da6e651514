package recordsapi_test

import (
	"sync"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestSingleRecordResponsesCarryAnETagThatChangesWithEveryWrite(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	created := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Acme"}).Want(t, 201)
	id := apitest.IDOf(t, created.Object(t))
	tag1 := apitest.ETagOf(t, created)
	if got := apitest.ETagOf(t, c.Do("GET", "/v1/companies/"+id, nil).Want(t, 200)); got != tag1 {
		t.Fatalf("GET ETag %s, create said %s", got, tag1)
	}
	tag2 := apitest.ETagOf(t, c.Do("PUT", "/v1/companies/"+id, map[string]any{"sector": "Robotics"}).Want(t, 200))
	if tag2 == tag1 {
		t.Fatalf("ETag did not change with the update: %s", tag2)
	}
	// A request that changes nothing keeps the tag.
	if got := apitest.ETagOf(t, c.Do("PUT", "/v1/companies/"+id, map[string]any{"sector": "Robotics"}).Want(t, 200)); got != tag2 {
		t.Fatalf("unchanged update moved the ETag from %s to %s", tag2, got)
	}

	wf := c.Do("POST", "/v1/workflows", map[string]any{"name": "W"}).Want(t, 201)
	apitest.ETagOf(t, wf)
	apitest.ETagOf(t, c.Do("GET", "/v1/workflows/"+apitest.IDOf(t, wf.Object(t)), nil).Want(t, 200))
	run := c.Do("POST", "/v1/workflows/"+apitest.IDOf(t, wf.Object(t))+"/runs", map[string]any{}).Want(t, 202)
	apitest.ETagOf(t, c.Do("GET", "/v1/workflow-runs/"+apitest.IDOf(t, run.Object(t)), nil).Want(t, 200))
}

func TestIfMatchMakesUpdatesAndDeletesConditional(t *testing.T) {
	t.Parallel()
	e := apitest.New(t).ThroughPrism(t)
	c := e.Org(t)

	t.Run("company PUT and DELETE", func(t *testing.T) {
		t.Parallel()
		c := e.As(t, c)
		created := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Acme"}).Want(t, 201)
		id, tag1 := apitest.IDOf(t, created.Object(t)), apitest.ETagOf(t, created)
		tag2 := apitest.ETagOf(t, c.Do("PUT", "/v1/companies/"+id, map[string]any{"sector": "A"}, "If-Match", tag1).Want(t, 200))

		stale := c.Do("PUT", "/v1/companies/"+id, map[string]any{"sector": "B"}, "If-Match", tag1)
		apitest.WantError(t, stale, 412, "If-Match")
		if got := c.Do("GET", "/v1/companies/"+id, nil).Want(t, 200).Object(t)["sector"]; got != "A" {
			t.Fatalf("a refused update changed the record: sector %v", got)
		}
		for _, bad := range []string{"W/" + tag2, `"nope"`, tag2[1 : len(tag2)-1]} {
			apitest.WantError(t, c.Do("PUT", "/v1/companies/"+id, map[string]any{"sector": "C"}, "If-Match", bad), 412)
		}
		c.Do("PUT", "/v1/companies/"+id, map[string]any{"sector": "D"}, "If-Match", `"999", `+tag2).Want(t, 200)
		tag3 := apitest.ETagOf(t, c.Do("GET", "/v1/companies/"+id, nil).Want(t, 200))
		c.Do("PUT", "/v1/companies/"+id, map[string]any{"sector": "E"}, "If-Match", "*").Want(t, 200)

		apitest.WantError(t, c.Do("DELETE", "/v1/companies/"+id, nil, "If-Match", tag3), 412)
		tag4 := apitest.ETagOf(t, c.Do("GET", "/v1/companies/"+id, nil).Want(t, 200))
		c.Do("DELETE", "/v1/companies/"+id, nil, "If-Match", tag4).Want(t, 204)
		apitest.WantError(t, c.Do("DELETE", "/v1/companies/"+id, nil, "If-Match", tag4), 404)
		apitest.WantError(t, c.Do("PUT", "/v1/companies/"+id, map[string]any{"sector": "F"}, "If-Match", "*"), 404)
	})

	t.Run("workflow PUT and run PATCH", func(t *testing.T) {
		t.Parallel()
		c := e.As(t, c)
		wf := c.Do("POST", "/v1/workflows", map[string]any{"name": "W"}).Want(t, 201)
		id, tag := apitest.IDOf(t, wf.Object(t)), apitest.ETagOf(t, wf)
		c.Do("PUT", "/v1/workflows/"+id, map[string]any{"name": "W2"}, "If-Match", tag).Want(t, 200)
		apitest.WantError(t, c.Do("PUT", "/v1/workflows/"+id, map[string]any{"name": "W3"}, "If-Match", tag), 412)

		run := apitest.AwaitRun(t, c, apitest.IDOf(t, c.Do("POST", "/v1/workflows/"+id+"/runs", map[string]any{}).Want(t, 202).Object(t)))
		runTag := apitest.ETagOf(t, c.Do("GET", "/v1/workflow-runs/"+apitest.IDOf(t, run), nil).Want(t, 200))
		c.Do("PATCH", "/v1/workflow-runs/"+apitest.IDOf(t, run), map[string]any{"title": "renamed"}, "If-Match", runTag).Want(t, 200)
		apitest.WantError(t, c.Do("PATCH", "/v1/workflow-runs/"+apitest.IDOf(t, run), map[string]any{"title": "again"}, "If-Match", runTag), 412)
		apitest.WantError(t, c.Do("DELETE", "/v1/workflows/"+id, nil, "If-Match", tag), 412)
	})

	t.Run("another organization's record is not found whatever the tag", func(t *testing.T) {
		t.Parallel()
		c := e.As(t, c)
		other := e.Org(t)
		created := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Mine"}).Want(t, 201)
		id, tag := apitest.IDOf(t, created.Object(t)), apitest.ETagOf(t, created)
		apitest.WantError(t, other.Do("PUT", "/v1/companies/"+id, map[string]any{"sector": "X"}, "If-Match", tag), 404)
		apitest.WantError(t, other.Do("DELETE", "/v1/companies/"+id, nil, "If-Match", "*"), 404)
	})
}

func TestConcurrentUpdatesWithTheSameIfMatchLetExactlyOneWin(t *testing.T) {
	t.Parallel()
	e := apitest.New(t)
	c := e.Org(t)
	created := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Acme"}).Want(t, 201)
	id, tag := apitest.IDOf(t, created.Object(t)), apitest.ETagOf(t, created)
	const n = 10
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = c.Do("PUT", "/v1/companies/"+id, map[string]any{"description": string(rune('a' + i))}, "If-Match", tag).Status
		}()
	}
	wg.Wait()
	won := 0
	for _, s := range statuses {
		switch s {
		case 200:
			won++
		case 412:
		default:
			t.Fatalf("status %d, want 200 or 412: %v", s, statuses)
		}
	}
	if won != 1 {
		t.Fatalf("%d updates won with the same If-Match, want exactly 1: %v", won, statuses)
	}
}
