// Package inbound authenticates inbound webhooks: the deliveries senders
// post to workflows' webhook triggers (the webhook function; the outbound
// webhooks the service sends are package outbound's).
//
// A trigger is reached at an unguessable slug and proves its sender with one of
// two schemes (see the spec's "Webhook trigger authentication"): a shared secret
// sent verbatim in a header, or a GitHub-style HMAC-SHA256 signature of the raw
// body. The package knows nothing about storage or routing, so the webhook
// handler, the dev server and tests share one definition of "valid".
package inbound

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/textproto"
	"slices"
	"strings"
)

// Scheme names how a webhook sender proves it holds the trigger's secret.
type Scheme string

const (
	// SharedSecret is the default scheme: the sender sends the secret itself.
	SharedSecret Scheme = "shared-secret"
	// HMACSHA256 has the sender sign the raw body, so the secret never travels.
	HMACSHA256 Scheme = "hmac-sha256"
)

// Default header names per scheme; HMAC uses GitHub's name so GitHub-style
// senders work without configuration.
const (
	sharedSecretHeader = "X-Service-Webhook-Secret"
	hmacHeader         = "X-Hub-Signature"
	authorizationHdr   = "Authorization"
)

// maxHeaderNameLen bounds custom header names; real names are far shorter and
// the bound keeps stored trigger records and error messages small.
const maxHeaderNameLen = 100

// ParseScheme turns the API's scheme string into a Scheme. Matching is exact
// because the value round-trips through the API and storage unchanged.
func ParseScheme(s string) (Scheme, error) {
	switch Scheme(s) {
	case SharedSecret, HMACSHA256:
		return Scheme(s), nil
	}
	return "", fmt.Errorf("invalid signature scheme %q: must be %q or %q", s, SharedSecret, HMACSHA256)
}

// DefaultHeader is the header the scheme reads when the trigger names none.
// It returns "" for an unknown scheme so that nothing is ever read from a
// header the caller did not intend.
func (s Scheme) DefaultHeader() string {
	switch s {
	case SharedSecret:
		return sharedSecretHeader
	case HMACSHA256:
		return hmacHeader
	}
	return ""
}

// reservedHeaders may not carry a signature: they are hop-by-hop, consumed or
// rewritten by HTTP servers and proxies (API Gateway, Lambda function URLs), or
// carry other credentials, so a secret placed there would be lost or confused.
// Keys are lower case.
var reservedHeaders = map[string]bool{
	"authorization":       true,
	"proxy-authorization": true,
	"proxy-authenticate":  true,
	"cookie":              true,
	"set-cookie":          true,
	"host":                true,
	"content-type":        true,
	"content-length":      true,
	"content-encoding":    true,
	"transfer-encoding":   true,
	"connection":          true,
	"keep-alive":          true,
	"proxy-connection":    true,
	"te":                  true,
	"trailer":             true,
	"upgrade":             true,
	"expect":              true,
	"x-forwarded-for":     true,
	"x-forwarded-host":    true,
	"x-forwarded-port":    true,
	"x-forwarded-proto":   true,
	"x-amzn-trace-id":     true,
}

// credentialHeaders carry credentials other than a webhook secret: HTTP
// authentication, cookies, the service's own API key pair, AWS session
// tokens and anti-forgery tokens. Keys are lower case.
var credentialHeaders = map[string]bool{
	"authorization":        true,
	"proxy-authorization":  true,
	"cookie":               true,
	"cookie2":              true,
	"set-cookie":           true,
	"set-cookie2":          true,
	"x-service-api-key":    true,
	"x-service-client-id":  true,
	"x-amz-security-token": true,
	"x-csrf-token":         true,
	"x-xsrf-token":         true,
}

// IsCredentialHeader reports whether a header name looks like it carries a
// credential other than a webhook secret: one of credentialHeaders, any
// X-Service-* header except the webhook secret header (the service keeps
// that prefix for its own credentials), or a name whose last word is an API
// key (X-Api-Key, Api-Key, X-Goog-Api-Key, x-apikey, X_API_KEY). Such a
// header cannot be a trigger's signature header, and runs never see it in
// webhook.headers. Signature and token headers that senders use for
// webhook secrets (X-Hub-Signature-256, X-Gitlab-Token) are not credentials
// in this sense: they are what a trigger reads.
func IsCredentialHeader(name string) bool {
	n := strings.ToLower(name)
	if credentialHeaders[n] {
		return true
	}
	if strings.HasPrefix(n, "x-service-") && n != strings.ToLower(sharedSecretHeader) {
		return true
	}
	squeezed := strings.NewReplacer("-", "", "_", "", ".", "").Replace(n)
	return strings.HasSuffix(squeezed, "apikey")
}

// ValidateHeaderName checks a custom signature header name before it is stored,
// so that a trigger can never be configured to read a header that senders
// cannot set, that the platform overwrites, or that carries another
// credential (IsCredentialHeader).
func ValidateHeaderName(name string) error {
	if name == "" {
		return errors.New("header name must not be empty")
	}
	if len(name) > maxHeaderNameLen {
		return fmt.Errorf("header name must be at most %d characters, got %d", maxHeaderNameLen, len(name))
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return fmt.Errorf("header name contains an invalid character at position %d: only letters, digits and !#$%%&'*+-.^_`|~ are allowed", i+1)
		}
	}
	if reservedHeaders[strings.ToLower(name)] {
		return fmt.Errorf("header name %q is reserved and cannot carry a webhook signature", textproto.CanonicalMIMEHeaderKey(name))
	}
	if IsCredentialHeader(name) {
		return fmt.Errorf("header name %q looks like a credential header (authorization, cookies, API keys and X-Service-* are refused); "+
			"choose a header of its own such as X-Webhook-Secret", textproto.CanonicalMIMEHeaderKey(name))
	}
	return nil
}

