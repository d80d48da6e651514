package resource

import "github.com/sourcebase/sourcebase/internal/jsonbody"

// The readers below turn what Def.Decode returns into the typed fields of
// resources stored outside the layer (companies, workflows): absent when
// not sent, Null when sent as null.

// DecodedText reads a text field.
func DecodedText(m map[string]any, name string) jsonbody.Field[string] {
	v, ok := m[name]
	if !ok {
		return jsonbody.Field[string]{}
	}
	s, isText := v.(string)
	return jsonbody.Field[string]{Set: true, Null: !isText, Value: s}
}

// DecodedTexts reads an array of strings; null arrives as [].
func DecodedTexts(m map[string]any, name string) jsonbody.Field[[]string] {
	v, ok := m[name]
	if !ok {
		return jsonbody.Field[[]string]{}
	}
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return jsonbody.Field[[]string]{Set: true, Value: out}
}

// DecodedObject reads a free-form object; null arrives as {}.
func DecodedObject(m map[string]any, name string) jsonbody.Field[map[string]any] {
	v, ok := m[name]
	if !ok {
		return jsonbody.Field[map[string]any]{}
	}
	o, _ := v.(map[string]any)
	return jsonbody.Field[map[string]any]{Set: true, Value: o}
}

// DecodeAs reads the member name of o as a value of field f (its kind,
// limits and Validate), errors naming o's path of name: how a value sent
// for a field elsewhere than in a record's body (an enrichment candidate)
// is checked. Null is refused.
func (f Field) DecodeAs(o *jsonbody.Object, name string) (any, error) {
	g := f
	g.Name, g.Required = name, true
	v, _, err := g.decode(o)
	return v, err
}
