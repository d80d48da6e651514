package partitionsim

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// item is an item as the DynamoDB JSON protocol spells it: attribute name
// to its typed value ({"S": "..."}, {"N": "1"}, {"M": {...}}, ...), kept
// raw so that what the proxy forwards is byte for byte what it got.
type item map[string]json.RawMessage

// str is the string of an S value; "" for any other.
func str(raw json.RawMessage) string {
	var v struct{ S *string }
	if json.Unmarshal(raw, &v) != nil || v.S == nil {
		return ""
	}
	return *v.S
}

// size is the item's size as DynamoDB counts it for capacity: the UTF-8
// length of every attribute name plus its value's size (valueSize).
func (it item) size() int {
	n := 0
	for name, raw := range it {
		n += len(name) + valueSize(raw)
	}
	return n
}

// valueSize is the size DynamoDB gives one attribute value: a string's
// UTF-8 bytes, a binary's bytes, a number's significant digits halved plus
// one, 1 for a Boolean or null, and for a map or a list 3 bytes plus each
// element (and each map key) plus a byte per element.
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html)
func valueSize(raw json.RawMessage) int {
	var v map[string]json.RawMessage
	if json.Unmarshal(raw, &v) != nil {
		return 0
	}
	for typ, body := range v {
		switch typ {
		case "S":
			var s string
			_ = json.Unmarshal(body, &s)
			return len(s)
		case "N":
			var s string
			_ = json.Unmarshal(body, &s)
			return numberSize(s)
		case "B":
			return binarySize(body)
		case "BOOL", "NULL":
			return 1
		case "SS", "NS", "BS":
			var set []string
			_ = json.Unmarshal(body, &set)
			n := 0
			for _, s := range set {
				switch typ {
				case "SS":
					n += len(s)
				case "NS":
					n += numberSize(s)
				default:
					b, _ := base64.StdEncoding.DecodeString(s)
					n += len(b)
				}
			}
			return n
		case "M":
			var m map[string]json.RawMessage
			_ = json.Unmarshal(body, &m)
			n := 3
			for k, e := range m {
				n += len(k) + valueSize(e) + 1
			}
			return n
		case "L":
			var l []json.RawMessage
			_ = json.Unmarshal(body, &l)
			n := 3
			for _, e := range l {
				n += valueSize(e) + 1
			}
			return n
		}
	}
	return 0
}

func numberSize(s string) int {
	digits := strings.TrimLeft(strings.NewReplacer("-", "", "+", "", ".", "").Replace(s), "0")
	if e := strings.IndexAny(digits, "eE"); e >= 0 {
		digits = digits[:e]
	}
	return (len(digits)+1)/2 + 1
}

func binarySize(body json.RawMessage) int {
	var s string
	_ = json.Unmarshal(body, &s)
	b, _ := base64.StdEncoding.DecodeString(s)
	return len(b)
}

// project is the part of it an index holds: its keys and the index's keys,
// plus every attribute (ALL) or the named ones (INCLUDE).
func (ix index) project(table *table, it item) item {
	if it == nil || it[ix.pk] == nil {
		return nil
	}
	if ix.projection == "ALL" {
		return it
	}
	out := item{}
	for _, name := range []string{table.pk, table.sk, ix.pk, ix.sk} {
		if v, ok := it[name]; ok && name != "" {
			out[name] = v
		}
	}
	for _, name := range ix.include {
		if v, ok := it[name]; ok {
			out[name] = v
		}
	}
	return out
}

// equal reports whether two projections hold the same attributes and values.
func equal(a, b item) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || string(v) != string(w) {
			return false
		}
	}
	return true
}
