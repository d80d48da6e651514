package enrichment

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sourcebase/sourcebase/internal/companies"
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
			_, err := cs.Enrich(ctx, org, id, func(c *companies.Company) ([]store.Op, error) {
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
			})
			return err
		}}
}
