// Package outbound sends outbound webhooks: HTTP POSTs to customer-supplied
// URLs, signed per the Standard Webhooks specification
// (https://www.standardwebhooks.com).
//
// The outbound webhook packages share one vocabulary, the API's (Svix's
// endpoint, message and attempt): an endpoint is a URL an organization
// subscribes to event types (package outbound/endpoints, the routes of
// /v1/webhook-endpoints); a delivery is one event sent to one endpoint —
// what Standard Webhooks and Svix call a message — whose id is its
// webhook-id; an attempt is one POST of a delivery. A queue's message
// (endpoints.Message, an SQS message in AWS: package outbound/sqsqueue)
// is the queue's note of which delivery to attempt. The functions: events
// (the stream into the change history, and a delivery per subscribed
// endpoint), deliver (the queue into attempts) and hooks (the routes of
// the history and the endpoints); webhook is the inbound triggers'
// (package inbound).
//
// The package has three parts:
//
//   - Signing (Sign, Headers, Verify): every delivery carries a webhook-id, a
//     webhook-timestamp and a webhook-signature header. The signature is
//     "v1," followed by the base64 HMAC-SHA256, keyed by the endpoint's
//     "whsec_" secret, of "<webhook-id>.<webhook-timestamp>.<body>". During
//     a secret rotation the header carries one signature per secret, separated
//     by spaces, so receivers holding either secret accept the delivery.
//   - Sending (Client): a sender that refuses URLs whose host resolves to a
//     private, loopback or link-local address (server-side request forgery),
//     re-checks every address at connection time (DNS rebinding), never
//     follows redirects and bounds time and response size.
//   - Retrying (Schedule, NextRetry): the fixed retry schedule.
//
// The package knows nothing about storage, events or endpoints; callers decide
// what to send, to whom, and what to record.
package outbound

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every signing secret, as Standard Webhooks recommends,
// so that secret scanners and humans recognise one in a log or a repository.
// The rest of the secret is the standard base64 encoding of the key.
const SecretPrefix = "whsec_"

// Header names defined by Standard Webhooks.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock before Verify refuses it; Standard Webhooks suggests five
// minutes, which is what its reference libraries use.
const DefaultTolerance = 5 * time.Minute

// signatureVersion prefixes every signature ("v1,<base64>"); v1 is
// HMAC-SHA256, the only symmetric scheme the specification defines.
const signatureVersion = "v1"

// secretKeyBytes is the size of the keys NewSecret makes. The specification
// asks for at least 24 bytes (192 bits) and at most 64; 32 bytes is SHA-256's
// output size, the shortest key RFC 2104 recommends for HMAC-SHA256.
const secretKeyBytes = 32

// Bounds on a secret's decoded key, from the specification.
const (
	minKeyBytes = 24
	maxKeyBytes = 64
)

// NewSecret returns a fresh signing secret: SecretPrefix followed by the
// standard base64 encoding of 32 random bytes from crypto/rand.
func NewSecret() string {
	key := make([]byte, secretKeyBytes)
	// crypto/rand.Read never returns an error: since Go 1.24 it aborts the
	// program instead, so there is nothing to handle.
	_, _ = rand.Read(key)
	return SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// Sign returns the Standard Webhooks signature of one delivery: "v1," followed
// by the standard base64 encoding of the HMAC-SHA256 of
// msgID + "." + ts in Unix seconds + "." + body, keyed by the bytes the secret
// encodes after its "whsec_" prefix.
//
// It fails if the secret is malformed (no prefix, not base64, or a key outside
// the specification's 24 to 64 bytes) or msgID is not a valid webhook-id.
func Sign(secret, msgID string, ts time.Time, body []byte) (string, error) {
	key, err := decodeSecret(secret)
	if err != nil {
		return "", err
	}
	if err := checkMsgID(msgID); err != nil {
		return "", err
	}
	return signatureVersion + "," + base64.StdEncoding.EncodeToString(mac(key, msgID, ts.Unix(), body)), nil
}

// Headers returns the headers of one signed delivery: webhook-id,
// webhook-timestamp (Unix seconds), webhook-signature and
// "Content-Type: application/json".
//
// The signature header holds one signature per secret, in the order given and
// separated by single spaces. Several secrets are passed while a secret is
// being rotated, so that receivers that know only the old or only the new one
// both accept the delivery. At least one secret is required.
func Headers(secrets []string, msgID string, ts time.Time, body []byte) (http.Header, error) {
	if len(secrets) == 0 {
		return nil, errors.New("signing a webhook needs at least one secret, got none")
	}
	sigs := make([]string, len(secrets))
	for i, secret := range secrets {
		sig, err := Sign(secret, msgID, ts, body)
		if err != nil {
			if len(secrets) > 1 {
				return nil, fmt.Errorf("secret %d of %d: %w", i+1, len(secrets), err)
			}
			return nil, err
		}
		sigs[i] = sig
	}
	h := make(http.Header, 4)
	h.Set(HeaderID, msgID)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, strings.Join(sigs, " "))
	h.Set("Content-Type", "application/json")
	return h, nil
}

