package resource

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/store"
)

// ExistsFunc reports whether an organization has a record with an id.
type ExistsFunc func(ctx context.Context, org, id string) (bool, error)

// Registry holds the services of the declared resources and knows every
// resource a reference may name, declared here or elsewhere (companies).
type Registry struct {
	services    map[string]*Service
	exists      map[string]ExistsFunc
	singular    map[string]string
	afterDelete map[string][]func(ctx context.Context, org, id string) error
}

// AfterDelete has fn called after a record of the named resource is
// deleted, to delete what belongs to it (a list's entries).
func (reg *Registry) AfterDelete(name string, fn func(ctx context.Context, org, id string) error) {
	reg.afterDelete[name] = append(reg.afterDelete[name], fn)
}

// NewRegistry builds a service for each declaration over st. others names
// resources built outside the layer that references may point at, with
// their singular names and existence checks.
func NewRegistry(st *store.Store, defs []*Def, others map[string]External) *Registry {
	reg := &Registry{services: map[string]*Service{}, exists: map[string]ExistsFunc{}, singular: map[string]string{},
		afterDelete: map[string][]func(context.Context, string, string) error{}}
	for name, o := range others {
		reg.exists[name], reg.singular[name] = o.Exists, o.Singular
	}
	for _, d := range defs {
		svc := &Service{Def: d, coll: store.NewCollection(st, d.spec()), reg: reg, now: clock.Now}
		reg.services[d.Name] = svc
		reg.exists[d.Name], reg.singular[d.Name] = svc.Exists, d.Singular
	}
	for _, d := range defs {
		for _, f := range d.Fields {
			reg.mustKnow(d, f)
		}
	}
	return reg
}

// External is a resource outside the layer that references may name.
type External struct {
	Singular string
	Exists   ExistsFunc
}

func (reg *Registry) mustKnow(d *Def, f Field) {
	targets := []string{f.Target}
	if f.Target == "" {
		targets = nil
		for _, t := range f.Targets {
			targets = append(targets, t)
		}
	}
	for _, t := range targets {
		if _, ok := reg.exists[t]; !ok && (f.Kind == Ref || f.Kind == Refs) {
			panic(fmt.Sprintf("resource %s (%s): field %s references unknown resource %q: declare it, or name a declared one in the field's Target(s)", d.Name, d.Where(), f.Name, t))
		}
	}
	for _, sub := range f.Fields {
		reg.mustKnow(d, sub)
	}
}

// Service returns the service of a declared resource.
func (reg *Registry) Service(name string) (*Service, bool) {
	s, ok := reg.services[name]
	return s, ok
}

// Services lists the services by resource name.
func (reg *Registry) Services() []*Service {
	out := make([]*Service, 0, len(reg.services))
	for _, s := range reg.services {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Def.Name < out[j].Def.Name })
	return out
}

// checkRefs checks that every reference in rec that differs from before
// names a record of org: a 400 naming the field otherwise.
func (reg *Registry) checkRefs(ctx context.Context, org string, fields []Field, rec, before map[string]any, prefix string) error {
	for _, f := range fields {
		v := rec[f.Name]
		if before != nil && equalJSON(v, before[f.Name]) {
			continue
		}
		path := prefix + f.Name
		switch f.Kind {
		case Ref:
			id, _ := v.(string)
			if id == "" {
				continue
			}
			target := f.Target
			if f.TargetBy != "" {
				kind, _ := rec[f.TargetBy].(string)
				target = f.Targets[kind]
			}
			if err := reg.mustExist(ctx, org, target, id, path); err != nil {
				return err
			}
		case Refs:
			list, _ := v.([]any)
			for i, e := range list {
				id, _ := e.(string)
				if err := reg.mustExist(ctx, org, f.Target, id, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		case Struct:
			m, _ := v.(map[string]any)
			if err := reg.checkRefs(ctx, org, f.Fields, m, nil, path+"."); err != nil {
				return err
			}
		case Structs:
			list, _ := v.([]any)
			for i, e := range list {
				m, _ := e.(map[string]any)
				if err := reg.checkRefs(ctx, org, f.Fields, m, nil, fmt.Sprintf("%s[%d].", path, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (reg *Registry) mustExist(ctx context.Context, org, target, id, path string) error {
	exists, ok := reg.exists[target]
	if !ok {
		return apperr.Invalid(path, "names a record of an unknown kind")
	}
	found, err := exists(ctx, org, id)
	if err != nil {
		return err
	}
	if !found {
		return apperr.Invalid(path, "must be the id of %s of your organization; %q is not", article(reg.singular[target]), id)
	}
	return nil
}

// checkReferrers refuses deleting a record that a Restrict reference of
// another record points at: 409 naming that record.
func (reg *Registry) checkReferrers(ctx context.Context, org, target, id string) error {
	for _, svc := range reg.Services() {
		for _, f := range svc.Def.Fields {
			if !f.Restrict || f.Target != target {
				continue
			}
			found, err := svc.findBy(ctx, org, f.Name, id, 1)
			if err != nil {
				return err
			}
			if len(found) > 0 {
				return apperr.Referenced("%s %s is referenced by %s %s (%s); change or delete that first",
					reg.singular[target], id, svc.Def.Singular, found[0].ID(), f.Name)
			}
		}
	}
	return nil
}

// CheckReferrers is checkReferrers for resources outside the layer
// (a company about to be deleted).
func (reg *Registry) CheckReferrers(ctx context.Context, org, target, id string) error {
	return reg.checkReferrers(ctx, org, target, id)
}

// article puts "a" or "an" before a noun.
func article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}
