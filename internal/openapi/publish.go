package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Publish is the document as published (docs/openapi.json) of doc, the
// document Document makes: the same, with the schemas of answers open to
// additive change. Document's schemas are closed (additionalProperties:
// false), the service's exact output, which the contract tests hold the
// service to: a field the document does not name is drift. A client
// generated from the published document must keep working when a field
// is added to an answer, so there every schema an answer reaches (its
// body's and headers', and the components they refer to) drops
// `additionalProperties: false`. Request bodies stay closed: the service
// refuses a field it does not know.
//
// A component schema reached both by a request and by an answer cannot be
// both: Publish refuses a closed one.
//
// A query parameter of style deepObject (a list's filter[<field>][<op>])
// is left out of the published document, with the schemas only it used:
// OpenAPI defines deepObject for one level of an object only, and client
// generators refuse a nested one (ogen) or throw on it at run time
// (openapi-fetch). The service still takes it, its operation's description
// says how, and clients send the same list as a typed body instead (POST
// /v1/<resource>/query). The strict document, which the contract tests
// check requests against, keeps it.
func Publish(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var d map[string]any
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("openapi: publish: %w", err)
	}
	components, _ := d["components"].(map[string]any)
	answers, requests := map[string]bool{}, map[string]bool{}
	paths, _ := d["paths"].(map[string]any)
	if dropDeepObjects(paths) {
		dropUnused(d, components)
	}
	for _, item := range paths {
		ops, _ := item.(map[string]any)
		for key, op := range ops {
			o, ok := op.(map[string]any)
			if !ok || key == "parameters" {
				refs(op, requests)
				continue
			}
			for part, v := range o {
				switch part {
				case "responses":
					open(v)
					refs(v, answers)
				case "parameters", "requestBody":
					refs(v, requests)
				}
			}
		}
	}
	if rs, ok := components["responses"].(map[string]any); ok {
		for name, r := range rs {
			open(r)
			answers["#/components/responses/"+name] = true
		}
	}
	closure(components, answers)
	closure(components, requests)
	for ref := range answers {
		target := component(components, ref)
		if requests[ref] && closed(target) {
			return nil, fmt.Errorf("openapi: publish: %s is a request's and an answer's: closed for the one, it must be open for the other; give each its own", ref)
		}
		open(target)
	}
	d["paths"] = inRoutingOrder(paths)
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// dropDeepObjects removes the deepObject query parameters of every
// operation of paths, reporting whether there were any.
func dropDeepObjects(paths map[string]any) bool {
	dropped := false
	for _, item := range paths {
		ops, _ := item.(map[string]any)
		for _, op := range ops {
			o, ok := op.(map[string]any)
			if !ok {
				continue
			}
			params, ok := o["parameters"].([]any)
			if !ok {
				continue
			}
			kept := slices.DeleteFunc(slices.Clone(params), func(p any) bool {
				m, _ := p.(map[string]any)
				return m["in"] == "query" && m["style"] == "deepObject"
			})
			if len(kept) < len(params) {
				o["parameters"], dropped = kept, true
			}
		}
	}
	return dropped
}

// dropUnused removes the component schemas nothing in d refers to any
// more (through paths or other components), repeatedly.
func dropUnused(d, components map[string]any) {
	schemas, _ := components["schemas"].(map[string]any)
	for {
		used := map[string]bool{}
		rest := map[string]any{}
		for k, v := range d {
			if k != "components" {
				rest[k] = v
			}
		}
		for k, v := range components {
			if k != "schemas" {
				rest["components."+k] = v
			}
		}
		refs(rest, used)
		for _, s := range schemas {
			refs(s, used)
		}
		removed := false
		for name := range schemas {
			if !used["#/components/schemas/"+name] {
				delete(schemas, name)
				removed = true
			}
		}
		if !removed {
			return
		}
	}
}

// inRoutingOrder lists paths by their segments, a segment that is a whole
// template ({id}) before one with text of its own (ids={ids}, search):
// the less specific first. Two templates can match one request
// (/v1/documents/ids=a,b: {id} and ids={ids}); OpenAPI leaves the choice
// to the tool, and Prism takes the one listed last, the more specific.
func inRoutingOrder(paths map[string]any) orderedObject {
	keys := slices.Collect(maps.Keys(paths))
	slices.SortFunc(keys, func(a, b string) int {
		as, bs := strings.Split(a, "/"), strings.Split(b, "/")
		for i := 0; i < len(as) && i < len(bs); i++ {
			if as[i] == bs[i] {
				continue
			}
			switch at, bt := wholeTemplate(as[i]), wholeTemplate(bs[i]); {
			case at && !bt:
				return -1
			case bt && !at:
				return 1
			}
			return strings.Compare(as[i], bs[i])
		}
		return len(as) - len(bs)
	})
	return orderedObject{keys: keys, values: paths}
}

func wholeTemplate(segment string) bool {
	return strings.HasPrefix(segment, "{") && strings.HasSuffix(segment, "}") && strings.Count(segment, "{") == 1
}

// orderedObject is a JSON object whose members are written in keys' order.
type orderedObject struct {
	keys   []string
	values map[string]any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// refs adds to set every $ref within v.
func refs(v any, set map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				set[s] = true
				continue
			}
			refs(e, set)
		}
	case []any:
		for _, e := range x {
			refs(e, set)
		}
	}
}

// closure adds to set what the components set refers to refer to, and so
// on.
func closure(components map[string]any, set map[string]bool) {
	for todo := slices.Collect(maps.Keys(set)); len(todo) > 0; {
		ref := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		more := map[string]bool{}
		refs(component(components, ref), more)
		for r := range more {
			if !set[r] {
				set[r] = true
				todo = append(todo, r)
			}
		}
	}
}

// component is what ref ("#/components/schemas/Company") names.
func component(components map[string]any, ref string) any {
	kind, name, ok := strings.Cut(strings.TrimPrefix(ref, "#/components/"), "/")
	if !ok {
		return nil
	}
	group, _ := components[kind].(map[string]any)
	return group[name]
}

// open drops every `additionalProperties: false` within v.
func open(v any) {
	switch x := v.(type) {
	case map[string]any:
		if ap, ok := x["additionalProperties"].(bool); ok && !ap {
			delete(x, "additionalProperties")
		}
		for _, e := range x {
			open(e)
		}
	case []any:
		for _, e := range x {
			open(e)
		}
	}
}

// closed reports whether v holds an `additionalProperties: false`.
func closed(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if ap, ok := x["additionalProperties"].(bool); ok && !ap {
			return true
		}
		for _, e := range x {
			if closed(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if closed(e) {
				return true
			}
		}
	}
	return false
}
