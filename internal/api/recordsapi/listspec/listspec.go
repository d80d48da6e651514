// Package listspec is what a kind of record's list and search take, from
// its declaration: the listing.Resource the list parser and planner read
// (Resource: filters, sort keys, fields, expansions) and the OpenAPI text
// of its GET list, its query body (POST /v1/<name>/query) and its search
// body (POST /v1/<name>/search), their filter objects, sort keys and
// listed records.
package listspec

import (
	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/listing"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/resources"
)

// Resource is what the list parser and planner know of d's list.
func Resource(d *resource.Def) listing.Resource {
	return listing.Resource{Def: d, Schema: listing.Schema(d), Expandable: Expandable(d)}
}

// Expandable lists d's reference fields that expand= may name: those
// pointing at one kind of record that GET answers as stored (companies
// and the declared resources).
func Expandable(d *resource.Def) []string {
	var out []string
	for _, f := range d.Fields {
		if (f.Kind == resource.Ref || f.Kind == resource.Refs) && f.TargetBy == "" && ExpandTarget(f.Target) != nil {
			out = append(out, f.Name)
		}
	}
	return out
}

// ExpandTarget is the declaration of the records a reference of target
// names, when they can be expanded.
func ExpandTarget(target string) *resource.Def {
	for _, d := range append([]*resource.Def{companies.Def}, resources.All()...) {
		if d.Name == target {
			return d
		}
	}
	return nil
}
