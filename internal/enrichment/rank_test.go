package enrichment

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/clock"
)

func TestCandidatesRankByPinThenConfidenceThenSourceThenCaptureThenID(t *testing.T) {
	at := func(s string) clock.Time { tm, _ := time.Parse(time.RFC3339, s); return clock.Of(tm) }
	early, late := at("2026-01-01T00:00:00Z"), at("2026-02-01T00:00:00Z")
	base := Value{ID: "env_1", Source: SourceProvider, Confidence: 50, CapturedOn: early}
	with := func(f func(*Value)) Value { v := base; f(&v); return v }
	cases := []struct {
		name          string
		better, worse Value
	}{
		{"pinned beats confidence", with(func(v *Value) { v.Pinned, v.PinnedAt, v.Confidence = true, early.Ptr(), 1 }), with(func(v *Value) { v.Confidence = 99 })},
		{"the later pin wins", with(func(v *Value) { v.Pinned, v.PinnedAt = true, late.Ptr() }), with(func(v *Value) { v.Pinned, v.PinnedAt = true, early.Ptr() })},
		{"higher confidence", with(func(v *Value) { v.Confidence = 51 }), base},
		{"user over document", with(func(v *Value) { v.Source = SourceUser }), with(func(v *Value) { v.Source = SourceDocument })},
		{"document over provider", with(func(v *Value) { v.Source = SourceDocument }), base},
		{"provider over workflow", base, with(func(v *Value) { v.Source = SourceWorkflow })},
		{"workflow over web", with(func(v *Value) { v.Source = SourceWorkflow }), with(func(v *Value) { v.Source = SourceWeb })},
		{"newer capture", with(func(v *Value) { v.CapturedOn = late }), base},
		{"greater id", with(func(v *Value) { v.ID = "env_2" }), base},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if Compare(tc.better, tc.worse) >= 0 || Compare(tc.worse, tc.better) <= 0 {
				t.Errorf("Compare does not rank %+v before %+v", tc.better, tc.worse)
			}
		})
	}
}

func TestReconcileLeavesPropertiesWithoutCandidatesAloneAndCutsLongShownValues(t *testing.T) {
	typ := &Type{Properties: []string{"description", "sector"}}
	long := make([]byte, MaxShownText+10)
	for i := range long {
		long[i] = 'a'
	}
	v, _ := json.Marshal(string(long))
	r := typ.Reconcile([]Value{{ID: "env_1", Property: "description", Value: v}}, clock.Now())
	if v, ok := r.Values["sector"]; ok {
		t.Errorf("sector = %s: a property without candidates is not the reconciliation's to set", v)
	}
	if got := []rune(r.Candidates["description"][0].Value); len(got) != MaxShownText || got[len(got)-1] != '…' {
		t.Errorf("shown value has %d characters, want %d ending in …", len(got), MaxShownText)
	}
	if string(r.Values["description"]) != string(v) {
		t.Errorf("the reconciled value was cut")
	}
}

// A value stored when provider and sourceId were "" when not given reads
// as one stored since: not given (null); given ones read as stored.
func TestAStoredEmptyProviderOrSourceIDReadsAsNotGiven(t *testing.T) {
	var old, given Value
	if err := json.Unmarshal([]byte(`{"id":"env_1","property":"sector","value":"x","provider":"","source":"user","sourceId":""}`), &old); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"id":"env_2","property":"sector","value":"x","provider":"crunchbase","source":"provider","sourceId":"cb-1"}`), &given); err != nil {
		t.Fatal(err)
	}
	if old.Provider != nil || old.SourceID != nil || old.ID != "env_1" || old.Source != "user" {
		t.Errorf("an old value reads as %+v", old)
	}
	if given.Provider == nil || *given.Provider != "crunchbase" || given.SourceID == nil || *given.SourceID != "cb-1" {
		t.Errorf("a given provider and sourceId read as %v, %v", given.Provider, given.SourceID)
	}
	b, _ := json.Marshal(old)
	if want := `"provider":null`; !strings.Contains(string(b), want) {
		t.Errorf("an old value answers %s, want %s", b, want)
	}
}
