package runs

import (
	"encoding/json"
	"testing"
)

// A run stored before what started it was named startedBy reads with it.
func TestARunStoredWithTriggerReadsAsStartedBy(t *testing.T) {
	for stored, want := range map[string]string{
		`{"id":"run_1","trigger":"webhook","organizationId":"org"}`:                   StartedByWebhook,
		`{"id":"run_1","startedBy":"retry","organizationId":"org"}`:                   StartedByRetry,
		`{"id":"run_1","startedBy":"api","trigger":"webhook","organizationId":"org"}`: StartedByAPI,
	} {
		var r record
		if err := json.Unmarshal([]byte(stored), &r); err != nil {
			t.Fatal(err)
		}
		if r.StartedBy != want || r.ID != "run_1" || r.OrganizationID != "org" {
			t.Errorf("%s: %+v, want startedBy %s", stored, r, want)
		}
		b, _ := json.Marshal(r)
		var back map[string]any
		json.Unmarshal(b, &back)
		if back["startedBy"] != want || back["trigger"] != nil {
			t.Errorf("%s stored again as %s", stored, b)
		}
	}
}

// A stored run's numbers stay exactly as sent.
func TestAStoredRunKeepsItsNumbersExact(t *testing.T) {
	var r record
	if err := json.Unmarshal([]byte(`{"id":"run_1","input":{"x":3.14159265358979323846264338}}`), &r); err != nil {
		t.Fatal(err)
	}
	if n, ok := r.Input["x"].(json.Number); !ok || n.String() != "3.14159265358979323846264338" {
		t.Errorf("input.x read as %#v", r.Input["x"])
	}
}