// Verify checks a received message the way a Standard Webhooks receiver does,
// and exists for tests and documentation examples: the webhook-id,
// webhook-timestamp and webhook-signature headers must be present, the
// timestamp must be within tolerance of now (either side; tolerance <= 0 means
// DefaultTolerance), and at least one of the space-separated v1 signatures
// must equal the one secret makes, compared in constant time. Signatures of
// other versions are ignored.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := decodeSecret(secret)
	if err != nil {
		return err
	}
	msgID, tsHeader, sigHeader := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	for _, hv := range []struct{ name, value string }{
		{HeaderID, msgID}, {HeaderTimestamp, tsHeader}, {HeaderSignature, sigHeader},
	} {
		if hv.value == "" {
			return fmt.Errorf("the %s header is missing", hv.name)
		}
	}
	ts, err := strconv.ParseInt(tsHeader, 10, 64)
	if err != nil {
		return fmt.Errorf("the %s header %q is not a whole number of Unix seconds", HeaderTimestamp, tsHeader)
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	sent := time.Unix(ts, 0)
	if age := now.Sub(sent); age > tolerance {
		return fmt.Errorf("the message timestamp %d is %v old, more than the %v tolerance (a replay, or a clock that is off)", ts, age.Truncate(time.Second), tolerance)
	} else if -age > tolerance {
		return fmt.Errorf("the message timestamp %d is %v in the future, more than the %v tolerance (a clock that is off)", ts, (-age).Truncate(time.Second), tolerance)
	}

	want := mac(key, msgID, ts, body)
	for sig := range strings.SplitSeq(sigHeader, " ") {
		version, encoded, ok := strings.Cut(sig, ",")
		if !ok || version != signatureVersion {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("no v1 signature in the %s header matches the secret", HeaderSignature)
}

// mac is the HMAC-SHA256 of the Standard Webhooks signed content.
func mac(key []byte, msgID string, unix int64, body []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msgID))
	m.Write([]byte{'.'})
	m.Write(strconv.AppendInt(nil, unix, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// decodeSecret returns the key a "whsec_<base64>" secret encodes.
func decodeSecret(secret string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, fmt.Errorf("the signing secret must start with %q", SecretPrefix)
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, fmt.Errorf("the signing secret after %q is not standard base64: %w", SecretPrefix, err)
	}
	if len(key) < minKeyBytes || len(key) > maxKeyBytes {
		return nil, fmt.Errorf("the signing secret's key is %d bytes; Standard Webhooks requires %d to %d", len(key), minKeyBytes, maxKeyBytes)
	}
	return key, nil
}

// checkMsgID refuses webhook-ids that might not reach the receiver byte for
// byte: an id must be non-empty printable ASCII without spaces (HTTP trims
// spaces around header values, and control bytes are not allowed at all).
func checkMsgID(msgID string) error {
	if msgID == "" {
		return errors.New("the webhook-id must not be empty")
	}
	for i := 0; i < len(msgID); i++ {
		if c := msgID[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("the webhook-id %q must be printable ASCII without spaces (byte %d is %#x)", msgID, i, c)
		}
	}
	return nil
}
