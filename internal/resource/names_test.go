package resource_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

// CheckNames refuses exactly the names Decode refuses whatever their
// values, with Decode's error: what a workflow step's fields are checked
// by when some of their values are only known at run time.
func TestCheckNamesRefusesTheNamesDecodeRefusesWithItsError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		create bool
		names  []string
		field  string // refused; "" for accepted
	}{
		{"writable fields", false, []string{"name", "size", "tags"}, ""},
		{"a read-only field", false, []string{"name", "score"}, "score"},
		{"a built-in read-only field", true, []string{"id"}, "id"},
		{"an unknown field", false, []string{"colour"}, "colour"},
		{"an immutable field on update", false, []string{"currency"}, "currency"},
		{"an immutable field on create", true, []string{"currency"}, ""},
		{"no field", false, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := funds.CheckNames(tc.names, tc.create)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("CheckNames(%v) = %v, want accepted", tc.names, err)
				}
				return
			}
			var inv *apperr.InvalidError
			if !errors.As(err, &inv) || inv.Field != tc.field {
				t.Fatalf("CheckNames(%v) = %v, want a 400 naming %s", tc.names, err, tc.field)
			}
			// Decode refuses the same body, values and all, with the same error.
			body := map[string]any{}
			for _, n := range tc.names {
				body[n] = nil
			}
			b, _ := json.Marshal(body)
			if _, derr := funds.Decode(b, tc.create); derr == nil || derr.Error() != err.Error() {
				t.Errorf("Decode = %v, CheckNames = %v: want the same error", derr, err)
			}
		})
	}
}
