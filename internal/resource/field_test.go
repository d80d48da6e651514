package resource

import "testing"

func TestAnEmailNeedsAnAddressWithADottedDomain(t *testing.T) {
	for s, want := range map[string]bool{
		"ada@example.com": true, "a.b+c@mail.example.co.uk": true,
		"ada@example": false, "Ada <ada@example.com>": false, "ada": false, "@example.com": false,
		"ada@.com": false, "ada@[127.0.0.1]": false, "": false,
	} {
		if got := ValidEmail(s); got != want {
			t.Errorf("ValidEmail(%q) = %v, want %v", s, got, want)
		}
	}
}
