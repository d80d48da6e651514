package steps

import (
	"errors"
	"fmt"
	"strings"
)

// Known is what is known of a step's parameters when its workflow is
// saved, before any run resolves them.
type Known struct {
	// Names are the keys the parameters resolve to: each literal key,
	// and each ".$" key without its suffix (a run always sets it, or
	// fails). Sorted.
	Names []string
	// Values are the parameters whose value holds no ".$" key, by name:
	// every run resolves them to exactly these values.
	Values map[string]any
}

// KnownParameters is what is known of with before a run.
func KnownParameters(with map[string]any) Known {
	k := Known{Names: make([]string, 0, len(with)), Values: map[string]any{}}
	for _, key := range sortedKeys(with) {
		name, isPath := strings.CutSuffix(key, ".$")
		k.Names = append(k.Names, name)
		if !isPath && IsLiteral(with[key]) {
			k.Values[name] = with[key]
		}
	}
	return k
}

// IsLiteral reports whether v holds no ".$" key in any of its objects
// (also those inside arrays): a run resolves it to itself.
func IsLiteral(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if strings.HasSuffix(k, ".$") || !IsLiteral(e) {
				return false
			}
		}
	case []any:
		for _, e := range t {
			if !IsLiteral(e) {
				return false
			}
		}
	}
	return true
}

// CompanyChecker is a Companies that checks, when a workflow is saved,
// what its company steps will write, as Upsert and AddTags check it.
type CompanyChecker interface {
	// CheckUpsert refuses the fields of an upsertCompany step that Upsert
	// refuses whatever a run resolves: a name (read-only, unknown), or a
	// value known before the run.
	CheckUpsert(fields Known) error
	// CheckTags refuses the tags of a tagCompany step that AddTags
	// refuses whatever the company's tags.
	CheckTags(tags []string) error
}

// EnrichmentChecker is an Enrichment that checks, when a workflow is
// saved, the values an addEnrichment step will add, as AddValues checks
// them.
type EnrichmentChecker interface {
	// CheckValues refuses values (the step's literal array, whose
	// elements may hold paths) that AddValues refuses for a record of
	// resourceType whatever a run resolves.
	CheckValues(resourceType string, values []any) error
}

// Check refuses, when a workflow is saved, a step whose write every run
// reaching it would refuse: the fields an upsertCompany step sets and
// the tags a tagCompany step adds, checked against the company's
// declaration (CompanyChecker), and the values an addEnrichment step
// adds, against the record's enrichable properties (EnrichmentChecker).
// Only what the run itself refuses is refused, as far as it is known
// before the run: every name, and the values that hold no path. A writer
// that does not check leaves its steps to the run. The error is a
// *ValidationError naming the parameter (steps[2].with.employeeCount),
// the step, and the run's own message.
func (e Executor) Check(list []Step) error {
	for i, step := range list {
		if err := e.check(step); err != nil {
			return refused(i, step, err)
		}
	}
	return nil
}

// check has the step's writer check what perform would give it.
func (e Executor) check(step Step) error {
	switch step.Type {
	case TypeUpsertCompany:
		if c, ok := e.Companies.(CompanyChecker); ok {
			return c.CheckUpsert(KnownParameters(step.With))
		}
	case TypeTagCompany:
		c, ok := e.Companies.(CompanyChecker)
		v, literal := step.With["tags"]
		if !ok || !literal {
			return nil
		}
		tags, err := tagList("tags", v) // refused by Parse already
		if err != nil {
			return err
		}
		return c.CheckTags(tags)
	case TypeAddEnrichment:
		c, ok := e.Enrichment.(EnrichmentChecker)
		values, literal := step.With["values"].([]any)
		typ, _ := step.With["resourceType"].(string)
		if _, dynamic := step.With["resourceType.$"]; !ok || !literal || dynamic {
			return nil
		}
		if typ == "" {
			typ = "companies"
		}
		return c.CheckValues(typ, values)
	}
	return nil
}

// refused is err, a writer's refusal naming a field of what the step
// gives it (employeeCount, tags[3], values[0].property), as the refusal
// of parameter of step i.
func refused(i int, step Step, err error) error {
	param := fmt.Sprintf("steps[%d].with", i)
	var named interface{ ErrorParam() string }
	if errors.As(err, &named) && named.ErrorParam() != "" {
		param += "." + paramKey(step.With, named.ErrorParam())
	}
	return invalid(param, "is refused: step %d (%q, %s) would fail on every run with: %s", i, step.ID, step.Type, err.Error())
}

// paramKey is the key of with that sets field: field itself, or, for a
// whole field a path sets, its ".$" key.
func paramKey(with map[string]any, field string) string {
	if _, literal := with[field]; !literal {
		if _, dynamic := with[field+".$"]; dynamic {
			return field + ".$"
		}
	}
	return field
}
