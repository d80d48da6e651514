package steps

import (
	"errors"
	"reflect"
	"testing"
)

func TestKnownParametersAreEveryNameAndTheValuesWithoutPaths(t *testing.T) {
	t.Parallel()
	with := mustParse(t, `[{"id":"a","type":"set","with":{"name":"Acme","size.$":"$.input.n","location":{"city.$":"$.input.city"},
		"tags":["x"],"custom":{"list":[{"k.$":"$.input.k"}]},"k.$.$":"$.input.odd"}}]`)[0].With
	got := KnownParameters(with)
	if want := []string{"custom", "k.$", "location", "name", "size", "tags"}; !reflect.DeepEqual(got.Names, want) {
		t.Errorf("Names = %v, want %v", got.Names, want)
	}
	if want := map[string]any{"name": "Acme", "tags": []any{"x"}}; !reflect.DeepEqual(got.Values, want) {
		t.Errorf("Values = %v, want %v", got.Values, want)
	}
}

// refusing refuses every upsert with an error naming field.
type refusing struct {
	Companies
	field string
}

type namedError struct{ field string }

func (e namedError) Error() string      { return e.field + " is read-only" }
func (e namedError) ErrorParam() string { return e.field }

func (r refusing) CheckUpsert(Known) error       { return namedError{r.field} }
func (r refusing) CheckTags(tags []string) error { return nil }

func TestCheckNamesTheStepAndTheParameterAWriterRefuses(t *testing.T) {
	t.Parallel()
	list := mustParse(t, `[{"id":"s","type":"set"},{"id":"up","type":"upsertCompany","with":{"canonicalName":"A","n.$":"$.input.n"}}]`)
	for field, param := range map[string]string{"n": "steps[1].with.n.$", "canonicalName": "steps[1].with.canonicalName",
		"location.city": "steps[1].with.location.city", "": "steps[1].with"} {
		err := Executor{Companies: refusing{field: field}}.Check(list)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != param {
			t.Errorf("a refusal of %q: %v, want it named %s", field, err, param)
			continue
		}
		if want := `is refused: step 1 ("up", upsertCompany) would fail on every run with: ` + field + " is read-only"; ve.Message != want {
			t.Errorf("message %q, want %q", ve.Message, want)
		}
	}
	// A writer that does not check leaves the steps to the run.
	if err := (Executor{Companies: echoCompanies{}}).Check(list); err != nil {
		t.Errorf("a writer without checks refused: %v", err)
	}
}
