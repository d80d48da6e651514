package companies

import (
	"slices"
	"testing"
)

func TestTheDeclarationHasEveryFieldOfTheCompanyRecordInOrder(t *testing.T) {
	t.Parallel()
	var got []string
	for _, f := range Def.AllFields() {
		got = append(got, f.Name)
	}
	if want := FieldNames(); !slices.Equal(got, want) {
		t.Errorf("Def fields = %v\nwant the record's %v", got, want)
	}
}

func TestTheDeclarationsWritableFieldsAreTheCreateFields(t *testing.T) {
	t.Parallel()
	var got []string
	for _, f := range Def.Fields {
		if !f.ReadOnly {
			got = append(got, f.Name)
		}
	}
	want := slices.Clone(CreateFields)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("writable fields = %v, want %v", got, want)
	}
}

func TestTheDeclarationSortsAndFiltersAsTheService(t *testing.T) {
	t.Parallel()
	if got, want := Def.SortFields(), []string{"id", "createdAt", "canonicalName", "updatedAt"}; !slices.Equal(got, want) {
		t.Errorf("sort fields = %v, want %v", got, want)
	}
	if got, want := Def.Filters(), []string{"website", "externalId"}; !slices.Equal(got, want) {
		t.Errorf("filters = %v, want %v", got, want)
	}
}

func TestDecodeRefusesEveryReadOnlyFieldOfTheDeclarationSayingItIsReadOnly(t *testing.T) {
	t.Parallel()
	for _, f := range Def.AllFields() {
		if !f.ReadOnly {
			continue
		}
		body := []byte(`{"canonicalName":"Acme","` + f.Name + `":null}`)
		for name, decode := range map[string]func([]byte) (Fields, error){"DecodeCreate": DecodeCreate, "DecodeUpdate": DecodeUpdate} {
			want := f.Name + " is read-only; the service sets it"
			if _, err := decode(body); err == nil || err.Error() != want {
				t.Errorf("%s(%s) = %v, want %q", name, body, err, want)
			}
		}
	}
}

func TestDecodeTurnsTheDeclaredFieldsIntoFields(t *testing.T) {
	t.Parallel()
	f, err := DecodeCreate([]byte(`{"canonicalName":" Acme ","alternativeNames":["A","A"],"website":"acme.com","description":"",` +
		`"location":{"city":"Oslo"},"externalId":"e-1","tags":null,"custom":{"k":1},"companyType":"operating"}`))
	if err != nil {
		t.Fatal(err)
	}
	var c Company
	f.Apply(&c)
	if c.CanonicalName != "Acme" || !slices.Equal(c.AlternativeNames, []string{"A"}) || *c.Website != "acme.com" ||
		c.Description == nil || *c.Description != "" || c.Location.City == nil || *c.Location.City != "Oslo" || c.Location.Country != nil ||
		*c.ExternalID != "e-1" || len(c.Tags) != 0 || c.Tags == nil || c.Custom["k"] == nil || *c.CompanyType != "operating" || c.Sector != nil {
		t.Errorf("applied company = %+v", c)
	}
	u, err := DecodeUpdate([]byte(`{"website":null,"location":null}`))
	if err != nil || !u.Website.Set || !u.Website.Null || !u.Location.Set || u.CanonicalName.Set {
		t.Errorf("update fields = %+v, %v; want website cleared, location set to unknown, the rest absent", u, err)
	}
}
