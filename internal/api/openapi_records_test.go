package api_test

import (
	"reflect"
	"slices"
	"testing"

	companyrecords "github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/runs"
	"github.com/sourcebase/sourcebase/internal/workflows"
)

// The records built outside the resource layer are answered as their Go
// types encode, while their schemas derive from their declarations: each
// declaration must say what its Go type does. A field the Go type always
// writes (no omitempty) is required, one it may leave out is not; a field
// the declaration lets be null must be one the Go type can write as null
// (a pointer, a map, a slice), and one it cannot must not be nullable.
// (A nullable Go map or slice may still be declared never null: the
// services write {} and [] rather than null, which the contract tests
// hold them to.)
func TestTheRecordsBuiltOutsideTheLayerAreDeclaredAsTheirGoTypesWriteThem(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		def *resource.Def
		typ reflect.Type
	}{
		{companyrecords.Def, reflect.TypeFor[companyrecords.Company]()},
		{workflows.Def, reflect.TypeFor[workflows.Workflow]()},
		{runs.Def, reflect.TypeFor[runs.Run]()},
	} {
		t.Run(c.def.Name, func(t *testing.T) {
			t.Parallel()
			sameShape(t, c.def.Name, openapi.Record(c.def, openapi.Output), openapi.TypeOf(c.typ))
		})
	}
}

// sameShape compares the declared schema of an object with its Go type's,
// field by field, into nested objects and arrays of objects.
func sameShape(t *testing.T, path string, declared, goType openapi.Schema) {
	t.Helper()
	if members, ok := declared["additionalProperties"].(openapi.Schema); ok {
		// An object of members named by the data (a company's enrichment).
		goMembers, ok := goType["additionalProperties"].(openapi.Schema)
		if !ok {
			t.Errorf("%s: declared as an object of declared members, the Go type writes %v", path, goType)
			return
		}
		if null, goNull := nullable(members), nullable(goMembers); null && !goNull {
			t.Errorf("%s{}: declared nullable, but the Go type never writes null", path)
		}
		sameShape(t, path+"{}", members, goMembers)
		return
	}
	if items, ok := declared["items"].(openapi.Schema); ok {
		if goItems, ok := goType["items"].(openapi.Schema); ok {
			sameShape(t, path+"[]", items, goItems)
		}
		return
	}
	props, ok := declared["properties"].(openapi.Schema)
	if !ok {
		return
	}
	goProps, ok := goType["properties"].(openapi.Schema)
	if !ok {
		t.Errorf("%s: declared as an object of fields, the Go type writes %v", path, goType)
		return
	}
	var names, goNames []string
	for n := range props {
		names = append(names, n)
	}
	for n := range goProps {
		goNames = append(goNames, n)
	}
	slices.Sort(names)
	slices.Sort(goNames)
	if !slices.Equal(names, goNames) {
		t.Errorf("%s: declared fields %v, the Go type writes %v", path, names, goNames)
	}
	required, goRequired := texts(declared["required"]), texts(goType["required"])
	for _, n := range names {
		d, g := props[n].(openapi.Schema), goProps[n].(openapi.Schema)
		if g == nil {
			continue
		}
		field := path + "." + n
		in, goIn := slices.Contains(required, n), slices.Contains(goRequired, n)
		switch {
		case in && !goIn:
			t.Errorf("%s: required, but the Go type leaves it out when empty (omitempty): declare it Omitted", field)
		case !in && goIn:
			t.Errorf("%s: not required, but the Go type always writes it", field)
		}
		// encoding/json leaves out an omitempty field rather than write null.
		switch null, goNull := nullable(d), nullable(g) && goIn; {
		case null && !goNull:
			t.Errorf("%s: declared nullable, but the Go type never writes null: declare it Always (or Omitted)", field)
		case !null && goNull && !isArrayOrObject(g):
			t.Errorf("%s: declared never null, but the Go type may write null (a pointer)", field)
		}
		sameShape(t, field, d, g)
	}
}

func texts(v any) []string {
	var out []string
	for _, s := range asList(v) {
		out = append(out, s.(string))
	}
	return out
}

// nullable reports whether a schema lets the value be null.
func nullable(s openapi.Schema) bool {
	if ts, ok := s["type"].([]any); ok {
		return slices.Contains(ts, any("null"))
	}
	for _, alt := range append(asList(s["anyOf"]), asList(s["oneOf"])...) {
		if m, ok := alt.(openapi.Schema); ok && m["type"] == "null" {
			return true
		}
	}
	return false
}

func asList(v any) []any { l, _ := v.([]any); return l }

// isArrayOrObject: a Go slice or map, which the services write as [] or
// {} however encoding/json could write them.
func isArrayOrObject(s openapi.Schema) bool {
	ts, _ := s["type"].([]any)
	return slices.Contains(ts, any("array")) || slices.Contains(ts, any("object")) && s["properties"] == nil
}
