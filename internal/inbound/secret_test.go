package inbound_test

import (
	"encoding/base32"
	"encoding/base64"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/inbound"
)

// draws is how many values the uniqueness tests generate; with 160 or more
// random bits a repeat would mean the generator is broken, not unlucky.
const draws = 2000

func TestNewSecretIsPrefixedBase64URLOf32RandomBytes(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`^whsec_[A-Za-z0-9_-]{43}$`)
	seen := make(map[string]bool, draws)
	for range draws {
		s := inbound.NewSecret()
		if !shape.MatchString(s) {
			t.Fatalf("NewSecret() = %q, want whsec_ and 43 base64url characters", s)
		}
		raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil || len(raw) != 32 {
			t.Fatalf("NewSecret() = %q decodes to %d bytes (%v), want 32", s, len(raw), err)
		}
		if seen[s] {
			t.Fatalf("NewSecret() repeated %q", s)
		}
		seen[s] = true
	}
}

func TestNewSlugIsPrefixedLowerBase32Of20RandomBytes(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`^wh_[a-z2-7]{32}$`)
	seen := make(map[string]bool, draws)
	for range draws {
		s := inbound.NewSlug()
		if !shape.MatchString(s) {
			t.Fatalf("NewSlug() = %q, want wh_ and 32 lower-case base32 characters", s)
		}
		if url.PathEscape(s) != s {
			t.Fatalf("NewSlug() = %q needs escaping in a URL path", s)
		}
		raw, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(strings.TrimPrefix(s, "wh_")))
		if err != nil || len(raw) != 20 {
			t.Fatalf("NewSlug() = %q decodes to %d bytes (%v), want 20", s, len(raw), err)
		}
		if seen[s] {
			t.Fatalf("NewSlug() repeated %q", s)
		}
		seen[s] = true
	}
}

func TestNewSecretVerifiesUnderBothSchemes(t *testing.T) {
	t.Parallel()
	secret := inbound.NewSecret()
	body := []byte(`{"event":"ping"}`)
	if err := inbound.Verify(inbound.Verifier{Scheme: inbound.SharedSecret, Secret: secret}, headers("X-Service-Webhook-Secret", secret), body); err != nil {
		t.Errorf("shared secret: %v", err)
	}
	if err := inbound.Verify(inbound.Verifier{Scheme: inbound.HMACSHA256, Secret: secret}, headers("X-Hub-Signature", inbound.Sign(secret, body)), body); err != nil {
		t.Errorf("hmac: %v", err)
	}
}
