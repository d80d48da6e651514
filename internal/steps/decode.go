package steps

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// decodeStrict decodes one JSON value the way json.Unmarshal into any does
// (objects as map[string]any, arrays as []any, numbers as float64), but
// rejects duplicate object keys and containers nested deeper than maxDepth
// (the root container is level 1). Errors are *ValidationError whose Field is
// the path of the offending value below root.
//
// It is written over json.Decoder tokens because json.Unmarshal keeps the
// last of duplicate keys silently and cannot say where a problem is.
func decodeStrict(raw []byte, root string, maxDepth int) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	v, err := decodeValue(dec, root, 1, maxDepth)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, invalid(root, "invalid JSON: unexpected data after the value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, field string, depth, maxDepth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(field, err)
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, float64, bool or nil
	}
	if depth > maxDepth {
		return nil, invalid(field, "nested too deeply (with allows at most %d levels of objects and arrays)", maxDepth-2)
	}
	switch delim {
	case '{':
		obj := map[string]any{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return nil, syntaxError(field, err)
			}
			key, ok := tok.(string)
			if !ok { // unreachable: the decoder only yields strings in key position
				return nil, invalid(field, "invalid JSON: object key is not a string")
			}
			kf := field + "." + key
			if _, dup := obj[key]; dup {
				return nil, invalid(kf, "duplicate key")
			}
			v, err := decodeValue(dec, kf, depth+1, maxDepth)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		if _, err := dec.Token(); err != nil { // the closing '}'
			return nil, syntaxError(field, err)
		}
		return obj, nil
	case '[':
		arr := []any{}
		for i := 0; dec.More(); i++ {
			v, err := decodeValue(dec, fmt.Sprintf("%s[%d]", field, i), depth+1, maxDepth)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		if _, err := dec.Token(); err != nil { // the closing ']'
			return nil, syntaxError(field, err)
		}
		return arr, nil
	default: // unreachable: Token reports a misplaced '}' or ']' as an error
		return nil, invalid(field, "invalid JSON: unexpected %q", rune(delim))
	}
}

func syntaxError(field string, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return invalid(field, "invalid JSON: %v", err)
}
