package runs

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestTheDeclarationHasEveryFieldOfTheRunRecord(t *testing.T) {
	t.Parallel()
	raw, _ := json.Marshal(Run{Title: "t", RequestID: "r"}) // a run without a title or request id leaves them out
	var shown map[string]any
	_ = json.Unmarshal(raw, &shown)
	var want, got []string
	for k := range shown {
		want = append(want, k)
	}
	for _, f := range Def.AllFields() {
		got = append(got, f.Name)
		if !f.ReadOnly {
			t.Errorf("%s is writable; a run's fields are the service's (its title changes by PATCH only)", f.Name)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Def fields = %v, want the record's %v", got, want)
	}
}

func TestTheRunBodiesAreDecodedFromTheirDeclarations(t *testing.T) {
	t.Parallel()
	n, err := DecodeNewRun([]byte(`{"input":{"k":1},"dryRun":true,"title":" Nightly "}`))
	if err != nil || n.Input["k"] == nil || !n.DryRun || n.Title != "Nightly" || n.StartedBy != StartedByAPI {
		t.Errorf("DecodeNewRun = %+v, %v", n, err)
	}
	for body, want := range map[string]string{
		`{"title":null}`:         "title must be a string of 1 to 120 characters",
		`{"input":[1]}`:          "input",
		`{"dryRun":"yes"}`:       "dryRun",
		`{"status":"completed"}`: "status",
	} {
		if _, err := DecodeNewRun([]byte(body)); err == nil || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
			t.Errorf("DecodeNewRun(%s) = %v, want an error starting %q", body, err, want)
		}
	}
	if title, err := DecodeTitle([]byte(`{"title":" Renamed "}`)); err != nil || title != "Renamed" {
		t.Errorf("DecodeTitle = %q, %v", title, err)
	}
	for _, body := range []string{`{}`, `{"title":null}`, `{"title":""}`, `{"title":"` + string(make([]byte, 0)) + `   "}`} {
		if _, err := DecodeTitle([]byte(body)); err == nil || err.Error()[:len("title ")] != "title " {
			t.Errorf("DecodeTitle(%s) = %v, want an error naming title", body, err)
		}
	}
}
