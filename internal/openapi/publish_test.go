package openapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/openapi"
)

func TestPublishOpensTheAnswersSchemasAndKeepsTheRequestsClosed(t *testing.T) {
	t.Parallel()
	closed := func(props string) openapi.Schema {
		var p openapi.Schema
		if err := json.Unmarshal([]byte(props), &p); err != nil {
			t.Fatal(err)
		}
		return openapi.Schema{"type": "object", "additionalProperties": false, "properties": p}
	}
	ops := []openapi.Operation{
		{Method: "POST", Path: "/v1/things", Function: "things", Tag: "things", Summary: "Create a thing", Status: 201,
			Body: openapi.Ref("ThingInput"), Data: openapi.Ref("Thing")},
		{Method: "GET", Path: "/v1/things/{id}", Function: "things", Tag: "things", Summary: "Get a thing", Status: 200, Data: openapi.Ref("Thing")},
		{Method: "GET", Path: "/v1/things/ids={ids}", Function: "things", Tag: "things", Summary: "Get things", Status: 200,
			Data: openapi.Schema{"type": "array", "items": openapi.Ref("Thing")}},
	}
	schemas := map[string]openapi.Schema{
		"Thing":      closed(`{"id": {"type": "string"}, "part": {"type": "object", "additionalProperties": false, "properties": {}}}`),
		"ThingInput": closed(`{"name": {"type": "string"}}`),
	}
	strict, err := openapi.Document(ops, schemas, nil, openapi.Info{Title: "Things", Tags: []openapi.Tag{{Name: "things", Title: "Things", Section: "Records"}}})
	if err != nil {
		t.Fatal(err)
	}
	published, err := openapi.Publish(strict)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      json.RawMessage
		Components struct{ Schemas map[string]map[string]any }
	}
	if err := json.Unmarshal(published, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Components.Schemas["ThingInput"]["additionalProperties"]; !ok {
		t.Errorf("a request body's schema was opened: %v", doc.Components.Schemas["ThingInput"])
	}
	if b, _ := json.Marshal(doc.Components.Schemas["Thing"]); strings.Contains(string(b), "additionalProperties") {
		t.Errorf("an answer's schema stays closed: %s", b)
	}
	if b, _ := json.Marshal(doc.Components.Schemas["Error"]); strings.Contains(string(b), "additionalProperties") {
		t.Errorf("the error answers' schema stays closed: %s", b)
	}
	if i, j := strings.Index(string(doc.Paths), `"/v1/things/{id}"`), strings.Index(string(doc.Paths), `"/v1/things/ids={ids}"`); i < 0 || j < i {
		t.Errorf("paths not in routing order ({id} before ids={ids}): %s", doc.Paths)
	}

	// A component both a request and an answer refer to cannot be both.
	ops[0].Body = openapi.Ref("Thing")
	strict, err = openapi.Document(ops, schemas, nil, openapi.Info{Title: "Things", Tags: []openapi.Tag{{Name: "things", Title: "Things", Section: "Records"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openapi.Publish(strict); err == nil || !strings.Contains(err.Error(), "Thing") {
		t.Errorf("Publish of a closed schema shared by a request and an answer: %v, want an error naming it", err)
	}
}
