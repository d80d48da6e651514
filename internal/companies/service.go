package companies

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Sortable fields of the company list beyond id: createdAt follows the id
// (ids are time-ordered); canonicalName (folded: ignoring case and
// diacritics) and updatedAt
// each have an index, so a sorted page is one Query, not a scan.
var spec = store.Spec[Company]{
	Type:    store.TypeCompany,
	ID:      func(c *Company) string { return c.ID },
	IDOrder: []string{"createdAt"},
	Sorts: []store.Sort[Company]{
		{Field: "canonicalName", Index: store.GSI1, Key: func(c *Company) string { return nameKey(c.CanonicalName) }},
		{Field: "updatedAt", Index: store.GSI2, Key: func(c *Company) string { return sortTime(c.UpdatedAt) }},
	},
	Lookups: []store.Lookup[Company]{
		{Name: "externalId", Index: store.GSI3, Key: func(c *Company) string {
			if c.ExternalID == nil {
				return ""
			}
			return *c.ExternalID
		}},
		{Name: "website", Index: store.GSI4, Key: func(c *Company) string {
			if c.Website == nil {
				return ""
			}
			return WebsiteKey(*c.Website)
		}},
	},
	// externalId is the caller's reconciliation key: one company per value
	// in an organization.
	Unique: []store.Unique[Company]{
		{Field: "externalId", Key: func(c *Company) string {
			if c.ExternalID == nil {
				return ""
			}
			return *c.ExternalID
		}},
	},
}

func init() {
	spec.Feed = Def.Searchable
	spec.View = (*Company).normalize
	// A revision of the shape's name is due when normalize changes what
	// it fills (ShapeOf cannot see it).
	spec.Shape = store.ShapeOf(Company{}, "normalize.1")
}

// Service stores the companies of every organization.
type Service struct {
	coll *store.Collection[Company]
	now  func() clock.Time
}

// NewService returns the company service over st.
func NewService(st *store.Store) *Service {
	return &Service{coll: store.NewCollection(st, spec), now: clock.Now}
}

// New builds a company record of org from create fields, without storing it.
func (s *Service) New(ctx context.Context, org string, f Fields, origin string) (*Company, error) {
	id, err := resource.NewID(ctx, s.coll, org, Def.IDPrefix)
	if err != nil {
		return nil, err
	}
	now := s.now()
	c := &Company{ID: id, Origin: origin, CreatedAt: now, UpdatedAt: now}
	f.Apply(c)
	return c, nil
}

// Create stores a new company of org made from f.
func (s *Service) Create(ctx context.Context, org string, f Fields, origin string) (*Company, error) {
	return s.CreateTx(ctx, org, f, origin, nil)
}

// CreateTx stores a new company of org made from f, after fn (when set)
// completed it, writing the operations fn returns in the same
// transaction: how a workflow creates a company together with the
// enrichment candidates of the values it was made with.
func (s *Service) CreateTx(ctx context.Context, org string, f Fields, origin string, fn func(*Company) ([]store.Op, error)) (*Company, error) {
	c, err := s.New(ctx, org, f, origin)
	if err != nil {
		return nil, err
	}
	var ops []store.Op
	if fn != nil {
		c.normalize()
		var err error
		if ops, err = fn(c); err != nil {
			return nil, err
		}
	}
	if err := s.coll.Create(ctx, org, c, ops...); err != nil {
		return nil, err
	}
	return c, nil
}

// Get reads a company of org.
func (s *Service) Get(ctx context.Context, org, id string) (*Company, error) {
	return s.coll.Get(ctx, org, id)
}

// GetJSON reads a company of org as Get answers it, encoded: for a
// response, which then need not decode the stored record.
func (s *Service) GetJSON(ctx context.Context, org, id string) (*store.JSON, error) {
	return s.coll.GetJSON(ctx, org, id)
}

// Present turns a stored company (as search holds it, with its item's
// shape stamp) into the company as GET answers it.
func (s *Service) Present(stored []byte, stamp string) (json.RawMessage, error) {
	return s.coll.Present(stored, stamp)
}

// GetMany reads up to store.MaxBatch companies of org by id in one batch,
// in the order asked, leaving out ids that name none.
func (s *Service) GetMany(ctx context.Context, org string, ids []string) ([]Company, error) {
	return s.coll.GetMany(ctx, org, ids)
}

