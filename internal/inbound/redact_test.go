package inbound_test

import (
	"reflect"
	"testing"

	"github.com/sourcebase/sourcebase/internal/inbound"
)

func TestRedactReplacesEveryStringThatIsACurrentOrPastSecret(t *testing.T) {
	current, past, never := inbound.NewSecret(), inbound.NewSecret(), inbound.NewSecret()
	v := inbound.Verifier{Scheme: inbound.SharedSecret, Secret: current, PastSecretHashes: []string{inbound.HashSecret(past)}}
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
	if s := v.Redact(past); s != inbound.Redacted {
		t.Errorf("a past secret as the whole value became %v", s)
	}
	if (inbound.Verifier{}).IsSecret("") {
		t.Error("a trigger with no secret calls the empty string a secret")
	}
}
