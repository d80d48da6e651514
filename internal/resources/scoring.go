package resources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/resource"
)

// scoring is the section of the API reference that lists the scoring
// resources.
const scoring = "Scoring"

// Frameworks are scoring frameworks: weighted elements a company is scored on.
var Frameworks = declare(&resource.Def{
	Name: "frameworks", Singular: "framework", Type: "FRAMEWORK", IDPrefix: "fwk", Function: lambdas.Scoring,
	Title: "Scoring frameworks", Section: scoring,
	Doc: "A scoring framework: the weighted elements a company is scored on.",
	Rules: "`elements` must hold at least one element, with ids unique in the framework and a positive " +
		"total weight (400 naming `elements` or `elements[i].id`).",
	Fields: []resource.Field{
		nameField(true),
		description(),
		{Name: "elements", Kind: resource.Structs, Required: true, MaxItems: 100, Doc: "the elements: [{id, name, weight, description}]",
			Example: []any{
				map[string]any{"id": "e1", "name": "Team", "weight": 2, "description": "the founders' track record"},
				map[string]any{"id": "e2", "name": "Market", "weight": 1, "description": "the market's size and growth"},
			},
			Fields: []resource.Field{
				{Name: "id", Kind: resource.String, MaxLen: 64, Required: true, Doc: "the element's id, unique in the framework"},
				{Name: "name", Kind: resource.String, Required: true, Doc: "the element's name"},
				{Name: "weight", Kind: resource.Number, Min: ptr(0), Max: ptr(1000), Required: true, Doc: "its weight in the final score"},
				{Name: "description", Kind: resource.Text, MaxLen: 2000, Doc: "what it measures"},
			}},
	},
	Check: func(rec map[string]any) error {
		els, _ := rec["elements"].([]any)
		seen := map[string]int{}
		total := 0.0
		for i, e := range els {
			m, _ := e.(map[string]any)
			id, _ := m["id"].(string)
			if j, dup := seen[id]; dup {
				return apperr.Invalid(fmt.Sprintf("elements[%d].id", i), "repeats elements[%d].id %q; element ids are unique", j, id)
			}
			seen[id] = i
			w, _ := resource.NumberOf(m["weight"])
			total += w
		}
		if len(els) == 0 {
			return apperr.Invalid("elements", "must hold at least one element")
		}
		if total <= 0 {
			return apperr.Invalid("elements", "must have a positive total weight")
		}
		return nil
	},
})

// ScreeningStatuses are the states of a screening.
var ScreeningStatuses = []string{"draft", "running", "completed", "archived"}

// Screenings apply a framework to a set of companies.
var Screenings = declare(&resource.Def{
	Name: "screenings", Singular: "screening", Type: "SCREENING", IDPrefix: "scr", Function: lambdas.Scoring, Section: scoring,
	Doc: "A screening: a framework applied to a set of companies.",
	Fields: []resource.Field{
		nameField(true),
		{Name: "frameworkId", Kind: resource.Ref, Target: "frameworks", Required: true, Lookup: true, Restrict: true,
			Doc: "the framework; a framework with screenings cannot be deleted; a list filter"},
		{Name: "companyIds", Kind: resource.Refs, Target: Companies, MaxItems: 1000, Doc: "the companies screened"},
		{Name: "status", Kind: resource.Enum, Values: ScreeningStatuses, Default: "draft", Lookup: true, Doc: "draft, running, completed or archived; a list filter"},
	},
	SortUpdatedAt: true,
})

