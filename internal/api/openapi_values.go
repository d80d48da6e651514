package api

import (
	"slices"

	"github.com/sourcebase/sourcebase/internal/jobs"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/search"
)

// The values a body gives a field it names, of that field's type: a
// search predicate's value and an export filter's. The document declares
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
	s := valueOrList(description, search.MaxInValues,
		openapi.Schema{"type": "string", "maxLength": search.MaxValueLength}, openapi.Schema{"type": "number"}, openapi.Schema{"type": "boolean"})
	s["x-go-type"], s["x-go-type-skip-optional-pointer"] = "interface{}", true
	return s
}

// exportFilter is an export's filter (jobs.DecodeExport): a field's name →
// a string, number, boolean or null, or 1 to jobs.MaxFilterValues of them.
func exportFilter(description string) openapi.Schema {
	value := valueOrList("a string, number, boolean or null, or a list of them", jobs.MaxFilterValues,
		openapi.Schema{"type": "string"}, openapi.Schema{"type": "number"}, openapi.Schema{"type": "boolean"}, openapi.Schema{"type": "null"})
	return openapi.Schema{"type": "object", "description": description, "additionalProperties": value,
		"x-go-type": "map[string]interface{}"}
}

// valueOrList is one of the values scalars describe, or an array of 1 to
// most of them.
func valueOrList(description string, most int, scalars ...any) openapi.Schema {
	list := openapi.Schema{"type": "array", "minItems": 1, "maxItems": most, "items": openapi.Schema{"anyOf": scalars}}
	return openapi.Schema{"description": description, "anyOf": append(slices.Clip(scalars), list)}
}
