// Package blob stores the files of bulk import and export jobs.
//
// A client uploads a CSV or NDJSON file to a URL the API hands it
// (UploadURL); the job reads it as a stream, from a byte offset when it
// resumes after a crash (Open); an export is written as a stream (Write) and
// downloaded from a URL (DownloadURL). Store is the interface; Dir keeps the
// files in a local directory and serves the URLs itself (local development
// and tests), package s3blob keeps them in an S3 bucket behind presigned URLs.
//
// Keys are paths such as "imports/<org>/<jobId>/upload" or
// "exports/<org>/<jobId>/data.csv"; ValidateKey states their rules.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"
)

// Store holds the files of bulk jobs. Implementations are safe for
// concurrent use.
type Store interface {
	// Write stores key from r, streamed (its size is not known in advance
	// and it is never held whole in memory), replacing any earlier object
	// at key; it returns the number of bytes written.
	Write(ctx context.Context, key string, r io.Reader) (int64, error)
	// Open reads key from byte offset (0: the whole object). The error
	// wraps ErrNotFound when key is absent.
	Open(ctx context.Context, key string, offset int64) (io.ReadCloser, error)
	// OpenVersion is Open of the object whose Info.Version is version: the
	// error wraps ErrReplaced when key now holds another one (a file
	// uploaded again while an import reads it).
	OpenVersion(ctx context.Context, key string, offset int64, version string) (io.ReadCloser, error)
	// Stat returns what is known of key; the error wraps ErrNotFound when
	// key is absent.
	Stat(ctx context.Context, key string) (Info, error)
	// Delete removes key; an absent key is not an error.
	Delete(ctx context.Context, key string) error
	// UploadURL is a URL a client PUTs the file to (the body is the
	// file), valid for ttl.
	UploadURL(ctx context.Context, key string, ttl time.Duration) (string, error)
	// DownloadURL is a URL a client GETs key from, valid for ttl; the
	// answer names filename (Content-Disposition: attachment) and has
	// Content-Type contentType ("" for application/octet-stream).
	DownloadURL(ctx context.Context, key string, ttl time.Duration, filename, contentType string) (string, error)
}

// Info describes a stored object.
type Info struct {
	// Size is the object's length in bytes.
	Size int64
	// Version names this object at key: another object written there
	// has another (S3: its ETag).
	Version string
}

// Lister is a Store that lists its objects (Dir and s3blob's both do):
// what the operator's commands, which export and delete an organization's
// files, need. It is not part of Store, so that a function that never
// lists (the data function) links no listing: a method an interface
// declares is linked into every binary that holds a value of it.
type Lister interface {
	Store
	// List is every object whose key starts with prefix (a key's first
	// segments ending in "/", such as "imports/<org>/"), in key order:
	// the files an operator exports or deletes with their organization.
	List(ctx context.Context, prefix string) ([]Object, error)
}

// Object is a stored object as List finds it.
type Object struct {
	Key  string `json:"key"`
	Size int64  `json:"size"`
}

// ValidatePrefix checks a List prefix: a valid key ending in "/" (the
// objects under a folder).
func ValidatePrefix(prefix string) error {
	key, ok := strings.CutSuffix(prefix, "/")
	if !ok {
		return fmt.Errorf("%w: list prefix %q does not end in /", ErrInvalidKey, prefix)
	}
	return ValidateKey(key)
}

// ErrNotFound is wrapped by the errors of Open and Stat when the key is
// absent.
var ErrNotFound = errors.New("blob: not found")

// ErrReplaced is wrapped by the error of OpenVersion when key holds
// another object than the version asked for.
var ErrReplaced = errors.New("blob: replaced by another object")

// ErrExists is wrapped by the error of an upload to a key that holds a
// file already: an upload URL takes one file.
var ErrExists = errors.New("blob: the key holds a file already")

// ErrInvalidKey is wrapped by the error of every method given a key that
// breaks ValidateKey's rules.
var ErrInvalidKey = errors.New("blob: invalid key")

// MaxKeyLen is the longest key, in bytes.
const MaxKeyLen = 512

// MaxURLTTL is the longest lifetime of an upload or download URL: 7 days,
// the limit of S3's presigned URLs.
const MaxURLTTL = 7 * 24 * time.Hour

// DefaultContentType is the Content-Type of a download when DownloadURL is
// given none.
const DefaultContentType = "application/octet-stream"

// ValidateKey reports whether key may name an object: 1 to MaxKeyLen bytes
// of A-Z, a-z, 0-9, '.', '_', '-' and '/'; segments separated by single
// slashes (no leading or trailing slash, no empty segment); no ".." anywhere
// and no segment starting with '.' (such names are the local store's
// temporary files). The error wraps ErrInvalidKey and says which rule key
// broke.
func ValidateKey(key string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, why)
	}
	switch {
	case key == "":
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: %d bytes long, longer than %d", ErrInvalidKey, len(key), MaxKeyLen)
	case strings.HasPrefix(key, "/"):
		return bad("starts with /")
	case strings.Contains(key, ".."):
		return bad(`contains ".."`)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/') {
			return fmt.Errorf("%w %q: character %q at byte %d is not one of A-Z a-z 0-9 . _ - /", ErrInvalidKey, key, c, i)
		}
	}
	for _, seg := range strings.Split(key, "/") {
		switch {
		case seg == "":
			return bad("has an empty segment")
		case seg[0] == '.':
			return bad(fmt.Sprintf("segment %q starts with '.'", seg))
		}
	}
	return nil
}

// DownloadHeaders checks a download's filename and contentType and returns
// the Content-Disposition and Content-Type headers that name them:
// "attachment" with filename (RFC 2231-encoded when it is not plain ASCII;
// no filename when it is ""), and contentType, DefaultContentType when "".
// Both implementations of Store answer downloads with these headers.
func DownloadHeaders(filename, contentType string) (disposition, ctype string, err error) {
	if strings.ContainsAny(filename, "/\\") || strings.ContainsFunc(filename, isControl) {
		return "", "", fmt.Errorf("blob: download filename %q: must not contain a slash, backslash or control character", filename)
	}
	if len(filename) > 255 {
		return "", "", fmt.Errorf("blob: download filename is %d bytes long, longer than 255", len(filename))
	}
	disposition = "attachment"
	if filename != "" {
		disposition = mime.FormatMediaType("attachment", map[string]string{"filename": filename})
		if disposition == "" {
			return "", "", fmt.Errorf("blob: download filename %q cannot be put in a Content-Disposition header", filename)
		}
	}
	ctype = contentType
	if ctype == "" {
		ctype = DefaultContentType
	} else if _, _, err := mime.ParseMediaType(ctype); err != nil || strings.ContainsFunc(ctype, isControl) {
		return "", "", fmt.Errorf("blob: download content type %q is not a media type", contentType)
	}
	return disposition, ctype, nil
}

// ValidateTTL checks the lifetime of an upload or download URL: more than
// zero and at most max.
func ValidateTTL(ttl, max time.Duration) error {
	if ttl <= 0 || ttl > max {
		return fmt.Errorf("blob: URL lifetime %v is not within (0, %v]", ttl, max)
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }
