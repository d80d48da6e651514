package enrichment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/sourcebase/sourcebase/internal/companies"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/store"
)

// CompanyProperties are the enrichable attributes of a company.
var CompanyProperties = []string{"alternativeNames", "website", "linkedinUrl", "description", "shortDescription",
	"sector", "subsector", "industry", "location", "employeeCount", "ownershipStatus", "lastValuation",
	"lastAmountRaised", "totalMoneyRaised", "lastRoundDate", "lastFinancials"}

// Companies is the enrichable type of companies: values are checked by
// the fields of companies.Def, and a write updates the company through
// cs (a version-checked update, retried on races).
func Companies(cs *companies.Service) *Type {
	fields := map[string]resource.Field{}
	for _, p := range CompanyProperties {
		f, ok := companies.Def.Field(p)
		if !ok {
			panic(fmt.Sprintf("enrichment: companies.Def has no field %s", p))
		}
		fields[p] = f
	}
	return &Type{Name: companies.Name, Properties: CompanyProperties, Fields: fields, Exists: cs.Exists,
		Update: func(ctx context.Context, org, id string, fn func(map[string]json.RawMessage) (Reconciled, []store.Op, error)) error {
			_, err := cs.Enrich(ctx, org, id, func(c *companies.Company) ([]store.Op, error) { return enrichCompany(c, fn) })
			return err
		}}
}

// enrichCompany runs a reconciliation on c and sets what it decides.
func enrichCompany(c *companies.Company, fn func(map[string]json.RawMessage) (Reconciled, []store.Op, error)) ([]store.Op, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var current map[string]json.RawMessage
	if err := json.Unmarshal(b, &current); err != nil {
		return nil, err
	}
	r, ops, err := fn(current)
	if err != nil {
		return nil, err
	}
	cands := make(map[string][]companies.Candidate, len(r.Candidates))
	for p, cs := range r.Candidates {
		for _, cd := range cs {
			cands[p] = append(cands[p], companies.Candidate(cd))
		}
	}
	return ops, c.SetEnriched(r.Values, cands, r.At)
}

// DeleteCompany deletes company id of org with its candidate values. The
// company's delete transaction records the purge of its candidates
// (PurgeOp), and the candidates are deleted after it, on a context the
// client cannot cancel; a purge that fails then stays recorded and
// SweepPurges completes it (app.Sweep: the runner's schedule in AWS, the
// dev server's every minute): never only logged.
func (s *Service) DeleteCompany(ctx context.Context, cs *companies.Service, org, id string) error {
	op, err := s.PurgeOp(org, companies.Name, id)
	if err != nil {
		return err
	}
	if err := cs.Delete(ctx, org, id, op); err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx)
	if err := s.Purge(ctx, org, companies.Name, id); err != nil {
		slog.WarnContext(ctx, "a deleted company's enrichment values are left to the next sweep", "company", id, "err", err)
	}
	return nil
}

// ProviderCompanyUpdate is the provider of the user candidates a
// PUT /v1/companies/{id} records; a later PUT replaces them.
const ProviderCompanyUpdate = "company-update"

// UpdateCompany applies a user's update f to a company of org (cs.Update's
// rules) in one version-checked write with its candidates: an enrichable
// attribute f sets, whose property already has candidates, is recorded
// as a pinned user candidate (replacing the earlier ones of PUTs), and
// one f clears deletes the property's user candidates, so the attribute
// falls back to the others. A property without candidates is just set
// (its value becomes a pinned user candidate when the first candidate
// arrives).
func (s *Service) UpdateCompany(ctx context.Context, cs *companies.Service, org, id string, f companies.Fields, set []string) (*companies.Company, error) {
	return s.UpdateCompanyWith(ctx, cs, org, id, f, set, nil, nil)
}

