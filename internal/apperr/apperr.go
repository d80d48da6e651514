// Package apperr holds the error kinds every layer shares, so the HTTP layer
// can map them to status codes in one place.
package apperr

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound: the record does not exist in the caller's organization.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request conflicts with the record's state.
	ErrConflict = errors.New("conflict")
	// ErrForbidden: the caller's role may not do this.
	ErrForbidden = errors.New("forbidden")
	// ErrTooLarge: the record would exceed what can be stored.
	ErrTooLarge = errors.New("too large")
	// ErrPreconditionFailed: the record's version is not the one the
	// client's If-Match names.
	ErrPreconditionFailed = errors.New("precondition failed")
	// ErrUnavailable: a dependency (the table) did not answer in time or
	// refused the request for now; the caller may try again later.
	ErrUnavailable = errors.New("unavailable")
)

// InvalidError is a bad input: Field names the offending field (a JSON path
// such as "location.city" or a query parameter), Message what rule it broke.
// The message continues the field name: "website" + "must be a string".
type InvalidError struct {
	Field   string
	Message string
	In      string // InBody (default) or InQuery
}

// Where an invalid value was sent.
const (
	InBody  = ""
	InQuery = "query"
	InPath  = "path"
)

func (e *InvalidError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + " " + e.Message
}

// Invalid returns an *InvalidError for a body field.
func Invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// InvalidQuery returns an *InvalidError for a query parameter.
func InvalidQuery(param, format string, args ...any) error {
	return &InvalidError{Field: param, Message: fmt.Sprintf(format, args...), In: InQuery}
}

// InvalidPath returns an *InvalidError for a part of the request path.
func InvalidPath(part, format string, args ...any) error {
	return &InvalidError{Field: part, Message: fmt.Sprintf(format, args...), In: InPath}
}

// Conflict returns an error wrapping ErrConflict with a message for the caller.
func Conflict(format string, args ...any) error {
	return &kindError{kind: ErrConflict, msg: fmt.Sprintf(format, args...)}
}

// Forbidden returns an error wrapping ErrForbidden with a message for the caller.
func Forbidden(format string, args ...any) error {
	return &kindError{kind: ErrForbidden, msg: fmt.Sprintf(format, args...)}
}

// TooLarge returns an error wrapping ErrTooLarge with a message for the caller.
func TooLarge(format string, args ...any) error {
	return &kindError{kind: ErrTooLarge, msg: fmt.Sprintf(format, args...)}
}

// PreconditionFailed returns an error wrapping ErrPreconditionFailed with a message for the caller.
func PreconditionFailed(format string, args ...any) error {
	return &kindError{kind: ErrPreconditionFailed, msg: fmt.Sprintf(format, args...)}
}

// Unavailable returns an error wrapping ErrUnavailable and cause (kept for
// errors.As and logs) with a message for the caller.
func Unavailable(cause error, format string, args ...any) error {
	return &kindError{kind: ErrUnavailable, msg: fmt.Sprintf(format, args...), cause: cause}
}

// kindError carries a caller-facing message and a kind for errors.Is.
type kindError struct {
	kind  error
	msg   string
	cause error // optional: the underlying failure
}

func (e *kindError) Error() string { return e.msg }

func (e *kindError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}
