package inbound_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/webhooktest"
	"github.com/sourcebase/sourcebase/internal/inbound"
)

// TestVerifyAcceptsSignaturesFromOctokit checks our HMAC against GitHub's own
// signer, so that a bug shared by Sign and Verify cannot hide.
func TestVerifyAcceptsSignaturesFromOctokit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		secret string
		body   string
	}{
		{name: "compact JSON", secret: testSecret, body: `{"event":"deal.created","id":42,"ok":true}`},
		{name: "JSON with spaces, tabs and line breaks", secret: testSecret, body: "{\n\t\"a\" : 1 ,\r\n  \"b\": [ 1, 2 ]\n}\n"},
		{name: "JSON with non-ASCII text", secret: testSecret, body: `{"name":"Zoë Ångström","city":"東京","emoji":"🚀","combining":"é"}`},
		{name: "JSON with escaped characters", secret: testSecret, body: `{"q":"\"quoted\"\\back\u00e9\n"}`},
		{name: "a large body", secret: testSecret, body: strings.Repeat(`{"k":"value with ü"},`, 5000)},
		{name: "a generated secret", secret: inbound.NewSecret(), body: `{"a":1}`},
		{name: "a non-ASCII secret", secret: "sécret-密钥-🔑", body: `{"a":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name+" signed by octokit verifies", func(t *testing.T) {
			t.Parallel()
			body := []byte(tc.body)
			want := webhooktest.OctokitSign(t, tc.secret, body)
			assertSignatureVerifies(t, tc.secret, body, want)
		})
	}

	// Octokit refuses to sign an empty payload, so the empty body is checked
	// against a vector from openssl instead:
	// printf '' | openssl dgst -sha256 -hmac "It's a Secret to Everybody"
	t.Run("an empty body signed by openssl verifies", func(t *testing.T) {
		t.Parallel()
		const want = "sha256=66a0c074deaa0f489ead6537e0d32f9a344b90bbeda705b6ed45ecd3b413fb40"
		assertSignatureVerifies(t, "It's a Secret to Everybody", []byte{}, want)
	})
}

// assertSignatureVerifies checks that an independently made signature equals
// Sign's and verifies under the default and a custom hmac header.
func assertSignatureVerifies(t *testing.T, secret string, body []byte, want string) {
	t.Helper()
	if got := inbound.Sign(secret, body); got != want {
		t.Errorf("Sign() = %s, reference signer says %s", got, want)
	}
	for _, headerName := range []string{"", "X-Hub-Signature-256"} {
		trigger := inbound.Verifier{Scheme: inbound.HMACSHA256, HeaderName: headerName, Secret: secret}
		if err := inbound.Verify(trigger, http.Header{trigger.Header(): {want}}, body); err != nil {
			t.Errorf("Verify() with header %s refused the reference signature: %v", trigger.Header(), err)
		}
	}
}