// UpdateCompanyWith is UpdateCompany that also adds the candidate values
// in (an import's) in the same write, and runs check (when set) on the
// company as stored before it.
func (s *Service) UpdateCompanyWith(ctx context.Context, cs *companies.Service, org, id string, f companies.Fields, set []string, in []Input,
	check func(*companies.Company) error) (*companies.Company, error) {
	t, ok := s.types[companies.Name]
	if !ok {
		return cs.Update(ctx, org, id, f)
	}
	var added []Value
	if len(in) > 0 {
		var err error
		if added, err = s.prepare(ctx, org, in); err != nil {
			return nil, err
		}
	}
	props := t.enrichable(set)
	if len(props) == 0 && len(added) == 0 && check == nil {
		return cs.Update(ctx, org, id, f)
	}
	return inRounds(ctx, func() (*companies.Company, error) {
		return cs.Enrich(ctx, org, id, func(c *companies.Company) ([]store.Op, error) {
			if check != nil {
				if err := check(c); err != nil {
					return nil, err
				}
			}
			before, _ := json.Marshal(c)
			enrichedAt := c.LastEnrichedAt
			f.Apply(c)
			// Always reconciled: a property the PUT cleared falls back to
			// its remaining candidates even when it had no user candidate
			// to delete.
			ops, err := enrichCompany(c, s.reconciler(ctx, t, org, id, func(vals map[string]*Value, current map[string]json.RawMessage) ([]store.Op, error) {
				ops, err := s.userValues(org, id, props, vals, current)
				if errors.Is(err, errSkip) {
					ops, err = nil, nil
				}
				if err != nil {
					return nil, err
				}
				more, err := s.addOps(org, companies.Name, id, added, vals)
				return append(ops, more...), err
			}))
			if err != nil || len(ops) > 0 {
				return ops, err
			}
			// No candidate changed: the company's candidates were not
			// reconciled anew, and a PUT that changes nothing writes nothing.
			c.LastEnrichedAt = enrichedAt
			if after, _ := json.Marshal(c); string(after) == string(before) {
				return nil, store.ErrUnchanged
			}
			return nil, nil
		})
	})
}

// enrichable are the names among names that are properties of t.
func (t *Type) enrichable(names []string) []string {
	var out []string
	for _, p := range names {
		if _, ok := t.Fields[p]; ok {
			out = append(out, p)
		}
	}
	return out
}

// userValues records the values a PUT set (current, after the update) of
// props that have candidates; errSkip when none has.
func (s *Service) userValues(org, id string, props []string, vals map[string]*Value, current map[string]json.RawMessage) ([]store.Op, error) {
	var ops []store.Op
	now := s.now()
	for _, p := range props {
		if !anyOf(vals, p) {
			continue
		}
		value := current[p]
		set := (&Type{}).hasValue(value)
		var top *Value
		for vid, v := range vals {
			if v.Property != p || v.Source != SourceUser || (set && (v.Provider == nil || *v.Provider != ProviderCompanyUpdate)) {
				continue
			}
			if set && v.Pinned && string(v.Value) == string(value) && top == nil {
				top = v
				continue
			}
			delete(vals, vid)
			k := store.EnrichmentKey(org, companies.Name, id, vid)
			ops = append(ops, s.st.DeleteOp(k.PK, k.SK))
		}
		if set && top != nil && !first(vals, top) {
			// The PUT's value is already a pinned user candidate, but a
			// candidate pinned since outranks it: pinned again, it is the
			// latest pin, so the value the PUT set is the value read.
			top.PinnedAt = now.Ptr()
			op, err := s.st.OverwriteOp(s.item(org, companies.Name, id, top))
			if err != nil {
				return nil, err
			}
			ops = append(ops, op)
		}
		if set && top == nil {
			v := Value{ID: ids.New("env"), Property: p, Value: value, Provider: given(ProviderCompanyUpdate), Source: SourceUser,
				Confidence: 100, CapturedOn: now, Pinned: true, PinnedAt: now.Ptr()}
			vals[v.ID] = &v
			op, err := s.st.CreateOp(s.item(org, companies.Name, id, &v))
			if err != nil {
				return nil, err
			}
			ops = append(ops, op)
		}
	}
	if len(ops) == 0 {
		return nil, errSkip
	}
	return ops, nil
}

// first reports whether v ranks first among the candidates of its property.
func first(vals map[string]*Value, v *Value) bool {
	for _, o := range vals {
		if o.Property == v.Property && o != v && Compare(*o, *v) < 0 {
			return false
		}
	}
	return true
}

