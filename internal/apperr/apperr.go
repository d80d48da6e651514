// Package apperr holds the error kinds every layer shares, and the closed
// set of their codes (Codes), so the HTTP layer can map them to status
// codes and X-Error-Code in one place.
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
	In      string // InBody (default), InQuery, InPath or InHeader
}

// Where an invalid value was sent.
const (
	InBody   = ""
	InQuery  = "query"
	InPath   = "path"
	InHeader = "header"
)

func (e *InvalidError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + " " + e.Message
}

// ErrorCode is the code of where the value was sent: invalid_body,
// invalid_query, invalid_path or invalid_header.
func (e *InvalidError) ErrorCode() Code {
	switch e.In {
	case InQuery:
		return CodeInvalidQuery
	case InPath:
		return CodeInvalidPath
	case InHeader:
		return CodeInvalidHeader
	}
	return CodeInvalidBody
}

// ErrorParam is the field at fault ("" when the whole input is).
func (e *InvalidError) ErrorParam() string { return e.Field }

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

// InvalidHeader returns an *InvalidError for a request header.
func InvalidHeader(name, format string, args ...any) error {
	return &InvalidError{Field: name, Message: fmt.Sprintf(format, args...), In: InHeader}
}

// Conflict returns an error wrapping ErrConflict with a message for the caller.
func Conflict(format string, args ...any) error {
	return &kindError{kind: ErrConflict, code: CodeConflict, msg: fmt.Sprintf(format, args...)}
}

// ConcurrentWrite returns a conflict (ErrConflict) of a write that raced
// another request: reading again and retrying is safe.
func ConcurrentWrite(format string, args ...any) error {
	return &kindError{kind: ErrConflict, code: CodeConcurrentWrite, msg: fmt.Sprintf(format, args...)}
}

// Referenced returns a conflict (ErrConflict) of a delete of a record that
// another record still references.
func Referenced(format string, args ...any) error {
	return &kindError{kind: ErrConflict, code: CodeReferenced, msg: fmt.Sprintf(format, args...)}
}

// Forbidden returns an error wrapping ErrForbidden with a message for the caller.
func Forbidden(format string, args ...any) error {
	return &kindError{kind: ErrForbidden, code: CodeForbidden, msg: fmt.Sprintf(format, args...)}
}

// OrganizationSuspended returns an error wrapping ErrForbidden, of code
// CodeOrganizationSuspended: the caller's organization is suspended.
func OrganizationSuspended(format string, args ...any) error {
	return &kindError{kind: ErrForbidden, code: CodeOrganizationSuspended, msg: fmt.Sprintf(format, args...)}
}

// TooLarge returns an error wrapping ErrTooLarge with a message for the
// caller: a request (its body, or what it would start) over a limit.
func TooLarge(format string, args ...any) error {
	return &kindError{kind: ErrTooLarge, code: CodePayloadTooLarge, msg: fmt.Sprintf(format, args...)}
}

// RecordTooLarge returns an error wrapping ErrTooLarge: the record would
// exceed what the storage can hold.
func RecordTooLarge(format string, args ...any) error {
	return &kindError{kind: ErrTooLarge, code: CodeRecordTooLarge, msg: fmt.Sprintf(format, args...)}
}

// PreconditionFailed returns an error wrapping ErrPreconditionFailed with a message for the caller.
func PreconditionFailed(format string, args ...any) error {
	return &kindError{kind: ErrPreconditionFailed, code: CodePreconditionFailed, msg: fmt.Sprintf(format, args...)}
}

// Unavailable returns an error wrapping ErrUnavailable and cause (kept for
// errors.As and logs) with a message for the caller.
func Unavailable(cause error, format string, args ...any) error {
	return &kindError{kind: ErrUnavailable, code: CodeUnavailable, msg: fmt.Sprintf(format, args...), cause: cause}
}

// kindError carries a caller-facing message, a kind for errors.Is and
// the code of its answer.
type kindError struct {
	kind  error
	code  Code
	msg   string
	cause error // optional: the underlying failure
}

func (e *kindError) Error() string { return e.msg }

// ErrorCode is the code of the error's answer.
func (e *kindError) ErrorCode() Code { return e.code }

func (e *kindError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

// RateLimited returns an error answered 429 (rate_limited): a part of a
// request (an operation of a batch) the caller's rate limit refused.
func RateLimited(format string, args ...any) error {
	return &codedError{code: CodeRateLimited, msg: fmt.Sprintf(format, args...)}
}

// Coded returns an error answered with code, naming param as the field or
// parameter at fault: for an error described once (its code and message)
// and answered again in another form, such as the operation of an atomic
// batch that failed it.
func Coded(code Code, param, msg string) error {
	return &codedError{code: code, param: param, msg: msg}
}

// codedError is an error of a given code.
type codedError struct {
	code       Code
	param, msg string
}

func (e *codedError) Error() string      { return e.msg }
func (e *codedError) ErrorCode() Code    { return e.code }
func (e *codedError) ErrorParam() string { return e.param }
