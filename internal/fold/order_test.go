package fold

import (
	"slices"
	"testing"
)

// Text finds letters by binary search: its tables are in order.
func TestTheTablesAreInOrder(t *testing.T) {
	if !slices.IsSorted(spelled[:]) || len(spelled) != len(spellings) {
		t.Error("spelled is not in order, or has not one spelling each")
	}
	if !slices.IsSorted(composed[:]) || len(composed) != len(bases) {
		t.Error("composed is not in order, or has not one base each")
	}
}
