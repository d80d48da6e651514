package inbound_test

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/inbound"
)

func TestParseScheme(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    inbound.Scheme
		wantErr bool
	}{
		{name: "shared-secret parses", in: "shared-secret", want: inbound.SharedSecret},
		{name: "hmac-sha256 parses", in: "hmac-sha256", want: inbound.HMACSHA256},
		{name: "an empty string is refused", in: "", wantErr: true},
		{name: "upper case is refused because matching is exact", in: "HMAC-SHA256", wantErr: true},
		{name: "surrounding spaces are refused", in: " shared-secret", wantErr: true},
		{name: "an abbreviation is refused", in: "hmac", wantErr: true},
		{name: "another algorithm is refused", in: "hmac-sha1", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := inbound.ParseScheme(tc.in)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("ParseScheme(%q) = %q, want an error", tc.in, got)
				}
				for _, allowed := range []string{"shared-secret", "hmac-sha256"} {
					if !strings.Contains(err.Error(), allowed) {
						t.Errorf("error %q does not name the allowed value %q", err, allowed)
					}
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseScheme(%q) = %q, %v; want %q, nil", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestDefaultHeaderDependsOnTheScheme(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scheme inbound.Scheme
		want   string
	}{
		{inbound.SharedSecret, "X-Service-Webhook-Secret"},
		{inbound.HMACSHA256, "X-Hub-Signature"},
		{inbound.Scheme("hmac-sha1"), ""},
		{inbound.Scheme(""), ""},
	}
	for _, tc := range tests {
		if got := tc.scheme.DefaultHeader(); got != tc.want {
			t.Errorf("Scheme(%q).DefaultHeader() = %q, want %q", tc.scheme, got, tc.want)
		}
	}
}

func TestValidateHeaderName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		header    string
		wantInErr string // "" means the name is valid
	}{
		{name: "a GitHub style name is valid", header: "X-Hub-Signature-256"},
		{name: "a lower-case name is valid", header: "x-my-webhook-secret"},
		{name: "a single character is valid", header: "s"},
		{name: "every tchar punctuation is valid", header: "X!#$%&'*+-.^_`|~9"},
		{name: "exactly 100 characters is valid", header: strings.Repeat("a", 100)},
		{name: "the scheme's default name is valid", header: "X-Service-Webhook-Secret"},
		{name: "an empty name is refused", header: "", wantInErr: "empty"},
		{name: "101 characters is refused", header: strings.Repeat("a", 101), wantInErr: "at most 100"},
		{name: "a space is refused", header: "X Signature", wantInErr: "invalid character"},
		{name: "a colon is refused", header: "X-Sig:", wantInErr: "invalid character"},
		{name: "a line break is refused", header: "X-Sig\r\nX-Other", wantInErr: "invalid character"},
		{name: "a non-ASCII letter is refused", header: "X-Sïgnature", wantInErr: "invalid character"},
		{name: "a separator such as slash is refused", header: "X/Sig", wantInErr: "invalid character"},
		{name: "Authorization is reserved", header: "Authorization", wantInErr: "reserved"},
		{name: "reserved names are matched case-insensitively", header: "aUtHoRiZaTiOn", wantInErr: "reserved"},
		{name: "Content-Type is reserved", header: "content-type", wantInErr: "reserved"},
		{name: "Content-Length is reserved", header: "CONTENT-LENGTH", wantInErr: "reserved"},
		{name: "Host is reserved", header: "Host", wantInErr: "reserved"},
		{name: "Cookie is reserved", header: "Cookie", wantInErr: "reserved"},
		{name: "Transfer-Encoding is reserved", header: "Transfer-Encoding", wantInErr: "reserved"},
		{name: "Connection is reserved", header: "connection", wantInErr: "reserved"},
		{name: "Proxy-Authorization is reserved", header: "Proxy-Authorization", wantInErr: "reserved"},
		{name: "a proxy-set forwarding header is reserved", header: "X-Forwarded-For", wantInErr: "reserved"},
		{name: "the service's API key header is a credential", header: "X-Service-Api-Key", wantInErr: "credential"},
		{name: "the service's client id header is a credential", header: "x-service-client-id", wantInErr: "credential"},
		{name: "other X-Service-* headers are kept for the service", header: "X-Service-Token", wantInErr: "credential"},
		{name: "Set-Cookie is reserved", header: "Set-Cookie", wantInErr: "reserved"},
		{name: "Cookie2 is a credential", header: "Cookie2", wantInErr: "credential"},
		{name: "X-Api-Key is a credential", header: "X-Api-Key", wantInErr: "credential"},
		{name: "Api-Key is a credential", header: "api-key", wantInErr: "credential"},
		{name: "an API key with underscores is a credential", header: "X_API_KEY", wantInErr: "credential"},
		{name: "an API key without separators is a credential", header: "x-apikey", wantInErr: "credential"},
		{name: "a vendor API key is a credential", header: "X-Goog-Api-Key", wantInErr: "credential"},
		{name: "an anti-forgery token is a credential", header: "X-CSRF-Token", wantInErr: "credential"},
		{name: "a token header senders use for webhook secrets is valid", header: "X-Gitlab-Token"},
		{name: "a name that merely contains api-key is valid", header: "X-Api-Key-Signature"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := inbound.ValidateHeaderName(tc.header)
			if tc.wantInErr == "" {
				if err != nil {
					t.Fatalf("ValidateHeaderName(%q) = %v, want nil", tc.header, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidateHeaderName(%q) = nil, want an error mentioning %q", tc.header, tc.wantInErr)
			}
			if !strings.Contains(err.Error(), tc.wantInErr) {
				t.Fatalf("ValidateHeaderName(%q) = %q, want it to mention %q", tc.header, err, tc.wantInErr)
			}
		})
	}
}

