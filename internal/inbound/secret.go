package inbound

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"strings"
)

// secretPrefix marks webhook secrets so that secret scanners and humans can
// recognise one in a log or a repository.
const secretPrefix = "whsec_"

// slugPrefix marks trigger slugs so they are not mistaken for other ids.
const slugPrefix = "wh_"

// slugEncoding is lower-case base32 without padding: URL-safe, case-stable in
// logs and valid in Step Functions execution names.
var slugEncoding = base32.NewEncoding(strings.ToLower("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")).WithPadding(base32.NoPadding)

// NewSecret returns a fresh 256-bit secret, "whsec_" followed by 43 base64url
// characters, long enough that guessing it is not an attack.
func NewSecret() string {
	return secretPrefix + base64.RawURLEncoding.EncodeToString(randomBytes(32))
}

// NewSlug returns a fresh 160-bit slug, "wh_" followed by 32 lower-case base32
// characters; the slug is part of the public URL, so it must not be guessable
// even though it is not the credential.
func NewSlug() string {
	return slugPrefix + slugEncoding.EncodeToString(randomBytes(20))
}

// randomBytes reads from crypto/rand, which never returns an error (since Go
// 1.24 it aborts the program instead), so there is nothing to handle here.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
