package webhook_test

import (
	"reflect"
	"testing"

	"github.com/sourcebase/sourcebase/internal/webhook"
)

func TestRedactReplacesEveryStringThatIsACurrentOrPastSecret(t *testing.T) {
	current, past, never := webhook.NewSecret(), webhook.NewSecret(), webhook.NewSecret()
	v := webhook.Verifier{Scheme: webhook.SharedSecret, Secret: current, PastSecretHashes: []string{webhook.HashSecret(past)}}
	got := v.Redact(map[string]any{
		"a": current, "b": " " + past + "\n", "c": []any{"x", past, map[string]any{"d": "Bearer " + current}},
		"e": []string{past, "y"}, "f": never, "g": past + "x", "n": 7, "z": nil,
	})
	want := map[string]any{
		"a": "[redacted]", "b": "[redacted]", "c": []any{"x", "[redacted]", map[string]any{"d": "[redacted]"}},
		"e": []string{"[redacted]", "y"}, "f": never, "g": past + "x", "n": 7, "z": nil,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Redact gave %v, want %v", got, want)
	}
	if s := v.Redact(past); s != webhook.Redacted {
		t.Errorf("a past secret as the whole value became %v", s)
	}
	if (webhook.Verifier{}).IsSecret("") {
		t.Error("a trigger with no secret calls the empty string a secret")
	}
}