// Scores are the spec's score records: element scores written by a client
// (an external model's output) for a company, and the final score the
// service computes from the framework's weights.
var Scores = declare(&resource.Def{
	Name: "scores", Singular: "score", Type: "SCORE", IDPrefix: "scs", Function: lambdas.Scoring, Section: scoring,
	Doc: "A company's scores on a framework's elements; finalScore is the weight-normalized mean of the element scores.",
	Fields: []resource.Field{
		{Name: "frameworkId", Kind: resource.Ref, Target: "frameworks", Required: true, Immutable: true, Doc: "the framework scored on"},
		{Name: "frameworkName", Kind: resource.String, ReadOnly: true, Import: resource.ImportDerived, Doc: "the framework's name when the score was written"},
		{Name: "company", Kind: resource.Ref, Target: Companies, Required: true, Immutable: true, Lookup: true, Doc: "the company's id; a list filter"},
		{Name: "screeningId", Kind: resource.Ref, Target: "screenings", Lookup: true, Doc: "the screening, if any; a list filter"},
		{Name: "finalScore", Kind: resource.Number, ReadOnly: true, Import: resource.ImportDerived, Doc: "Σ weight·score / Σ weight over the elements scored, rounded to 4 decimals"},
		{Name: "elementScores", Kind: resource.Structs, Required: true, MaxItems: 100, Doc: "the element scores",
			Example: []any{
				map[string]any{"elementId": "e1", "score": 80, "reasoning": "repeat founders", "confidence": 70},
				map[string]any{"elementId": "e2", "score": 50, "reasoning": "a crowded market", "confidence": 60},
			},
			Fields: []resource.Field{
				{Name: "elementId", Kind: resource.String, MaxLen: 64, Required: true, Doc: "an element of the framework"},
				{Name: "elementName", Kind: resource.String, ReadOnly: true, Import: resource.ImportDerived, Doc: "the element's name, from the framework"},
				{Name: "score", Kind: resource.Number, Min: ptr(0), Max: ptr(100), Required: true, Doc: "the score, 0 to 100"},
				{Name: "reasoning", Kind: resource.Text, MaxLen: 5000, Doc: "why"},
				{Name: "confidence", Kind: resource.Number, Min: ptr(0), Max: ptr(100), Doc: "the confidence, 0 to 100"},
			}},
		{Name: "metadata", Kind: resource.Object, Doc: "free-form JSON object (model, version, run id, ...)"},
	},
	SortUpdatedAt: true,
	Compute:       computeScore,
	Rules: "Each `elementScores[i].elementId` must be an element of the framework, scored once (400 naming it). " +
		"The service sets `frameworkName`, each `elementName` and `finalScore` = Σ(weight × score) / Σ(weight) over " +
		"the elements scored, with the framework's weights, rounded to 4 decimals. " +
		"List a company's scores with `?company=`, a screening's with `?screeningId=`.",
})

// computeScore checks the element scores against the framework and sets
// frameworkName, each elementName and finalScore.
func computeScore(ctx context.Context, reg *resource.Registry, org string, rec map[string]any) error {
	frameworks, _ := reg.Service("frameworks")
	fid, _ := rec["frameworkId"].(string)
	fw, err := frameworks.Get(ctx, org, fid)
	if errors.Is(err, apperr.ErrNotFound) {
		return apperr.Conflict("framework %s has been deleted; this score can no longer be changed", fid)
	}
	if err != nil {
		return fmt.Errorf("read framework %s: %w", fid, err)
	}
	type element struct {
		name   string
		weight float64
	}
	byID := map[string]element{}
	els, _ := fw.Fields["elements"].([]any)
	for _, e := range els {
		m, _ := e.(map[string]any)
		id, _ := m["id"].(string)
		name, _ := m["name"].(string)
		w, _ := resource.NumberOf(m["weight"])
		byID[id] = element{name, w}
	}
	scores, _ := rec["elementScores"].([]any)
	if len(scores) == 0 {
		return apperr.Invalid("elementScores", "must hold at least one element score")
	}
	seen := map[string]int{}
	var sum, weights float64
	for i, s := range scores {
		m, _ := s.(map[string]any)
		id, _ := m["elementId"].(string)
		el, ok := byID[id]
		if !ok {
			return apperr.Invalid(fmt.Sprintf("elementScores[%d].elementId", i), "must be an element of framework %s; %q is not", fid, id)
		}
		if j, dup := seen[id]; dup {
			return apperr.Invalid(fmt.Sprintf("elementScores[%d].elementId", i), "repeats elementScores[%d]; score each element once", j)
		}
		seen[id] = i
		m["elementName"] = el.name
		v, _ := resource.NumberOf(m["score"])
		sum += el.weight * v
		weights += el.weight
	}
	rec["frameworkName"] = fw.Fields["name"]
	if weights == 0 {
		rec["finalScore"] = nil
		return nil
	}
	rec["finalScore"] = json.Number(fmt.Sprint(math.Round(sum/weights*1e4) / 1e4))
	return nil
}
