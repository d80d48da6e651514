package listspec

import (
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/search"
)

// The values a body gives a field it names, of that field's type: a
// search predicate's value here, an export filter's in package api (both
// operation.ValueOrList). The document declares
// the JSON values the service takes there, so that a client checking a
// call before making it (an MCP client, by a tool's input schema) knows
// what they are; which of them a field takes, the service checks (a 400
// naming it). The Go client keeps them an interface{} (x-go-type): a union
// type would have them built through typed constructors, a number as a
// float32.

// predicateValue is a search predicate's value (search.Decode): a string
// (a date as one), a number or a boolean, or 1 to search.MaxInValues of
// them (in, nin); never null.
func predicateValue(description string) openapi.Schema {
	s := operation.ValueOrList(description, search.MaxInValues,
		openapi.Schema{"type": "string", "maxLength": search.MaxValueLength}, openapi.Schema{"type": "number"}, openapi.Schema{"type": "boolean"})
	s["x-go-type"], s["x-go-type-skip-optional-pointer"] = "interface{}", true
	return s
}