func TestTriggerHeaderIsTheCanonicalEffectiveHeader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		trigger inbound.Verifier
		want    string
	}{
		{name: "shared secret without a custom name uses its default", trigger: inbound.Verifier{Scheme: inbound.SharedSecret}, want: "X-Service-Webhook-Secret"},
		{name: "hmac without a custom name uses its default", trigger: inbound.Verifier{Scheme: inbound.HMACSHA256}, want: "X-Hub-Signature"},
		{name: "a custom name replaces the default in canonical form", trigger: inbound.Verifier{Scheme: inbound.HMACSHA256, HeaderName: "x-hub-signature-256"}, want: "X-Hub-Signature-256"},
		{name: "an unknown scheme has no header", trigger: inbound.Verifier{Scheme: "nope"}, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.trigger.Header(); got != tc.want {
				t.Fatalf("Header() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCredentialHeaders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		trigger inbound.Verifier
		want    []string
	}{
		{
			name:    "the default shared-secret trigger strips its header and Authorization",
			trigger: inbound.Verifier{Scheme: inbound.SharedSecret, Secret: "s"},
			want:    []string{"X-Service-Webhook-Secret", "X-Hub-Signature", "Authorization"},
		},
		{
			name:    "a custom header is stripped in canonical form along with the defaults a stale sender may still use",
			trigger: inbound.Verifier{Scheme: inbound.SharedSecret, HeaderName: "x-my-secret", Secret: "s"},
			want:    []string{"X-My-Secret", "X-Service-Webhook-Secret", "X-Hub-Signature", "Authorization"},
		},
		{
			name:    "the default hmac trigger strips its header first and Authorization always",
			trigger: inbound.Verifier{Scheme: inbound.HMACSHA256, Secret: "s"},
			want:    []string{"X-Hub-Signature", "X-Service-Webhook-Secret", "Authorization"},
		},
		{
			name:    "a custom hmac header is listed first",
			trigger: inbound.Verifier{Scheme: inbound.HMACSHA256, HeaderName: "X-Hub-Signature-256", Secret: "s"},
			want:    []string{"X-Hub-Signature-256", "X-Service-Webhook-Secret", "X-Hub-Signature", "Authorization"},
		},
		{
			name: "the headers the trigger read before are listed last, in canonical form",
			trigger: inbound.Verifier{Scheme: inbound.SharedSecret, HeaderName: "X-New", Secret: "s",
				PastHeaders: []string{"x-old", "X-New", "X-Older"}},
			want: []string{"X-New", "X-Service-Webhook-Secret", "X-Hub-Signature", "Authorization", "X-Old", "X-Older"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.trigger.CredentialHeaders(); !slices.Equal(got, tc.want) {
				t.Fatalf("CredentialHeaders() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStrippingCredentialHeadersRemovesEverySecretCarrier(t *testing.T) {
	t.Parallel()
	const secret = "whsec_not-for-the-workflow"
	signature := inbound.Sign(secret, []byte("{}"))
	for _, trigger := range []inbound.Verifier{
		{Scheme: inbound.SharedSecret, Secret: secret},
		{Scheme: inbound.SharedSecret, HeaderName: "x-custom-secret", Secret: secret},
		{Scheme: inbound.HMACSHA256, Secret: secret},
		{Scheme: inbound.HMACSHA256, HeaderName: "X-Hub-Signature-256", Secret: secret},
	} {
		// A sender mid-migration may send the credential in every place it ever used.
		h := http.Header{}
		h.Set(trigger.Header(), secret)
		h.Set("X-Service-Webhook-Secret", secret)
		h.Set("X-Hub-Signature", signature)
		h.Set("Authorization", "Bearer "+secret)
		h.Set("X-Request-Id", "kept")
		for _, name := range trigger.CredentialHeaders() {
			h.Del(name)
		}
		for name, values := range h {
			for _, v := range values {
				if strings.Contains(v, secret) || v == signature {
					t.Errorf("trigger with header %s: %s still carries a credential after stripping", trigger.Header(), name)
				}
			}
		}
		if h.Get("X-Request-Id") != "kept" {
			t.Errorf("trigger with header %s: an unrelated header was stripped", trigger.Header())
		}
	}
}

func TestRunsNeverSeeCredentialHeaders(t *testing.T) {
	t.Parallel()
	trigger := inbound.Verifier{Scheme: inbound.HMACSHA256, HeaderName: "X-Hub-Signature-256", Secret: "s"}
	for _, name := range []string{"x-hub-signature-256", "X-Hub-Signature", "X-Service-Webhook-Secret", "Authorization",
		"Proxy-Authorization", "cookie", "X-Service-Api-Key", "X-Service-Client-Id", "X-Api-Key"} {
		if !trigger.HidesHeader(name) {
			t.Errorf("HidesHeader(%q) = false, want true", name)
		}
	}
	for _, name := range []string{"Content-Type", "X-GitHub-Event", "X-GitHub-Delivery", "User-Agent"} {
		if trigger.HidesHeader(name) {
			t.Errorf("HidesHeader(%q) = true, want false", name)
		}
	}
}

func TestRunsNeverSeeAHeaderThatCarriesOrOnceCarriedASecret(t *testing.T) {
	t.Parallel()
	const secret = "whsec_current-secret-of-this-trigger"
	trigger := inbound.Verifier{Scheme: inbound.SharedSecret, HeaderName: "X-New-Token", Secret: secret, PastHeaders: []string{"X-Old-Token"}}
	for _, tc := range []struct {
		name   string
		values []string
	}{
		{"x-old-token", []string{"anything"}},
		{"X-Echo", []string{"ok", "token=" + secret}},
		{"X-Legacy", []string{"whsec_rotated-away-long-ago"}},
		{"X-Shouting", []string{"WHSEC_ROTATED"}},
	} {
		if !trigger.Withholds(tc.name, tc.values) {
			t.Errorf("Withholds(%q, %q) = false, want true", tc.name, tc.values)
		}
	}
	for _, tc := range []struct {
		name   string
		values []string
	}{
		{"X-Event", []string{"deal.created"}},
		{"X-Note", []string{"whsec"}},
		{"X-Note", []string{"current-secret-of-this"}},
	} {
		if trigger.Withholds(tc.name, tc.values) {
			t.Errorf("Withholds(%q, %q) = true, want false", tc.name, tc.values)
		}
	}
}

func TestADeliveryToNoTriggerIsRefusedAsAWrongSecretIs(t *testing.T) {
	t.Parallel()
	for _, h := range []http.Header{{}, {"X-Service-Webhook-Secret": {"whsec_guess"}}, {"Authorization": {"Bearer whsec_guess"}},
		{"X-Hub-Signature": {inbound.Sign("whsec_guess", []byte("{}"))}}} {
		if err := inbound.RefuseUnknown(h, []byte("{}")); !errors.Is(err, inbound.ErrInvalidSignature) {
			t.Errorf("RefuseUnknown(%v) = %v, want an error matching ErrInvalidSignature", h, err)
		}
	}
}
