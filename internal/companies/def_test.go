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
