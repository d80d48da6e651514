package search

import "github.com/sourcebase/sourcebase/internal/resource"

// SchemaOf derives what a declared resource offers to search: its id and
// times, and every field whose values are scalars or arrays of strings
// (fields of a nested object as "parent.child"). Text weights come from
// the fields' Search weights. Single-valued fields are sortable.
func SchemaOf(d *resource.Def) *Schema {
	s := &Schema{Resource: d.Name, Type: d.Type}
	s.Fields = append(s.Fields, Field{Name: resource.FieldID, Type: Keyword, Sortable: true})
	s.Fields = append(s.Fields, Field{Name: resource.FieldCreatedAt, Type: DateTime, Sortable: true})
	if !d.NoUpdatedAt {
		s.Fields = append(s.Fields, Field{Name: resource.FieldUpdatedAt, Type: DateTime, Sortable: true})
	}
	var add func(prefix string, fs []resource.Field, many bool)
	add = func(prefix string, fs []resource.Field, many bool) {
		for _, f := range fs {
			name := prefix + f.Name
			t, ok := fieldType(f.Kind, many)
			switch {
			case f.Kind == resource.Struct:
				add(name+".", f.Fields, many)
				continue
			case f.Kind == resource.Structs:
				add(name+".", f.Fields, true)
				continue
			case !ok:
				continue
			}
			if t == Keyword && f.Kind == resource.Text {
				t = Text
			}
			s.Fields = append(s.Fields, Field{Name: name, Type: t, Weight: f.Search, Sortable: t != Keywords})
		}
	}
	add("", d.Fields, false)
	return s
}

// fieldType is the search type of a field of kind k (many: it sits in an
// array of objects, so it holds several values).
func fieldType(k resource.Kind, many bool) (Type, bool) {
	var t Type
	switch k {
	case resource.String, resource.Enum, resource.URL, resource.Email, resource.Ref, resource.Text:
		t = Keyword
	case resource.Strings, resource.Refs:
		return Keywords, true
	case resource.Int:
		t = Integer
	case resource.Number:
		t = Number
	case resource.Bool:
		t = Bool
	case resource.Date:
		t = Date
	case resource.DateTime:
		t = DateTime
	default:
		return 0, false
	}
	if many {
		if t != Keyword {
			return 0, false // numbers and times of an array of objects are not filters
		}
		return Keywords, true
	}
	return t, true
}
