package store_test

import (
	"math/rand/v2"
	"testing"

	"github.com/sourcebase/sourcebase/internal/store"
)

// wireSize is WireSize's definition, a byte at a time.
func wireSize(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			n++
		case c < 0x20:
			n += 5
		case c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9):
			n += 3
		}
	}
	return n
}

func checkWireSize(t *testing.T, s string) {
	t.Helper()
	if got, want := store.WireSize(s), wireSize(s); got != want {
		t.Fatalf("WireSize(%q) = %d, want %d", s, got, want)
	}
	if got, want := store.WireSize([]byte(s)), wireSize(s); got != want {
		t.Fatalf("WireSize([]byte(%q)) = %d, want %d", s, got, want)
	}
}

func TestWireSizeCountsWhatAJSONStringAdds(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "a", `"`, `\`, "\x00", "\x1f", " ", "\u2028", "\u2029", "\u2027", "é", `{"a":"b\"c"}`,
		"1234567\n", "12345678\x01", "\x7f\x80\xff\xe2\x80", "\xe2\x80\xa8\xe2\x80\xa9\xe2\x80"} {
		checkWireSize(t, s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab\"\\\x00\x01\x1f\x20\x7f\x80\xa8\xa9\xe2")
	for range 5000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		checkWireSize(t, string(b))
	}
}

func FuzzWireSize(f *testing.F) {
	f.Add("\xe2\x80\xa8 \"\\\x01 plain text")
	f.Fuzz(func(t *testing.T, s string) { checkWireSize(t, s) })
}
