package inbound_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/inbound"
)

// failureReasons are every reason Verify may give, with <h> standing for the
// effective header name. Holding the messages to this list proves that no
// presented value or secret is ever interpolated into an error.
var failureReasons = map[string]bool{
	"trigger has no secret":                    true,
	"trigger has an invalid header name":       true,
	"unknown signature scheme":                 true,
	"<h> does not match the secret":            true,
	"missing <h> header":                       true,
	"missing <h> or Authorization header":      true,
	"Authorization is not a Bearer credential": true,
	"Bearer token does not match the secret":   true,
	"<h> has an unsupported algorithm prefix":  true,
	"<h> is not a hex SHA-256 digest":          true,
	"<h> does not match the body":              true,
}

// checkFailure asserts err is ErrInvalidSignature with one of the known reasons.
func checkFailure(t *testing.T, err error, trigger inbound.Verifier) {
	t.Helper()
	if !errors.Is(err, inbound.ErrInvalidSignature) {
		t.Fatalf("Verify() = %v, want ErrInvalidSignature", err)
	}
	reason, ok := strings.CutPrefix(err.Error(), "invalid signature: ")
	if ok {
		// Expand the templates rather than abstracting the message, since the
		// header name may itself occur in the fixed text (a header named "2").
		for template := range failureReasons {
			if reason == strings.ReplaceAll(template, "<h>", trigger.Header()) {
				return
			}
		}
	}
	t.Fatalf("Verify() error %q is not one of the known reasons", err)
}

// usableHeaderName reports whether a trigger with this custom name can verify at all.
func usableHeaderName(name string) bool {
	return name == "" || inbound.ValidateHeaderName(name) == nil
}

func FuzzVerifySharedSecret(f *testing.F) {
	f.Add(testSecret, "", testSecret, "", []byte(`{"a":1}`))
	f.Add(testSecret, "", "", "Bearer "+testSecret, []byte(nil))
	f.Add(testSecret, "X-My-Secret", testSecret, "Bearer "+testSecret, []byte("x"))
	f.Add(testSecret, "x-my-secret", "", "bearer  "+testSecret, []byte{})
	f.Add("", "", "", "", []byte{})
	f.Add(" padded ", "Authorization", " padded ", "Bearer padded", []byte{0xff})
	f.Add("ünïcode", "X-Sig", "ünïcode", "Basic dXNlcjpwYXNz", []byte("\x00"))
	f.Add("0", " ", "0", "0", []byte("0")) // an invalid name whose text occurs in messages

	f.Fuzz(func(t *testing.T, secret, headerName, value, authorization string, body []byte) {
		trigger := inbound.Verifier{Scheme: inbound.SharedSecret, HeaderName: headerName, Secret: secret}
		h := http.Header{}
		if value != "" {
			h.Set(trigger.Header(), value)
		}
		if authorization != "" {
			h.Set("Authorization", authorization)
		}

		err := inbound.Verify(trigger, h, body)
		if err == nil {
			// Success must be explained by the secret in the header or, only
			// with the default header, in a Bearer token.
			inHeader := strings.TrimSpace(value) == secret
			inBearer := headerName == "" && value == "" && strings.Contains(authorization, secret)
			if secret == "" || !(inHeader || inBearer) {
				t.Fatalf("Verify() accepted a request that does not carry the secret")
			}
		} else {
			checkFailure(t, err, trigger)
		}

		// Whenever the trigger is usable, the right credential must verify.
		if secret == "" || secret != strings.TrimSpace(secret) || !usableHeaderName(headerName) {
			return
		}
		if err := inbound.Verify(trigger, http.Header{trigger.Header(): {secret}}, body); err != nil {
			t.Fatalf("the secret in the trigger's header was refused: %v", err)
		}
		bearer := http.Header{"Authorization": {"Bearer " + secret}}
		err = inbound.Verify(trigger, bearer, body)
		if headerName == "" && err != nil {
			t.Fatalf("a Bearer token was refused with the default header: %v", err)
		}
		if headerName != "" && err == nil {
			t.Fatalf("a Bearer token was accepted although a custom header is set")
		}
	})
}

func FuzzVerifyHMAC(f *testing.F) {
	f.Add(testSecret, "", "", []byte(`{"a":1}`))
	f.Add(testSecret, "X-Hub-Signature-256", "sha256=00", []byte(`{"a": 1}`))
	f.Add(testSecret, "", "sha1=0123456789abcdef0123456789abcdef01234567", []byte{})
	f.Add("k", "x-sig", inbound.Sign("k", []byte("body")), []byte("body"))
	f.Add("k", "", strings.ToUpper(inbound.Sign("k", nil)[7:]), []byte(nil))
	f.Add("", "", inbound.Sign("", nil), []byte(nil))
	f.Add("ünïcode", "Content-Length", "  sha256=zz  ", []byte{0xff, 0xfe, 0x00})
	f.Add("0", "2", "0", []byte("0")) // a valid name that occurs in "SHA-256"

	f.Fuzz(func(t *testing.T, secret, headerName, value string, body []byte) {
		trigger := inbound.Verifier{Scheme: inbound.HMACSHA256, HeaderName: headerName, Secret: secret}
		h := http.Header{}
		if value != "" {
			h.Set(trigger.Header(), value)
		}

		err := inbound.Verify(trigger, h, body)
		if err == nil {
			digest := strings.TrimPrefix(inbound.Sign(secret, body), "sha256=")
			presented := strings.TrimPrefix(strings.TrimSpace(value), "sha256=")
			if secret == "" || !strings.EqualFold(presented, digest) {
				t.Fatalf("Verify() accepted a value that is not the body's signature")
			}
		} else {
			checkFailure(t, err, trigger)
		}

		// Whenever the trigger is usable, a correct signature of any body verifies
		// in every accepted form, and only for that body and secret.
		if secret == "" || !usableHeaderName(headerName) {
			return
		}
		name := trigger.Header()
		sig := inbound.Sign(secret, body)
		for _, form := range []string{sig, sig[len("sha256="):], "sha256=" + strings.ToUpper(sig[len("sha256="):]), " " + sig + "\t"} {
			if err := inbound.Verify(trigger, http.Header{name: {form}}, body); err != nil {
				t.Fatalf("a correct signature in the form %q was refused: %v", form, err)
			}
		}
		if inbound.Verify(trigger, http.Header{name: {sig}}, append(body[:len(body):len(body)], 'x')) == nil {
			t.Fatalf("a signature verified for a different body")
		}
		if inbound.Verify(inbound.Verifier{Scheme: inbound.HMACSHA256, HeaderName: headerName, Secret: secret + "x"}, http.Header{name: {sig}}, body) == nil {
			t.Fatalf("a signature verified under a different secret")
		}
	})
}
