package openapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/openapi"
)

// A parameter (header, query or path) or response header three
// operations declare alike is described once, in the components; one two
// declare stays inline, and so does a deepObject parameter.
func TestPartsManyOperationsDeclareAlikeAreComponents(t *testing.T) {
	plan := openapi.Param{Name: "X-Plan", Description: "a plan", Schema: openapi.Schema{"type": "string"}}
	rare := openapi.Param{Name: "X-Rare", Description: "rare", Schema: openapi.Schema{"type": "string"}}
	var ops []openapi.Operation
	for i := range 3 {
		op := openapi.Operation{Method: "GET", Path: fmt.Sprintf("/v1/things%d/{id}", i), Function: "things", Tag: "things", Summary: "list", Status: 200,
			Data: openapi.Schema{"type": "object"}, Headers: []openapi.Param{plan},
			Query: []openapi.Param{{Name: "limit", Schema: openapi.Schema{"type": "integer"}},
				{Name: "filter", Style: "deepObject", Explode: true, Schema: openapi.Schema{"type": "object"}}},
			ResponseHeaders: map[string]openapi.Param{"X-Served": {Description: "how", Schema: openapi.Schema{"type": "string"}}}}
		if i < 2 {
			op.Headers = append(op.Headers, rare)
		}
		ops = append(ops, op)
	}
	b, err := openapi.Document(ops, nil, nil, openapi.Info{Tags: []openapi.Tag{{Name: "things"}}})
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components map[string]map[string]json.RawMessage `json:"components"`
	}
	json.Unmarshal(b, &d)
	if d.Components["parameters"]["XPlan"] == nil || d.Components["parameters"]["Limit"] == nil || d.Components["parameters"]["IdPath"] == nil ||
		d.Components["headers"]["X-Served"] == nil {
		t.Errorf("components: parameters %v, headers %v", keys(d.Components["parameters"]), keys(d.Components["headers"]))
	}
	for path, item := range d.Paths {
		op := string(item["get"])
		for _, want := range []string{`"$ref": "#/components/parameters/XPlan"`, `"$ref": "#/components/headers/X-Served"`,
			`"$ref": "#/components/parameters/Limit"`, `"$ref": "#/components/parameters/IdPath"`, `"name": "filter"`} {
			if !strings.Contains(op, want) {
				t.Errorf("%s lacks %s", path, want)
			}
		}
		if path != "/v1/things2/{id}" && !strings.Contains(op, `"name": "X-Rare"`) {
			t.Errorf("%s: a header two operations declare is not inline", path)
		}
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A request body two operations declare alike is a component both refer
// to; a body of one operation stays inline.
func TestRequestBodiesTwoOperationsDeclareAlikeAreComponents(t *testing.T) {
	shared := openapi.Schema{"type": "object", "properties": openapi.Schema{"name": openapi.Schema{"type": "string"}}}
	own := openapi.Schema{"type": "object", "properties": openapi.Schema{"other": openapi.Schema{"type": "string"}}}
	ops := []openapi.Operation{
		{Method: "PUT", Path: "/v1/things", Function: "things", Tag: "things", Summary: "upsert", Status: 200, Data: openapi.Schema{"type": "object"}, Body: shared},
		{Method: "PATCH", Path: "/v1/things/{id}", Function: "things", Tag: "things", Summary: "update", Status: 200, Data: openapi.Schema{"type": "object"}, Body: shared},
		{Method: "POST", Path: "/v1/things", Function: "things", Tag: "things", Summary: "create", Status: 201, Data: openapi.Schema{"type": "object"}, Body: own},
	}
	b, err := openapi.Document(ops, nil, nil, openapi.Info{Tags: []openapi.Tag{{Name: "things"}}})
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Paths      map[string]map[string]map[string]json.RawMessage `json:"paths"`
		Components map[string]map[string]json.RawMessage            `json:"components"`
	}
	json.Unmarshal(b, &d)
	if d.Components["requestBodies"]["PutThingsBody"] == nil || len(d.Components["requestBodies"]) != 1 {
		t.Fatalf("request body components: %v", keys(d.Components["requestBodies"]))
	}
	for _, at := range [][2]string{{"/v1/things", "put"}, {"/v1/things/{id}", "patch"}} {
		if got := string(d.Paths[at[0]][at[1]]["requestBody"]); !strings.Contains(got, `"$ref": "#/components/requestBodies/PutThingsBody"`) {
			t.Errorf("%s %s: body %s", at[1], at[0], got)
		}
	}
	if got := string(d.Paths["/v1/things"]["post"]["requestBody"]); !strings.Contains(got, `"other"`) {
		t.Errorf("a body one operation declares is not inline: %s", got)
	}
}
