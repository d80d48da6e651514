package enrichment

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/clock"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// ProviderImport is the provider of the candidates an import adds.
const ProviderImport = "import"

// FieldEnrichment is the record field that shows a record's candidates.
const FieldEnrichment = "enrichment"

// ImportInputs are the candidate values an import's row adds to a record
// of typ: each member of members (the row's ImportCandidate fields) is one
// (source import, provider import, sourceId the import, the import's
// confidence), and the enrichment member's candidates are each one, as
// the record's enrichment field shows them (their source, confidence,
// pinned and discoveredAt kept; pinned ones in their order). A member
// whose value is already one of the enrichment member's candidates of its
// property is not added twice (an exported record imported back). Errors
// name the member.
func (s *Service) ImportInputs(typ string, job resource.ImportJob, members map[string]json.RawMessage) ([]Input, error) {
	t, err := s.typ(typ)
	if err != nil {
		return nil, err
	}
	var out []Input
	held := map[string][]json.RawMessage{} // the enrichment member's values, by property
	if raw, ok := members[FieldEnrichment]; ok && !emptyJSON(raw) {
		var cands map[string][]Candidate
		if err := json.Unmarshal(raw, &cands); err != nil {
			return nil, apperr.Invalid(FieldEnrichment, "must be an object of candidate arrays, as a record's enrichment field: "+
				"{\"<property>\": [{\"value\": \"…\", \"source\": \"…\", \"confidence\": 90, \"pinned\": false, \"discoveredAt\": \"…\"}]}")
		}
		now := time.Now().UTC()
		for _, p := range t.Properties { // in the type's order, so that errors come in a stable order
			for i, c := range cands[p] {
				path := fmt.Sprintf("%s.%s[%d]", FieldEnrichment, p, i)
				v, err := t.candidateValue(p, c.Value)
				if err != nil {
					return nil, apperr.Invalid(path+".value", "%s", err)
				}
				if !slices.Contains(Sources, c.Source) {
					return nil, apperr.Invalid(path+".source", "must be one of %v; %q is not", Sources, c.Source)
				}
				if c.Confidence < 0 || c.Confidence > 100 {
					return nil, apperr.Invalid(path+".confidence", "must be a number from 0 to 100")
				}
				in := Input{Property: p, Value: v, Provider: ProviderImport, Source: c.Source, SourceID: job.ID,
					Confidence: c.Confidence, Pinned: c.Pinned, Imported: true}
				if !c.DiscoveredAt.IsZero() {
					at := c.DiscoveredAt
					in.CapturedOn = &at
				}
				if c.Pinned { // the first shown is the latest pinned
					at := clock.Time{Time: now.Add(-time.Duration(i) * time.Microsecond)}
					in.PinnedAt = &at
				}
				out = append(out, in)
				held[p] = append(held[p], v)
			}
		}
		for p := range cands {
			if _, ok := t.Fields[p]; !ok {
				return nil, apperr.Invalid(FieldEnrichment+"."+p, "is not an enriched property of %s: one of %v", typ, t.Properties)
			}
		}
	}
	for _, p := range t.Properties {
		raw, ok := members[p]
		if !ok || emptyJSON(raw) || slices.ContainsFunc(held[p], func(v json.RawMessage) bool { return sameJSON(v, raw) }) {
			continue
		}
		out = append(out, Input{Property: p, Value: raw, Provider: ProviderImport, Source: SourceImport, SourceID: job.ID,
			Confidence: job.Confidence, Imported: true})
	}
	if len(out) > MaxBatch {
		return nil, apperr.Invalid(FieldEnrichment, "the row holds %d candidate values; at most %d a record", len(out), MaxBatch)
	}
	return out, s.checkInputs(t, out)
}

// candidateValue is the value a shown candidate's text stands for: the
// text itself for a property of text, else the JSON it holds.
func (t *Type) candidateValue(p, text string) (json.RawMessage, error) {
	f := t.Fields[p]
	switch f.Kind {
	case resource.String, resource.Text, resource.Enum, resource.URL, resource.Email, resource.Date, resource.DateTime, resource.Ref:
		return json.Marshal(text)
	}
	if !json.Valid([]byte(text)) {
		return nil, fmt.Errorf("must hold a %s as JSON; %q is not", f.Kind, text)
	}
	return json.RawMessage(text), nil
}

// checkInputs checks each value as a write's body would be: of its
// property's type and rules.
func (s *Service) checkInputs(t *Type, in []Input) error {
	for _, v := range in {
		body, err := json.Marshal(map[string]any{"values": []map[string]any{{
			"property": v.Property, "value": v.Value, "source": v.Source, "confidence": v.Confidence}}})
		if err != nil {
			return err
		}
		if _, err := s.Decode(t.Name, body); err != nil {
			var inv *apperr.InvalidError
			if errors.As(err, &inv) {
				return apperr.Invalid(v.Property, "%s", inv.Message)
			}
			return err
		}
	}
	return nil
}

// emptyJSON reports a value that holds nothing: null, "", [] or {}.
func emptyJSON(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// sameJSON reports two JSON texts of one value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
