package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestASchemaIsMadeSelfContained(t *testing.T) {
	var s map[string]any
	json.Unmarshal([]byte(`{"type": "object", "properties": {
	  "filter": {"$ref": "#/$defs/Filter", "description": "conditions"},
	  "ops": {"type": "array", "items": {"oneOf": [
	    {"type": "object", "description": "a create", "additionalProperties": false, "required": ["op", "data"],
	     "properties": {"op": {"type": "string", "enum": ["create"]}, "data": {"type": "object", "required": ["name"]}}},
	    {"type": "object", "description": "a delete", "additionalProperties": false, "required": ["op", "id"],
	     "properties": {"op": {"type": "string", "enum": ["delete"]}, "id": {"type": "string", "description": "whose"}}}]}}},
	  "$defs": {
	    "Filter": {"type": "object", "properties": {"location.city": {"type": "string"}, "and": {"type": "array", "items": {"$ref": "#/$defs/Filter"}}}}}}`), &s)
	got, renamed := selfContained(s)
	b, _ := json.Marshal(got)
	text := string(b)
	for _, want := range []string{
		`"filter":{"description":"conditions","properties":{`,
		`"location__city":{"description":"the location city","type":"string"}`,
		`"and":{"description":"predicates that must all hold","items":{"description":"a nested filter, of the same shape as the one that holds it","type":"object"}`,
		`"op":{"description":"the operation","enum":["create","delete"],"type":"string"}`,
		`"required":["op"]`, `"description":"one of: a create; a delete"`, `"id":{"description":"whose","type":"string"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the schema lacks %s: %s", want, text)
		}
	}
	for _, gone := range []string{"$ref", "$defs", "oneOf", "location.city"} {
		if strings.Contains(text, gone) {
			t.Errorf("the schema still has %s: %s", gone, text)
		}
	}
	if renamed["location__city"] != "location.city" {
		t.Errorf("renamed %v", renamed)
	}
	args := restoreNames(map[string]any{"filter": map[string]any{"location__city": "Paris", "other__x": 1}}, renamed)
	if b, _ := json.Marshal(args); string(b) != `{"filter":{"location.city":"Paris","other__x":1}}` {
		t.Errorf("restored %s", b)
	}
}
