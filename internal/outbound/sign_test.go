package outbound_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/outbound"
)

// The Standard Webhooks specification's published test vector.
const (
	specSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	specMsgID     = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	specTimestamp = 1614265330
	specBody      = `{"test": 2432232314}`
	specSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignMatchesTheSpecificationTestVector(t *testing.T) {
	t.Parallel()
	got, err := outbound.Sign(specSecret, specMsgID, time.Unix(specTimestamp, 0), []byte(specBody))
	if err != nil {
		t.Fatalf("Sign() error: %v", err)
	}
	if got != specSignature {
		t.Errorf("Sign() = %s, the specification says %s", got, specSignature)
	}
}

func TestNewSecretIsAPrefixed32ByteKey(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		secret := outbound.NewSecret()
		encoded, ok := strings.CutPrefix(secret, outbound.SecretPrefix)
		if !ok {
			t.Fatalf("NewSecret() = %q, want the prefix %q", secret, outbound.SecretPrefix)
		}
		key, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil || len(key) != 32 {
			t.Fatalf("NewSecret() = %q: want standard base64 of 32 bytes, got %d bytes (err %v)", secret, len(key), err)
		}
		if seen[secret] {
			t.Fatalf("NewSecret() repeated %q", secret)
		}
		seen[secret] = true
		if _, err := outbound.Sign(secret, "msg_1", time.Now(), nil); err != nil {
			t.Fatalf("Sign() refused a NewSecret() secret: %v", err)
		}
	}
}

