package workflows

import (
	"encoding/json"
	"errors"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/inbound"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/resource"
	"github.com/sourcebase/sourcebase/internal/steps"
	"github.com/sourcebase/sourcebase/internal/store"
)

// Def declares the workflow record on the resource layer: every field of
// Workflow, in its JSON order, with the rules of a create or update body.
// Bodies are decoded from it (DecodeCreate, DecodeUpdate) and
// docs/resources.md documents it; the records, their triggers and runs are
// still Service's own.
var Def = &resource.Def{
	Name: "workflows", Singular: "workflow", Type: store.TypeWorkflow, IDPrefix: "wf", Function: lambdas.Workflows, MCP: true,
	Section: "Workflows",
	Doc: "A workflow: steps run in order on an input, started through the API or by a webhook to its trigger. " +
		"The step language is described in [`docs/workflows.md`](workflows.md).",
	SortUpdatedAt: true,
	Fields: []resource.Field{
		{Name: "name", Kind: resource.String, MaxLen: 200, Required: true, Sort: true, Doc: "the workflow's name"},
		{Name: "description", Kind: resource.Text, MaxLen: 2000, Verbatim: true, Doc: "a description"},
		{Name: "steps", Kind: resource.Structs, MaxItems: steps.MaxSteps, Validate: validateSteps,
			Rule: "ids unique; each step's `with` as its `type` requires (see [`docs/workflows.md`](workflows.md)); 400 naming the path such as `steps[2].with.name.$`",
			Doc:  "the steps, run in order",
			Fields: []resource.Field{
				{Name: "id", Kind: resource.String, MaxLen: steps.MaxIDLength, Required: true, Verbatim: true, Doc: "the step's id, unique in the workflow"},
				{Name: "type", Kind: resource.String, Required: true, Verbatim: true, Doc: "what the step does"},
				{Name: "with", Kind: resource.Object, Doc: "the step's parameters; `.$` keys take JSONPath values"},
			}},
		{Name: "trigger", Kind: resource.Struct, Always: true, Doc: "the webhook trigger; on update only the parts sent change",
			Fields: []resource.Field{
				{Name: "slug", Kind: resource.String, ReadOnly: true, Always: true, Doc: "the trigger's part of the webhook path"},
				{Name: "scheme", Kind: resource.Enum, Values: []string{string(inbound.SharedSecret), string(inbound.HMACSHA256)}, Always: true,
					Doc: "how a webhook proves it knows the secret; `shared-secret` when not sent"},
				{Name: "headerName", Kind: resource.String, Verbatim: true, Validate: validateHeaderName,
					Rule: "an HTTP header name other than `Authorization`, `Content-Type` and other standard headers",
					Doc:  "the header carrying the secret or signature; `null` for the scheme's default"},
				{Name: "url", Kind: resource.URL, ReadOnly: true, Always: true, Doc: "where the trigger receives webhooks"},
				{Name: "secret", Kind: resource.String, ReadOnly: true, Omitted: true, Secret: true,
					Doc: "the trigger's secret, shown only in the create and rotate responses"},
			}},
	},
}

// validateSteps checks decoded steps with steps.Parse, keeping its error
// paths (steps[2].with.name.$).
func validateSteps(_ string, v any) error {
	_, err := parseSteps(v)
	return err
}

// parseSteps turns the decoded steps into Steps.
func parseSteps(v any) ([]steps.Step, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, apperr.Invalid("steps", "%v", err)
	}
	parsed, err := steps.Parse(raw)
	if err != nil {
		return nil, invalidSteps(err)
	}
	return parsed, nil
}

// invalidSteps is a refusal of steps (a *steps.ValidationError naming the
// path, such as steps[2].with.name.$) as a 400 naming that path.
func invalidSteps(err error) error {
	var ve *steps.ValidationError
	if errors.As(err, &ve) {
		return apperr.Invalid(ve.Field, "%s", ve.Message)
	}
	if err != nil {
		return apperr.Invalid("steps", "%v", err)
	}
	return nil
}

func validateHeaderName(path string, v any) error {
	s, _ := v.(string)
	if err := inbound.ValidateHeaderName(s); err != nil {
		return apperr.Invalid(path, "is invalid: %v", err)
	}
	return nil
}

// DecodeCreate parses a create body as Def declares it: name is required.
func DecodeCreate(body []byte) (Input, error) { return decode(body, true) }

// DecodeUpdate parses a partial update body as Def declares it.
func DecodeUpdate(body []byte) (Input, error) { return decode(body, false) }

// decode reads a body with the layer (Def.Decode) and turns the fields it
// sets into Input. The trigger is a partial object: the layer reads it
// whole, so which of its parts were sent is read from the body.
func decode(body []byte, create bool) (in Input, err error) {
	m, err := Def.Decode(body, create)
	if err != nil {
		return in, err
	}
	in.Name = resource.DecodedText(m, "name")
	in.Description = resource.DecodedText(m, "description")
	if v, ok := m["steps"]; ok {
		parsed, err := parseSteps(v)
		if err != nil {
			return in, err
		}
		in.Steps = jsonbody.Field[[]steps.Step]{Set: true, Value: parsed}
	}
	if _, ok := m["trigger"]; !ok {
		return in, nil
	}
	var sent struct {
		Trigger map[string]json.RawMessage `json:"trigger"`
	}
	if err := json.Unmarshal(body, &sent); err != nil || sent.Trigger == nil {
		return in, apperr.Invalid("trigger", "must be an object with scheme and/or headerName")
	}
	trig, _ := m["trigger"].(map[string]any)
	if _, ok := sent.Trigger["scheme"]; ok {
		if in.Scheme = resource.DecodedText(trig, "scheme"); in.Scheme.Null {
			return in, apperr.Invalid("trigger.scheme", "must be one of %s, %s", inbound.SharedSecret, inbound.HMACSHA256)
		}
	}
	if _, ok := sent.Trigger["headerName"]; ok {
		in.HeaderName = resource.DecodedText(trig, "headerName")
	}
	return in, nil
}