// CreateCompany creates a company of org from a workflow's fields f in
// one write with its candidates: the enrichable attributes f sets become
// candidates (source workflow, sourceId runID, confidence 100), and the
// company starts reconciled from them (the same rules as every write, over
// candidates that are all its own).
func (s *Service) CreateCompany(ctx context.Context, cs *companies.Service, org string, f companies.Fields, runID string) (*companies.Company, error) {
	t, ok := s.types[companies.Name]
	if !ok {
		return cs.Create(ctx, org, f, companies.OriginWorkflow)
	}
	props := t.enrichable(f.SetNames())
	if len(props) == 0 {
		return cs.Create(ctx, org, f, companies.OriginWorkflow)
	}
	return cs.CreateTx(ctx, org, f, companies.OriginWorkflow, func(c *companies.Company) ([]store.Op, error) {
		return enrichCompany(c, func(current map[string]json.RawMessage) (Reconciled, []store.Op, error) {
			vals := map[string]*Value{}
			ops, err := s.workflowValues(org, c.ID, t, props, runID, vals, current)
			if err != nil {
				return Reconciled{}, nil, err
			}
			list := make([]Value, 0, len(vals))
			for _, v := range vals {
				list = append(list, *v)
			}
			return t.Reconcile(list, c.CreatedAt), ops, nil
		})
	})
}

// CreateCompanyWith creates a company of org from f (made by origin) in
// one write with the candidate values in (an import's): the company starts
// reconciled from them.
func (s *Service) CreateCompanyWith(ctx context.Context, cs *companies.Service, org string, f companies.Fields, origin string, in []Input) (*companies.Company, error) {
	t, ok := s.types[companies.Name]
	if !ok || len(in) == 0 {
		return cs.Create(ctx, org, f, origin)
	}
	added, err := s.prepare(ctx, org, in)
	if err != nil {
		return nil, err
	}
	return cs.CreateTx(ctx, org, f, origin, func(c *companies.Company) ([]store.Op, error) {
		return enrichCompany(c, func(map[string]json.RawMessage) (Reconciled, []store.Op, error) {
			vals := map[string]*Value{}
			ops, err := s.addOps(org, companies.Name, c.ID, added, vals)
			if err != nil {
				return Reconciled{}, nil, err
			}
			return t.Reconcile(added, c.CreatedAt), ops, nil
		})
	})
}

// addOps adds the values added to vals, and gives the operations that
// store them as candidates of record id.
func (s *Service) addOps(org, typ, id string, added []Value, vals map[string]*Value) ([]store.Op, error) {
	ops := make([]store.Op, 0, len(added))
	for i := range added {
		v := added[i]
		vals[v.ID] = &v
		op, err := s.st.CreateOp(s.item(org, typ, id, &v))
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// workflowValues adds to vals a workflow candidate of each of props that
// current sets, and gives the operations that store them.
func (s *Service) workflowValues(org, id string, t *Type, props []string, runID string, vals map[string]*Value, current map[string]json.RawMessage) ([]store.Op, error) {
	var ops []store.Op
	now := s.now()
	for _, p := range props {
		if !t.hasValue(current[p]) {
			continue
		}
		v := Value{ID: ids.New("env"), Property: p, Value: current[p], Source: SourceWorkflow, SourceID: given(runID),
			Confidence: 100, CapturedOn: now}
		vals[v.ID] = &v
		op, err := s.st.CreateOp(s.item(org, companies.Name, id, &v))
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// UpsertCompany applies a workflow's update f to a company of org: the
// enrichable attributes f sets become candidates (source workflow,
// sourceId runID, confidence 100) reconciled with the others, instead of
// overwriting them; its other fields are set as cs.Update sets them. One
// version-checked write.
func (s *Service) UpsertCompany(ctx context.Context, cs *companies.Service, org, id string, f companies.Fields, runID string) (*companies.Company, error) {
	t, ok := s.types[companies.Name]
	if !ok {
		return cs.Update(ctx, org, id, f)
	}
	props := t.enrichable(f.SetNames())
	if len(props) == 0 {
		return cs.Update(ctx, org, id, f)
	}
	return inRounds(ctx, func() (*companies.Company, error) {
		return cs.Enrich(ctx, org, id, func(c *companies.Company) ([]store.Op, error) {
			before, err := json.Marshal(c)
			if err != nil {
				return nil, err
			}
			var held map[string]json.RawMessage
			if err := json.Unmarshal(before, &held); err != nil {
				return nil, err
			}
			f.Apply(c)
			rctx := context.WithValue(ctx, heldKey{}, held)
			return enrichCompany(c, s.reconciler(rctx, t, org, id, func(vals map[string]*Value, current map[string]json.RawMessage) ([]store.Op, error) {
				return s.workflowValues(org, id, t, props, runID, vals, current)
			}))
		})
	})
}