func TestSignRefusesMalformedInput(t *testing.T) {
	t.Parallel()
	key := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	tests := []struct {
		name, secret, msgID, wantErr string
	}{
		{"no prefix", strings.TrimPrefix(specSecret, "whsec_"), specMsgID, `must start with "whsec_"`},
		{"empty secret", "", specMsgID, `must start with "whsec_"`},
		{"not base64", "whsec_not base64!", specMsgID, "not standard base64"},
		{"URL-safe base64", "whsec_" + strings.Repeat("-_", 16), specMsgID, "not standard base64"},
		{"key too short", "whsec_" + key(16), specMsgID, "key is 16 bytes; Standard Webhooks requires 24 to 64"},
		{"key too long", "whsec_" + key(65), specMsgID, "key is 65 bytes"},
		{"empty id", specSecret, "", "webhook-id must not be empty"},
		{"id with a space", specSecret, "msg 1", "printable ASCII without spaces"},
		{"id with a newline", specSecret, "msg_1\r\nX-Evil: 1", "printable ASCII without spaces"},
		{"id with non-ASCII", specSecret, "msg_é", "printable ASCII without spaces"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := outbound.Sign(tc.secret, tc.msgID, time.Unix(specTimestamp, 0), []byte(specBody))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Sign() error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	for _, size := range []int{24, 64} {
		if _, err := outbound.Sign("whsec_"+key(size), "msg_1", time.Now(), nil); err != nil {
			t.Errorf("Sign() with a %d-byte key: %v", size, err)
		}
	}
}

func TestHeadersCarryOneSignaturePerSecret(t *testing.T) {
	t.Parallel()
	oldSecret, newSecret := specSecret, outbound.NewSecret()
	ts := time.Unix(specTimestamp, 0)
	body := []byte(specBody)

	h, err := outbound.Headers([]string{oldSecret, newSecret}, specMsgID, ts, body)
	if err != nil {
		t.Fatalf("Headers() error: %v", err)
	}
	newSig, _ := outbound.Sign(newSecret, specMsgID, ts, body)
	want := http.Header{
		"Webhook-Id":        {specMsgID},
		"Webhook-Timestamp": {"1614265330"},
		"Webhook-Signature": {specSignature + " " + newSig},
		"Content-Type":      {"application/json"},
	}
	if len(h) != len(want) {
		t.Errorf("Headers() = %v, want %v", h, want)
	}
	for name, values := range want {
		if got := h.Values(name); len(got) != 1 || got[0] != values[0] {
			t.Errorf("Headers()[%s] = %q, want %q", name, got, values)
		}
	}

	if _, err := outbound.Headers(nil, specMsgID, ts, body); err == nil || !strings.Contains(err.Error(), "at least one secret") {
		t.Errorf("Headers() with no secrets: error = %v, want one asking for a secret", err)
	}
	if _, err := outbound.Headers([]string{specSecret, "whsec_short"}, specMsgID, ts, body); err == nil || !strings.Contains(err.Error(), "secret 2 of 2") {
		t.Errorf("Headers() with a bad second secret: error = %v, want one naming secret 2 of 2", err)
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	secret, other := outbound.NewSecret(), outbound.NewSecret()
	sent := time.Unix(1_700_000_000, 0)
	body := []byte(`{"type":"run.completed","data":{"id":"run_1"}}`)
	headers := func(t *testing.T, secrets ...string) http.Header {
		t.Helper()
		h, err := outbound.Headers(secrets, "msg_2Lq", sent, body)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	with := func(h http.Header, name, value string) http.Header {
		h = h.Clone()
		if value == "" {
			h.Del(name)
		} else {
			h.Set(name, value)
		}
		return h
	}

	accepted := []struct {
		name string
		h    http.Header
		now  time.Time
		tol  time.Duration
	}{
		{"on time", headers(t, secret), sent, 0},
		{"within the default tolerance, late", headers(t, secret), sent.Add(5 * time.Minute), 0},
		{"within the default tolerance, early", headers(t, secret), sent.Add(-5 * time.Minute), 0},
		{"within a custom tolerance", headers(t, secret), sent.Add(time.Hour), 2 * time.Hour},
		{"the first of two signatures", headers(t, secret, other), sent, 0},
		{"the second of two signatures", headers(t, other, secret), sent, 0},
		{"among unknown versions", with(headers(t, secret), "webhook-signature",
			"v1a,c2lnbmF0dXJl v2,abc "+headers(t, secret).Get("webhook-signature")), sent, 0},
		{"with a doubled space", with(headers(t, secret), "webhook-signature",
			headers(t, other).Get("webhook-signature")+"  "+headers(t, secret).Get("webhook-signature")), sent, 0},
	}
	for _, tc := range accepted {
		if err := outbound.Verify(secret, tc.h, body, tc.now, tc.tol); err != nil {
			t.Errorf("%s: Verify() = %v, want nil", tc.name, err)
		}
	}

	refused := []struct {
		name    string
		secret  string
		h       http.Header
		body    string
		now     time.Time
		wantErr string
	}{
		{"another secret", other, headers(t, secret), string(body), sent, "no v1 signature"},
		{"a changed body", secret, headers(t, secret), string(body) + " ", sent, "no v1 signature"},
		{"a changed id", secret, with(headers(t, secret), "webhook-id", "msg_other"), string(body), sent, "no v1 signature"},
		{"a changed timestamp", secret, with(headers(t, secret), "webhook-timestamp", "1700000001"), string(body), sent, "no v1 signature"},
		{"a malformed signature", secret, with(headers(t, secret), "webhook-signature", "v1,***"), string(body), sent, "no v1 signature"},
		{"the right MAC under another version", secret, with(headers(t, secret), "webhook-signature",
			strings.Replace(headers(t, secret).Get("webhook-signature"), "v1,", "v2,", 1)), string(body), sent, "no v1 signature"},
		{"too old", secret, headers(t, secret), string(body), sent.Add(5*time.Minute + time.Second), "5m1s old, more than the 5m0s tolerance"},
		{"too new", secret, headers(t, secret), string(body), sent.Add(-6 * time.Minute), "6m0s in the future"},
		{"no id", secret, with(headers(t, secret), "webhook-id", ""), string(body), sent, "the webhook-id header is missing"},
		{"no timestamp", secret, with(headers(t, secret), "webhook-timestamp", ""), string(body), sent, "the webhook-timestamp header is missing"},
		{"no signature", secret, with(headers(t, secret), "webhook-signature", ""), string(body), sent, "the webhook-signature header is missing"},
		{"a non-numeric timestamp", secret, with(headers(t, secret), "webhook-timestamp", "2023-11-14T22:13:20Z"), string(body), sent, "not a whole number"},
		{"a malformed secret", "secret", headers(t, secret), string(body), sent, `must start with "whsec_"`},
	}
	for _, tc := range refused {
		err := outbound.Verify(tc.secret, tc.h, []byte(tc.body), tc.now, 0)
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: Verify() = %v, want an error containing %q", tc.name, err, tc.wantErr)
		}
	}
}
