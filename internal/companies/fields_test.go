package companies

import (
	"errors"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/apperr"
)

func TestWebsiteKeyReducesAWebsiteToItsHostWithoutWWW(t *testing.T) {
	t.Parallel()
	tests := []struct {
		website string
		want    string
	}{
		{"acme.com", "acme.com"},
		{"https://www.Acme.com/about", "acme.com"},
		{"http://acme.com", "acme.com"},
		{"HTTPS://WWW.ACME.COM", "acme.com"},
		{"www.acme.com", "acme.com"},
		{"  www.acme.com/  ", "acme.com"},
		{"acme.com:8080", "acme.com"},
		{"http://www.acme.com:443/path?q=1#top", "acme.com"},
		{"https://user:pass@www.acme.com", "acme.com"},
		{"https://blog.acme.com", "blog.acme.com"},
		{"https://www2.acme.com", "www2.acme.com"},
		{"https://www.www.acme.com", "www.acme.com"},
		{"https://wwwacme.com", "wwwacme.com"},
		{"http://localhost:3000", "localhost"},
		{"https://1.2.3.4/x", "1.2.3.4"},
		{"https://Zürich.example", "zürich.example"},
		{"", ""},
		{"   ", ""},
		{"%zz", ""},
		{"https://exa mple.com", ""},
	}
	for _, tt := range tests {
		if got := WebsiteKey(tt.website); got != tt.want {
			t.Errorf("WebsiteKey(%q) = %q, want %q", tt.website, got, tt.want)
		}
	}
}

func TestWebsiteKeyMatchesTheSameSiteHoweverItIsWritten(t *testing.T) {
	t.Parallel()
	same := []string{"acme.com", "https://www.Acme.com/about", "http://ACME.com/", "www.acme.com?ref=x", " https://acme.com "}
	for _, w := range same {
		if got := WebsiteKey(w); got != WebsiteKey(same[0]) {
			t.Errorf("WebsiteKey(%q) = %q, want it to equal WebsiteKey(%q) = %q", w, got, same[0], WebsiteKey(same[0]))
		}
	}
}

func TestCheckURLAcceptsHTTPURLsAndBareDomainsOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://example.com", true},
		{"http://example.com/path?q=1#frag", true},
		{"HTTPS://EXAMPLE.COM", true},
		{"example.com", true},
		{"www.example.co.uk/about", true},
		{"  https://example.com  ", true},
		{"https://sub.example.com:8443", true},
		{"http://localhost", true},
		{"localhost:8080", true},
		{"http://192.0.2.1", true},
		{"https://bücher.example", true},

		{"", false},
		{"   ", false},
		{"example", false},
		{"https://example", false},
		{"https://", false},
		{"//example.com", false},
		{"ftp://example.com", false},
		{"mailto://x@example.com", false},
		{"file:///etc/passwd", false},
		{"javascript:alert(1)", false},
		{"exa mple.com", false},
		{"https://example.com/a b", false},
		{"https://example.com\n", true}, // surrounding whitespace is trimmed
		{"https://exa\tmple.com", false},
		{"https://example.com/\r\nX-Injected: 1", false},
		{"%zz", false},
		{"https://[::1]", false},
	}
	for _, tt := range tests {
		err := checkURL("website", tt.url)
		if tt.ok && err != nil {
			t.Errorf("checkURL(%q) = %v, want it accepted", tt.url, err)
		}
		if !tt.ok {
			var inv *apperr.InvalidError
			if !errors.As(err, &inv) {
				t.Errorf("checkURL(%q) = %v, want an *apperr.InvalidError", tt.url, err)
				continue
			}
			if inv.Field != "website" || !strings.Contains(inv.Message, "URL") {
				t.Errorf("checkURL(%q) = field %q message %q, want field website and a message about the URL", tt.url, inv.Field, inv.Message)
			}
		}
	}
}

func TestDecodeChecksTheWebsiteButNotANullOne(t *testing.T) {
	t.Parallel()
	if _, err := DecodeCreate([]byte(`{"canonicalName":"Acme","website":"not a url"}`)); err == nil ||
		err.Error() != "website must be a URL such as https://example.com" {
		t.Errorf("bad website: err = %v, want the website rule", err)
	}
	f, err := DecodeUpdate([]byte(`{"website":null}`))
	if err != nil || !f.Website.Set || !f.Website.Null {
		t.Errorf("null website: %+v, %v; want a set null field", f.Website, err)
	}
}

// A website must name a domain: the rule "the host has a dot" lets through
// hosts made only of dots or with an empty label, and "www.", whose
// WebsiteKey is empty, so such a company is stored with a website it can
// never be matched by.
func TestCheckURLRejectsHostsWithEmptyLabels(t *testing.T) {
	t.Parallel()
	for _, u := range []string{".", "..", "https://.", "http://...", "www.", "https://a..b"} {
		if err := checkURL("website", u); err == nil {
			t.Errorf("BUG: checkURL(%q) accepts it (WebsiteKey %q); a host with an empty label is not a domain name and must be a 400", u, WebsiteKey(u))
		}
	}
}