// isTokenChar reports whether c is an RFC 7230 tchar, the only bytes allowed
// in a header field name.
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// Verifier holds what verification needs from a workflow's webhook trigger.
type Verifier struct {
	// Scheme selects the check; anything but SharedSecret or HMACSHA256 fails closed.
	Scheme Scheme
	// HeaderName is a custom signature header; "" means the scheme's default.
	HeaderName string
	// Secret is the trigger's current secret; an empty secret never verifies.
	Secret string
	// PastHeaders are the headers (canonical form) the trigger read its
	// secret or signature from before its current header name: a sender
	// that has not caught up with a change may still send it there, so runs
	// never see them either. They play no part in verification.
	PastHeaders []string
	// PastSecretHashes are HashSecret of the trigger's secrets before its
	// current one (rotated away), the most recent kept: they no longer
	// verify, but a value equal to one is redacted from runs all the same
	// (IsSecret). The secrets themselves are not kept.
	PastSecretHashes []string
}

// Header returns the header that carries the secret or signature, in canonical
// MIME form so it can be compared with and looked up in an http.Header.
func (t Verifier) Header() string {
	if t.HeaderName == "" {
		return t.Scheme.DefaultHeader()
	}
	return textproto.CanonicalMIMEHeaderKey(t.HeaderName)
}

// CredentialHeaders lists the headers (canonical form) to strip before request
// headers are exposed to a workflow run, so that the run never sees the secret.
//
// Besides the effective header and Authorization it also lists both schemes'
// default headers and the trigger's PastHeaders: a sender that has not caught
// up with a change of header name or scheme may still send the secret under
// the old name, and that header must not leak into the run either.
func (t Verifier) CredentialHeaders() []string {
	names := make([]string, 0, 4+len(t.PastHeaders))
	for _, name := range append([]string{t.Header(), sharedSecretHeader, hmacHeader, authorizationHdr}, t.PastHeaders...) {
		if name = textproto.CanonicalMIMEHeaderKey(name); name != "" && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return names
}

// HidesHeader reports whether a request header is withheld from runs by its
// name: one of CredentialHeaders, or any header IsCredentialHeader names.
func (t Verifier) HidesHeader(name string) bool {
	return IsCredentialHeader(name) || slices.Contains(t.CredentialHeaders(), textproto.CanonicalMIMEHeaderKey(name))
}

// Withholds reports whether a request header is withheld from runs: by its
// name (HidesHeader), or by its values, when one of them holds the
// trigger's secret or anything that looks like a webhook secret ("whsec_",
// in any case). The value rule catches a secret sent under a header name
// the trigger never had, and an old secret (rotated since) under any name,
// which no list of names can.
func (t Verifier) Withholds(name string, values []string) bool {
	if t.HidesHeader(name) {
		return true
	}
	for _, v := range values {
		if LooksLikeSecret(v) || t.IsSecret(v) {
			return true
		}
	}
	return false
}

// LooksLikeSecret reports whether s contains a webhook secret's prefix
// ("whsec_", in any case): every secret the service makes starts with it.
func LooksLikeSecret(s string) bool {
	for i := 0; i+len(secretPrefix) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(secretPrefix)], secretPrefix) {
			return true
		}
	}
	return false
}

// Redacted is what a value equal to a trigger's secret becomes in a run's
// input (Redact).
const Redacted = "[redacted]"

// HashSecret is the form a rotated-away secret is kept in: SHA-256, hex.
// A secret is 256 random bits, so its hash cannot be turned back into it.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// maxHashedLen bounds the strings IsSecret hashes to compare with past
// secrets: every secret is far shorter, so longer strings cannot equal one.
const maxHashedLen = 256

// IsSecret reports whether s is one of the trigger's secrets: it contains
// the current one, or, spaces around it trimmed, equals a past one
// (PastSecretHashes). Only equality can be checked for a past secret, of
// which only the hash is kept.
func (t Verifier) IsSecret(s string) bool {
	if t.Secret != "" && strings.Contains(s, t.Secret) {
		return true
	}
	if len(t.PastSecretHashes) == 0 {
		return false
	}
	s = strings.TrimSpace(s)
	if s == "" || len(s) > maxHashedLen {
		return false
	}
	return slices.Contains(t.PastSecretHashes, HashSecret(s))
}

// Redact replaces, at any depth of v (objects and arrays as decoded from
// JSON), every string that IsSecret by Redacted, in place where it can;
// it returns v with its strings replaced. Object keys are left as they are.
func (t Verifier) Redact(v any) any {
	switch x := v.(type) {
	case string:
		if t.IsSecret(x) {
			return Redacted
		}
	case map[string]any:
		for k, e := range x {
			x[k] = t.Redact(e)
		}
	case []any:
		for i, e := range x {
			x[i] = t.Redact(e)
		}
	case []string:
		for i, e := range x {
			if t.IsSecret(e) {
				x[i] = Redacted
			}
		}
	}
	return v
}
