package workflows

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestTheDeclarationHasEveryFieldOfTheWorkflowRecordInOrder(t *testing.T) {
	t.Parallel()
	var got []string
	for _, f := range Def.AllFields() {
		got = append(got, f.Name)
	}
	want := []string{"id", "name", "description", "steps", "trigger", "createdAt", "updatedAt"}
	if !slices.Equal(got, want) {
		t.Errorf("Def fields = %v, want %v", got, want)
	}
	raw, _ := json.Marshal(Workflow{Trigger: WebhookTrigger{Secret: "s"}})
	var shown struct{ Trigger map[string]any }
	_ = json.Unmarshal(raw, &shown)
	trigger, _ := Def.Field("trigger")
	for _, f := range trigger.Fields {
		if _, ok := shown.Trigger[f.Name]; !ok {
			t.Errorf("trigger.%s is declared but not in the record %s", f.Name, raw)
		}
	}
}

func TestDecodeKeepsTheStepErrorPathsOfTheStepLanguage(t *testing.T) {
	t.Parallel()
	_, err := DecodeCreate([]byte(`{"name":"x","steps":[{"id":"a","type":"set"},{"id":"b","type":"set"},{"id":"c","type":"set","with":{"name.$":"input"}}]}`))
	if err == nil || err.Error()[:len("steps[2].with.name.$ ")] != "steps[2].with.name.$ " {
		t.Errorf("err = %v, want one naming steps[2].with.name.$", err)
	}
}

func TestDecodeChangesOnlyTheTriggerPartsSent(t *testing.T) {
	t.Parallel()
	in, err := DecodeUpdate([]byte(`{"trigger":{"headerName":null}}`))
	if err != nil || !in.HeaderName.Set || !in.HeaderName.Null || in.Scheme.Set || in.Name.Set || in.Steps.Set {
		t.Errorf("update = %+v, %v; want headerName cleared and nothing else", in, err)
	}
	in, err = DecodeCreate([]byte(`{"name":" GH ","trigger":{"scheme":"hmac-sha256"},"steps":null}`))
	if err != nil || in.Name.Value != "GH" || in.Scheme.Value != "hmac-sha256" || in.HeaderName.Set || !in.Steps.Set || len(in.Steps.Value) != 0 {
		t.Errorf("create = %+v, %v", in, err)
	}
	for _, body := range []string{`{"id":"wf_1"}`, `{"trigger":{"slug":"x"}}`, `{"trigger":{"url":"https://x.example"}}`, `{"createdAt":null}`} {
		if _, err := DecodeUpdate([]byte(body)); err == nil {
			t.Errorf("DecodeUpdate(%s) accepted a read-only field", body)
		}
	}
}
