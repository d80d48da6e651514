package resources

import (
	"encoding/json"
	"fmt"
)

func ptr(f float64) *float64 { return &f }

func fieldIndex(field string, i int) string { return fmt.Sprintf("%s[%d]", field, i) }

// number reads a decoded JSON number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}
