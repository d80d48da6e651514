package inbound_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/inbound"
)

// headers builds an http.Header from name/value pairs with Add, so that a
// name given twice yields two values in order.
func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

const testSecret = "whsec_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"

func TestVerify(t *testing.T) {
	t.Parallel()
	shared := inbound.Verifier{Scheme: inbound.SharedSecret, Secret: testSecret}
	sharedCustom := inbound.Verifier{Scheme: inbound.SharedSecret, HeaderName: "X-My-Secret", Secret: testSecret}
	hmacDefault := inbound.Verifier{Scheme: inbound.HMACSHA256, Secret: testSecret}
	hmacCustom := inbound.Verifier{Scheme: inbound.HMACSHA256, HeaderName: "X-Hub-Signature-256", Secret: testSecret}

	body := []byte(`{"a":1}`)
	sig := inbound.Sign(testSecret, body)
	bareHex := strings.TrimPrefix(sig, "sha256=")

	tests := []struct {
		name    string
		trigger inbound.Verifier
		headers http.Header
		body    []byte
		wantOK  bool
	}{
		// Shared secret in the default header.
		{name: "the shared secret in the default header verifies", trigger: shared, headers: headers("X-Service-Webhook-Secret", testSecret), wantOK: true},
		{name: "the default header name is matched case-insensitively", trigger: shared, headers: http.Header{"X-Service-Webhook-Secret": {testSecret}}, wantOK: true},
		{name: "whitespace around the shared secret is ignored", trigger: shared, headers: headers("X-Service-Webhook-Secret", "  "+testSecret+"\t"), wantOK: true},
		{name: "a wrong shared secret is refused", trigger: shared, headers: headers("X-Service-Webhook-Secret", "whsec_wrong"), wantOK: false},
		{name: "a prefix of the shared secret is refused", trigger: shared, headers: headers("X-Service-Webhook-Secret", testSecret[:len(testSecret)-1]), wantOK: false},
		{name: "the shared secret with extra characters is refused", trigger: shared, headers: headers("X-Service-Webhook-Secret", testSecret+"x"), wantOK: false},
		{name: "a shared secret differing only in case is refused", trigger: shared, headers: headers("X-Service-Webhook-Secret", strings.ToUpper(testSecret)), wantOK: false},
		{name: "an empty secret header is refused", trigger: shared, headers: headers("X-Service-Webhook-Secret", ""), wantOK: false},
		{name: "a request without any credential is refused", trigger: shared, headers: headers("X-Request-Id", "1"), wantOK: false},
		{name: "only the first value of a repeated header counts, so a later right one is refused", trigger: shared, headers: headers("X-Service-Webhook-Secret", "guess", "X-Service-Webhook-Secret", testSecret), wantOK: false},
		{name: "a right first value verifies even if later values are wrong", trigger: shared, headers: headers("X-Service-Webhook-Secret", testSecret, "X-Service-Webhook-Secret", "guess"), wantOK: true},
		{name: "the shared secret in the hmac default header is refused", trigger: shared, headers: headers("X-Hub-Signature", testSecret), wantOK: false},

		// Authorization fallback while the default header is in use.
		{name: "a Bearer token verifies while the default header is in use", trigger: shared, headers: headers("Authorization", "Bearer "+testSecret), wantOK: true},
		{name: "the Bearer scheme is matched case-insensitively", trigger: shared, headers: headers("Authorization", "bEaReR "+testSecret), wantOK: true},
		{name: "several spaces after Bearer are tolerated", trigger: shared, headers: headers("Authorization", "  Bearer   "+testSecret+" "), wantOK: true},
		{name: "a wrong Bearer token is refused", trigger: shared, headers: headers("Authorization", "Bearer whsec_wrong"), wantOK: false},
		{name: "an empty Bearer token is refused", trigger: shared, headers: headers("Authorization", "Bearer "), wantOK: false},
		{name: "the bare secret in Authorization is refused", trigger: shared, headers: headers("Authorization", testSecret), wantOK: false},
		{name: "Basic credentials are refused", trigger: shared, headers: headers("Authorization", "Basic "+testSecret), wantOK: false},
		{name: "Bearer without a separating space is refused", trigger: shared, headers: headers("Authorization", "Bearer"+testSecret), wantOK: false},
		{name: "a wrong dedicated header is not rescued by a right Bearer token", trigger: shared, headers: headers("X-Service-Webhook-Secret", "guess", "Authorization", "Bearer "+testSecret), wantOK: false},

		// Custom header for the shared secret.
		{name: "the shared secret in a custom header verifies", trigger: sharedCustom, headers: headers("X-My-Secret", testSecret), wantOK: true},
		{name: "a custom header configured in lower case still matches", trigger: inbound.Verifier{Scheme: inbound.SharedSecret, HeaderName: "x-my-secret", Secret: testSecret}, headers: headers("X-MY-SECRET", testSecret), wantOK: true},
		{name: "a Bearer token is refused once a custom header is set", trigger: sharedCustom, headers: headers("Authorization", "Bearer "+testSecret), wantOK: false},
		{name: "the default header is refused once a custom header is set", trigger: sharedCustom, headers: headers("X-Service-Webhook-Secret", testSecret), wantOK: false},
		{name: "a wrong custom header is refused", trigger: sharedCustom, headers: headers("X-My-Secret", "guess"), wantOK: false},

		// HMAC-SHA256.
		{name: "an hmac signature with the sha256 prefix verifies", trigger: hmacDefault, headers: headers("X-Hub-Signature", sig), body: body, wantOK: true},
		{name: "a bare hex hmac signature verifies", trigger: hmacDefault, headers: headers("X-Hub-Signature", bareHex), body: body, wantOK: true},
		{name: "upper-case hex after the prefix verifies", trigger: hmacDefault, headers: headers("X-Hub-Signature", "sha256="+strings.ToUpper(bareHex)), body: body, wantOK: true},
		{name: "upper-case bare hex verifies", trigger: hmacDefault, headers: headers("X-Hub-Signature", strings.ToUpper(bareHex)), body: body, wantOK: true},
		{name: "whitespace around the signature is ignored", trigger: hmacDefault, headers: headers("X-Hub-Signature", " \t"+sig+" "), body: body, wantOK: true},
		{name: "a sha1 prefix is refused even with a correct sha256 digest", trigger: hmacDefault, headers: headers("X-Hub-Signature", "sha1="+bareHex), body: body, wantOK: false},
		{name: "a doubled prefix is refused", trigger: hmacDefault, headers: headers("X-Hub-Signature", "sha256="+sig), body: body, wantOK: false},
		{name: "a signature made with another secret is refused", trigger: hmacDefault, headers: headers("X-Hub-Signature", inbound.Sign("whsec_other", body)), body: body, wantOK: false},
		{name: "a re-serialized body no longer verifies", trigger: hmacDefault, headers: headers("X-Hub-Signature", sig), body: []byte(`{"a": 1}`), wantOK: false},
		{name: "a truncated digest is refused", trigger: hmacDefault, headers: headers("X-Hub-Signature", sig[:len(sig)-2]), body: body, wantOK: false},
		{name: "a digest with a non-hex character is refused", trigger: hmacDefault, headers: headers("X-Hub-Signature", sig[:len(sig)-1]+"g"), body: body, wantOK: false},
		{name: "the bare secret in the signature header is refused", trigger: hmacDefault, headers: headers("X-Hub-Signature", testSecret), body: body, wantOK: false},
		{name: "a missing signature header is refused", trigger: hmacDefault, headers: headers(), body: body, wantOK: false},
		{name: "a Bearer token never satisfies hmac", trigger: hmacDefault, headers: headers("Authorization", "Bearer "+testSecret), body: body, wantOK: false},
		{name: "only the first signature value counts", trigger: hmacDefault, headers: headers("X-Hub-Signature", "sha256=00", "X-Hub-Signature", sig), body: body, wantOK: false},
		{name: "an empty body signed as such verifies", trigger: hmacDefault, headers: headers("X-Hub-Signature", inbound.Sign(testSecret, nil)), body: []byte{}, wantOK: true},
		{name: "an empty body does not verify against another body's signature", trigger: hmacDefault, headers: headers("X-Hub-Signature", sig), body: nil, wantOK: false},
		{name: "an hmac signature in a custom header verifies", trigger: hmacCustom, headers: headers("X-Hub-Signature-256", sig), body: body, wantOK: true},
		{name: "the default hmac header is refused once a custom header is set", trigger: hmacCustom, headers: headers("X-Hub-Signature", sig), body: body, wantOK: false},

		// Triggers that are not fully configured fail closed.
		{name: "a trigger without a secret never verifies", trigger: inbound.Verifier{Scheme: inbound.SharedSecret}, headers: headers("X-Service-Webhook-Secret", ""), wantOK: false},
		{name: "an hmac trigger without a secret never verifies", trigger: inbound.Verifier{Scheme: inbound.HMACSHA256}, headers: headers("X-Hub-Signature", inbound.Sign("", body)), body: body, wantOK: false},
		{name: "an unknown scheme never verifies", trigger: inbound.Verifier{Scheme: "plain", Secret: testSecret}, headers: headers("X-Service-Webhook-Secret", testSecret), wantOK: false},
		{name: "the zero scheme never verifies", trigger: inbound.Verifier{Secret: testSecret}, headers: headers("X-Service-Webhook-Secret", testSecret, "Authorization", "Bearer "+testSecret), wantOK: false},
		{name: "a reserved custom header name never verifies", trigger: inbound.Verifier{Scheme: inbound.SharedSecret, HeaderName: "Authorization", Secret: testSecret}, headers: headers("Authorization", testSecret), wantOK: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := inbound.Verify(tc.trigger, tc.headers, tc.body)
			if tc.wantOK {
				if err != nil {
					t.Fatalf("Verify() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, inbound.ErrInvalidSignature) {
				t.Fatalf("Verify() = %v, want ErrInvalidSignature", err)
			}
			assertNoLeak(t, err, tc.trigger.Secret, tc.headers)
		})
	}
}

// assertNoLeak fails if a verification error repeats the secret or anything
// the sender presented, since the reason may end up in logs.
func assertNoLeak(t *testing.T, err error, secret string, h http.Header) {
	t.Helper()
	msg := err.Error()
	if secret != "" && strings.Contains(msg, secret) {
		t.Errorf("error %q contains the secret", msg)
	}
	for name, values := range h {
		for _, v := range values {
			// Short values (such as "1" or "Bearer") may occur in the message by chance.
			if v = strings.TrimSpace(v); len(v) >= 8 && strings.Contains(msg, v) {
				t.Errorf("error %q contains the presented %s value", msg, name)
			}
		}
	}
}

func TestSignMatchesPublishedVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		secret string
		body   string
		want   string
	}{
		{
			// The example in GitHub's "Validating webhook deliveries" documentation.
			name:   "GitHub's documented example signs as documented",
			secret: "It's a Secret to Everybody",
			body:   "Hello, World!",
			want:   "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
		},
		{
			// Computed with `printf '' | openssl dgst -sha256 -hmac "It's a Secret to Everybody"`.
			name:   "an empty body signs as openssl signs it",
			secret: "It's a Secret to Everybody",
			body:   "",
			want:   "sha256=66a0c074deaa0f489ead6537e0d32f9a344b90bbeda705b6ed45ecd3b413fb40",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := inbound.Sign(tc.secret, []byte(tc.body)); got != tc.want {
				t.Fatalf("Sign() = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestVerifyErrorIsTheSameSentinelForEveryFailure(t *testing.T) {
	t.Parallel()
	// Callers map failures to one response; distinct error values would invite
	// telling senders why they failed.
	failures := []error{
		inbound.Verify(inbound.Verifier{Scheme: inbound.SharedSecret, Secret: testSecret}, headers(), nil),
		inbound.Verify(inbound.Verifier{Scheme: inbound.SharedSecret, Secret: testSecret}, headers("Authorization", "Basic x"), nil),
		inbound.Verify(inbound.Verifier{Scheme: inbound.HMACSHA256, Secret: testSecret}, headers("X-Hub-Signature", "zz"), nil),
		inbound.Verify(inbound.Verifier{Scheme: inbound.HMACSHA256}, headers(), nil),
	}
	for i, err := range failures {
		if !errors.Is(err, inbound.ErrInvalidSignature) {
			t.Errorf("failure %d: got %v, want ErrInvalidSignature", i, err)
		}
	}
	if inbound.ErrInvalidSignature.Error() != "invalid signature" {
		t.Errorf("ErrInvalidSignature reads %q, want the documented 401 message %q", inbound.ErrInvalidSignature, "invalid signature")
	}
}
