package companies

import (
	"context"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/testenv"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func named(name string) Fields {
	return Fields{CanonicalName: jsonbody.Field[string]{Set: true, Value: name}}
}

// TestMatchFindsANameIgnoringCaseWhicheverKeyItWasStoredUnder: the sort
// key is folded (case and diacritics), Match's equality ignores case only,
// and a company stored before the keys were folded (lower case only) is
// still found by its name.
func TestMatchFindsANameIgnoringCaseWhicheverKeyItWasStoredUnder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := testenv.Store(t)
	svc := NewService(st)
	const org = "org1"
	muller, err := svc.Create(ctx, org, named("Müller AG"), OriginUser)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(ctx, org, named("Muller AG"), OriginUser); err != nil {
		t.Fatal(err)
	}
	// As the code before folded keys wrote it: keyed "zürich re".
	old := spec
	old.Sorts = []store.Sort[Company]{{Field: "canonicalName", Index: store.GSI1, Key: func(c *Company) string { return lowerNameKey(c.CanonicalName) }}}
	zurich, err := svc.New(ctx, org, named("Zürich Re"), OriginUser)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.NewCollection(st, old).Create(ctx, org, zurich); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"MÜLLER AG":   muller.ID,
		" müller ag ": muller.ID,
		"ZÜRICH RE":   zurich.ID,
		"Zurich Re":   "", // another name: diacritics differ
	} {
		c, err := svc.Match(ctx, org, named(name))
		got := ""
		if c != nil {
			got = c.ID
		}
		if err != nil || got != want {
			t.Errorf("Match(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	if c, _ := svc.Match(ctx, org, named("Muller AG")); c == nil || c.CanonicalName != "Muller AG" {
		t.Errorf("Match(Muller AG) = %+v, want the company of that name", c)
	}
}