// Exists reports whether org has a company with id.
func (s *Service) Exists(ctx context.Context, org, id string) (bool, error) {
	_, err := s.coll.Get(ctx, org, id)
	if errors.Is(err, apperr.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Filters are the fields a company list can be filtered by, one at a
// time: each is served by its lookup index.
var Filters = Def.Filters()

// List returns a page of org's companies.
func (s *Service) List(ctx context.Context, org string, q store.Query) (store.Page[Company], error) {
	return s.ListBy(ctx, org, q, "", "")
}

// ListBy returns a page of org's companies whose filter field (one of
// Filters; "" for none) equals value. A website matches by its host
// without "www." (WebsiteKey), as upserts match companies.
func (s *Service) ListBy(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[Company], error) {
	if err := filtered(&q, filter, value); err != nil {
		return store.Page[Company]{Items: []Company{}}, err
	}
	return s.coll.List(ctx, org, q)
}

// ListJSON is ListBy with each company encoded: for a response.
func (s *Service) ListJSON(ctx context.Context, org string, q store.Query, filter, value string) (store.Page[store.JSON], error) {
	if err := filtered(&q, filter, value); err != nil {
		return store.Page[store.JSON]{Items: []store.JSON{}}, err
	}
	return s.coll.ListJSON(ctx, org, q)
}

// filtered restricts q to the companies whose filter field equals value.
func filtered(q *store.Query, filter, value string) error {
	switch filter {
	case "":
	case "website":
		q.Where = &store.Where{Lookup: filter, Value: WebsiteKey(value)}
	case "externalId":
		q.Where = &store.Where{Lookup: filter, Value: value}
	default:
		return apperr.InvalidQuery(filter, "is not a filter of companies; filter by %s", strings.Join(Filters, " or "))
	}
	return nil
}

// Update applies f to a company of org. A request that changes nothing
// writes nothing and leaves updatedAt alone.
func (s *Service) Update(ctx context.Context, org, id string, f Fields) (*Company, error) {
	return s.coll.Update(ctx, org, id, func(c *Company) error {
		before, _ := json.Marshal(c)
		f.Apply(c)
		if after, _ := json.Marshal(c); string(after) == string(before) {
			return store.ErrUnchanged
		}
		c.UpdatedAt = s.now()
		return nil
	})
}

// Delete removes a company of org.
func (s *Service) Delete(ctx context.Context, org, id string, extra ...store.Op) error {
	return s.coll.Delete(ctx, org, id, extra...)
}

// ByExternalID is the id of org's company whose externalId is value, ""
// when none is: read from the value's uniqueness item, strongly
// consistent (an upsert's match, resource.Upsert).
func (s *Service) ByExternalID(ctx context.Context, org, value string) (string, error) {
	return s.coll.UniqueOwner(ctx, org, "externalId", value)
}

// Match finds the company of org that fields identify: by externalId, then
// website, then canonicalName (case-insensitive), the first that matches.
// It returns nil when none does.
func (s *Service) Match(ctx context.Context, org string, f Fields) (*Company, error) {
	try := func(found []Company, err error) (*Company, error) {
		if err != nil || len(found) == 0 {
			return nil, err
		}
		return &found[0], nil
	}
	if f.ExternalID.Set && !f.ExternalID.Null {
		if c, err := try(s.coll.FindBy(ctx, org, "externalId", f.ExternalID.Value, 1)); c != nil || err != nil {
			return c, err
		}
	}
	if f.Website.Set && !f.Website.Null {
		if c, err := try(s.coll.FindBy(ctx, org, "website", WebsiteKey(f.Website.Value), 1)); c != nil || err != nil {
			return c, err
		}
	}
	if f.CanonicalName.Set {
		// The sort key finds the names that fold alike (long names share
		// a cut key); keep only the same name. A company stored before
		// sort keys were folded is found by its lower-case key.
		name := f.CanonicalName.Value
		keys := []string{nameKey(name)}
		if old := lowerNameKey(name); old != keys[0] {
			keys = append(keys, old)
		}
		var same []Company
		for _, key := range keys {
			found, err := s.coll.FindBySortKey(ctx, org, "canonicalName", key, 25)
			if err != nil {
				return nil, err
			}
			for _, c := range found {
				if sameName(c.CanonicalName, name) {
					same = append(same, c)
				}
			}
		}
		return try(same, nil)
	}
	return nil, nil
}

// Enrich runs fn in a version-checked update of a company of org (retried
// on races, so fn must be a pure function of the company and what it
// reads), writing the operations fn returns in the same transaction: how
// enrichment writes candidates and the reconciled attributes together.
func (s *Service) Enrich(ctx context.Context, org, id string, fn func(*Company) ([]store.Op, error)) (*Company, error) {
	return s.coll.UpdateTx(ctx, org, id, func(c *Company) ([]store.Op, error) {
		ops, err := fn(c)
		if err != nil {
			return nil, err
		}
		c.UpdatedAt = s.now()
		return ops, nil
	})
}
