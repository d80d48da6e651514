package inbound

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ErrInvalidSignature is the only error Verify returns, whatever the check that
// failed, so a caller cannot tell a sender (or an attacker) why it was refused.
// Wrapped reasons are for logs and never contain the secret or the presented value.
var ErrInvalidSignature = errors.New("invalid signature")

// sha256Prefix is GitHub's algorithm tag in front of the hex digest.
const sha256Prefix = "sha256="

// Verify checks a request's headers and raw body against the trigger. It
// returns nil when the request proves knowledge of the secret under the
// trigger's scheme, and an error matching ErrInvalidSignature otherwise.
//
// It fails closed: an empty secret, an unknown scheme or an invalid custom
// header name never verify, so a half-configured trigger cannot be started by
// anyone who merely knows the slug. When a header has several values only the
// first is used, so a sender cannot add guesses.
func Verify(t Verifier, h http.Header, body []byte) error {
	if t.Secret == "" {
		return fmt.Errorf("%w: trigger has no secret", ErrInvalidSignature)
	}
	if t.HeaderName != "" && ValidateHeaderName(t.HeaderName) != nil {
		return fmt.Errorf("%w: trigger has an invalid header name", ErrInvalidSignature)
	}
	switch t.Scheme {
	case SharedSecret:
		return verifySharedSecret(t, h)
	case HMACSHA256:
		return verifyHMAC(t, h, body)
	}
	return fmt.Errorf("%w: unknown signature scheme", ErrInvalidSignature)
}

// unknownTrigger is what a delivery to a slug that leads to no trigger is
// checked against: a trigger as created (shared secret in the default
// header) with a random secret of this process that nobody knows.
var unknownTrigger = Verifier{Scheme: SharedSecret, Secret: NewSecret()}

// RefuseUnknown refuses a delivery to a slug that leads to no trigger (never
// created, deleted, or longer than any slug) exactly as Verify refuses a
// wrong secret: an error matching ErrInvalidSignature. It first runs the
// check of a trigger as created against a secret nobody knows, so that the
// refusal costs what a real trigger's check of the same request costs and
// the time of the answer does not tell slugs apart either.
func RefuseUnknown(h http.Header, body []byte) error {
	_ = Verify(unknownTrigger, h, body) // refused whatever the outcome
	return fmt.Errorf("%w: no trigger has this slug", ErrInvalidSignature)
}

// verifySharedSecret accepts the secret in the trigger's header or, only while
// the default header is in use, as a Bearer token: a custom header is an
// explicit choice of where the secret travels, so other places are refused
// (spec rule 2). The dedicated header wins when both are sent.
func verifySharedSecret(t Verifier, h http.Header) error {
	name := t.Header()
	if v, ok := firstValue(h, name); ok {
		if secretEqual(strings.TrimSpace(v), t.Secret) {
			return nil
		}
		return fmt.Errorf("%w: %s does not match the secret", ErrInvalidSignature, name)
	}
	if t.HeaderName != "" {
		return fmt.Errorf("%w: missing %s header", ErrInvalidSignature, name)
	}
	v, ok := firstValue(h, authorizationHdr)
	if !ok {
		return fmt.Errorf("%w: missing %s or Authorization header", ErrInvalidSignature, name)
	}
	token, ok := bearerToken(v)
	if !ok {
		return fmt.Errorf("%w: Authorization is not a Bearer credential", ErrInvalidSignature)
	}
	if !secretEqual(token, t.Secret) {
		return fmt.Errorf("%w: Bearer token does not match the secret", ErrInvalidSignature)
	}
	return nil
}

// bearerToken extracts the token of "Bearer <token>"; the scheme is matched
// case-insensitively (RFC 7235) and any run of spaces or tabs may separate it.
func bearerToken(v string) (string, bool) {
	v = strings.TrimSpace(v)
	i := strings.IndexAny(v, " \t")
	if i < 0 || !strings.EqualFold(v[:i], "Bearer") {
		return "", false
	}
	token := strings.TrimSpace(v[i:])
	return token, token != ""
}

// secretEqual compares in constant time. Hashing both sides first gives equal
// lengths, so neither the secret's length nor a common prefix leaks through timing.
func secretEqual(presented, secret string) bool {
	a := sha256.Sum256([]byte(presented))
	b := sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// verifyHMAC accepts "sha256=<hex>" or bare "<hex>" of HMAC-SHA256 over the
// body exactly as received: re-serialized JSON must fail (spec rule 3).
func verifyHMAC(t Verifier, h http.Header, body []byte) error {
	name := t.Header()
	v, ok := firstValue(h, name)
	if !ok {
		return fmt.Errorf("%w: missing %s header", ErrInvalidSignature, name)
	}
	v = strings.TrimSpace(v)
	digest, prefixed := strings.CutPrefix(v, sha256Prefix)
	if !prefixed && strings.Contains(v, "=") {
		// Another algorithm tag such as "sha1=": refuse rather than guess.
		return fmt.Errorf("%w: %s has an unsupported algorithm prefix", ErrInvalidSignature, name)
	}
	got, err := hex.DecodeString(digest)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: %s is not a hex SHA-256 digest", ErrInvalidSignature, name)
	}
	if !hmac.Equal(got, bodyMAC(t.Secret, body)) {
		return fmt.Errorf("%w: %s does not match the body", ErrInvalidSignature, name)
	}
	return nil
}

// Sign returns the "sha256=<hex>" signature a sender puts in the header for the
// hmac-sha256 scheme; it exists for clients, tests and documentation examples.
func Sign(secret string, body []byte) string {
	return sha256Prefix + hex.EncodeToString(bodyMAC(secret, body))
}

func bodyMAC(secret string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return m.Sum(nil)
}

// firstValue returns the first value of a header. Only the first counts, so
// repeating the header cannot be used to present several candidates.
func firstValue(h http.Header, name string) (string, bool) {
	vs := h.Values(name)
	if len(vs) == 0 {
		return "", false
	}
	return vs[0], true
}
