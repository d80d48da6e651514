package listspec

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/search"
)

// SearchOperation describes POST /v1/<name>/search of d.
func SearchOperation(op *openapi.Operation, d *resource.Def) {
	op.Summary = "Search " + d.Name
	op.Description = "Full-text and structured search of the organization's " + d.Name + "; see docs/search.md. " +
		"Results are the records as `GET /v1/" + d.Name + "/{id}` answers them."
	op.Query = []openapi.Param{
		{Name: "page", Description: "the page, from 1; (page-1)*limit at most " + strconv.Itoa(search.MaxOffset), Schema: openapi.Schema{"type": "integer", "minimum": 1, "default": 1}},
		{Name: "limit", Description: "results per page", Schema: openapi.Schema{"type": "integer", "minimum": 1, "maximum": search.MaxLimit, "default": search.DefaultLimit}},
	}
	op.Body, op.BodyOptional, op.Raw = openapi.Ref(openapi.SchemaName(d)+"Search"), true, true
	op.Data = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"data", "metadata"},
		"properties": openapi.Schema{"data": operation.ArrayOf(openapi.SchemaName(d)), "metadata": openapi.Ref("SearchMetadata")}}
}

// SimilarOperation describes POST /v1/<name>/{id}/similar of d.
func SimilarOperation(op *openapi.Operation, d *resource.Def) {
	op.Summary = "Find " + d.Name + " similar to one"
	op.Description = "The organization's " + d.Name + " nearest in meaning to the " + d.Singular + " of the path (the cosine of the embeddings of their text fields), " +
		"most similar first, never the " + d.Singular + " itself; the body's optional `filters` apply first (as a search's). See docs/search.md. " +
		"Answers `metadata.semantic: pending` and no records while the " + d.Singular + " has no embedding yet, and `501 semantic_off` in a deployment without an embedding model."
	op.Query = []openapi.Param{
		{Name: "page", Description: "the page, from 1; (page-1)*limit at most " + strconv.Itoa(search.MaxOffset), Schema: openapi.Schema{"type": "integer", "minimum": 1, "default": 1}},
		{Name: "limit", Description: "results per page", Schema: openapi.Schema{"type": "integer", "minimum": 1, "maximum": search.MaxLimit, "default": search.DefaultLimit}},
	}
	op.Errors = append(op.Errors, http.StatusNotFound, http.StatusNotImplemented)
	group := openapi.Schema{"type": "array", "items": openapi.Ref("SearchPredicate")}
	op.Body, op.BodyOptional, op.Raw = openapi.Schema{"type": "object", "additionalProperties": false,
		"description": "which " + d.Name + " may be answered",
		"properties":  openapi.Schema{"filters": openapi.Schema{"type": "object", "additionalProperties": false, "description": search.Meaning("filters"), "properties": openapi.Schema{"and": group, "or": group}}}}, true, true
	op.Data = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"data", "metadata"},
		"properties": openapi.Schema{"data": operation.ArrayOf(openapi.SchemaName(d)), "metadata": openapi.Ref("SearchMetadata")}}
}

// SearchSchema is the search body of s: its fields and operators.
func SearchSchema(s *search.Schema) openapi.Schema {
	var sortable []any
	for _, f := range s.Fields {
		if f.Sortable {
			sortable = append(sortable, f.Name)
		}
	}
	group := openapi.Schema{"type": "array", "items": openapi.Ref("SearchPredicate")}
	return openapi.Schema{"type": "object", "additionalProperties": false,
		"description": "a search of " + s.Resource + ": text, filters (fields: " + fieldList(s) + "), sort",
		"properties": openapi.Schema{
			"text":     openapi.Schema{"type": "string", "maxLength": search.MaxTextLength, "description": search.Meaning("text")},
			"filters":  openapi.Schema{"type": "object", "additionalProperties": false, "description": search.Meaning("filters"), "properties": openapi.Schema{"and": group, "or": group}},
			"sort":     openapi.Schema{"type": "array", "description": search.Meaning("sort"), "maxItems": search.MaxSortKeys, "items": openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"field"}, "properties": openapi.Schema{"field": openapi.Schema{"type": "string", "enum": sortable}, "direction": openapi.Schema{"type": "string", "enum": []any{"asc", "desc"}}}}},
			"hybrid":   openapi.Schema{"type": "boolean", "description": search.Meaning("hybrid")},
			"fuzzy":    openapi.Schema{"type": "boolean", "description": search.Meaning("fuzzy")},
			"fullText": openapi.Schema{"type": "boolean", "description": search.Meaning("fullText")},
		}}
}

func fieldList(s *search.Schema) string {
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = "`" + f.Name + "`"
	}
	return strings.Join(names, ", ")
}

// PredicateSchema is one node of a search's filter tree.
func PredicateSchema() openapi.Schema {
	ops := make([]any, len(search.Ops))
	for i, o := range search.Ops {
		ops[i] = string(o)
	}
	group := openapi.Schema{"type": "array", "items": openapi.Ref("SearchPredicate")}
	return openapi.Schema{"type": "object", "additionalProperties": false,
		"description": "a condition on a field (`field`, `operator`, `value`), and/or nested `and` / `or` groups; at most " +
			strconv.Itoa(search.MaxDepth) + " levels and " + strconv.Itoa(search.MaxPredicates) + " predicates in all",
		"properties": openapi.Schema{
			"field":    openapi.Schema{"type": "string"},
			"operator": openapi.Schema{"type": "string", "enum": ops},
			"value":    predicateValue("a value of the field's type; an array for `in` and `nin`, a boolean for `exists`"),
			"and":      group,
			"or":       group,
		}}
}
