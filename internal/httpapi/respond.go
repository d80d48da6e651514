// Package httpapi is the HTTP edge shared by every resource group: the
// {data: ...} envelope, the {error: ...} body and the one place where error
// kinds become status codes and X-Error-Code, query parameters, body
// reading, middleware and the router built from the route table.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/jsonbody"
)

// MaxBodyBytes is the largest request body accepted.
const MaxBodyBytes = 1 << 20

// encodeBuffers are reused between responses: encoding into a pooled
// buffer saves the allocation and growth of a fresh one per response.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer bounds what goes back to the pool, so that one large
// response does not keep its memory alive.
const maxPooledBuffer = 64 << 10

// pooledBuffer is an empty buffer from the pool; release returns it.
func pooledBuffer() *bytes.Buffer {
	buf := encodeBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	return buf
}

// release returns buf to the pool unless it grew too large to keep.
func release(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBuffer {
		encodeBuffers.Put(buf)
	}
}

// JSON writes v as the response body with status (the bytes of
// json.Marshal without its HTML escaping, see Marshal, then a newline).
func JSON(w http.ResponseWriter, status int, v any) {
	buf := pooledBuffer()
	defer release(buf)
	if err := encoder(buf).Encode(v); err != nil {
		slog.Error("encode response", "err", err)
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":"internal error"}` + "\n")
		SetErrorCode(w.Header(), apperr.CodeInternal, "")
	}
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// encoder is a JSON encoder to w that writes <, > and & as they are, as
// input.Marshal does.
func encoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// Marshal is v's JSON as an answer writes it (input.Marshal).
func Marshal(v any) ([]byte, error) { return jsonbody.Marshal(v) }

// envelope is the {"data": ...} body: a struct encodes without the map
// a map[string]any literal would allocate and sort.
type envelope struct {
	Data any `json:"data"`
}

// errorEnvelope is the {"error": "..."} body.
type errorEnvelope struct {
	Error string `json:"error"`
}

// Encoded is a value that is already JSON, as json.Marshal would encode
// it (a record read as stored, store.JSON): it is written as it is.
type Encoded interface{ EncodedJSON() string }

// jsonContentType is the Content-Type of every body, shared by all
// responses (never modified), which saves an allocation per response.
var jsonContentType = []string{"application/json"}

// Data writes {"data": v}, with v's entity tag as ETag when it has one.
func Data(w http.ResponseWriter, status int, v any) {
	if t, ok := v.(interface{ ETag() string }); ok {
		if tag := t.ETag(); tag != "" {
			w.Header().Set("ETag", tag)
		}
	}
	if e, ok := v.(Encoded); ok {
		writeData(w, status, e.EncodedJSON())
		return
	}
	JSON(w, status, envelope{Data: v})
}

// writeData writes {"data": b} and a newline, as JSON encodes an
// envelope holding b.
func writeData(w http.ResponseWriter, status int, b string) {
	buf := pooledBuffer()
	defer release(buf)
	buf.WriteString(`{"data":`)
	buf.WriteString(b)
	buf.WriteString("}\n")
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// Error code headers, on every error answer: the code (one of
// apperr.Codes) and, when one field or parameter is at fault, its name.
const (
	HeaderErrorCode  = "X-Error-Code"
	HeaderErrorParam = "X-Error-Param"
)

// The error headers' canonical keys, as net/http writes them.
var (
	errorCodeKey  = http.CanonicalHeaderKey(HeaderErrorCode)
	errorParamKey = http.CanonicalHeaderKey(HeaderErrorParam)
)

// codeValues are the X-Error-Code values, shared by all answers (never
// modified), which saves an allocation per error answer.
var codeValues = func() map[apperr.Code][]string {
	m := make(map[apperr.Code][]string, len(apperr.Codes))
	for _, c := range apperr.Codes {
		m[c.Code] = []string{string(c.Code)}
	}
	return m
}()

// MaxErrorParam is the longest X-Error-Param: a longer name (a path deep
// into a client's own JSON) is not sent; the message still names it.
const MaxErrorParam = 256

// SetErrorCode sets the error headers of an answer: X-Error-Code, and
// X-Error-Param when param is not "" (else it is removed). param is sent
// with '%', control and non-ASCII bytes percent-encoded (it may hold a
// client's own keys), and not at all beyond MaxErrorParam bytes. For an
// error answer written otherwise than by Refuse (a JSON-RPC error).
func SetErrorCode(h http.Header, code apperr.Code, param string) {
	v, ok := codeValues[code]
	if !ok {
		v = []string{string(code)}
	}
	h[errorCodeKey] = v
	delete(h, errorParamKey)
	if param = encodeParam(param); param != "" && len(param) <= MaxErrorParam {
		h[errorParamKey] = []string{param}
	}
}

// encodeParam percent-encodes the bytes of p that are '%', a control
// character or not ASCII, so that any name is a valid header value.
func encodeParam(p string) string {
	const hex = "0123456789ABCDEF"
	clean := true
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '%' || c < 0x20 || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return p
	}
	b := make([]byte, 0, len(p)+8)
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '%' || c < 0x20 || c >= 0x7f {
			b = append(b, '%', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, p[i])
	}
	return string(b)
}

// Refuse writes the error answer of code: its status (code.Status()),
// X-Error-Code, X-Error-Param when param names the field or parameter at
// fault, and {"error": msg}.
func Refuse(w http.ResponseWriter, code apperr.Code, param, msg string) {
	SetErrorCode(w.Header(), code, param)
	JSON(w, code.Status(), errorEnvelope{Error: msg})
}

// ErrorBody writes {"error": msg} with status and the status's generic
// code (apperr.StatusCode); Refuse answers a more specific one.
func ErrorBody(w http.ResponseWriter, status int, msg string) {
	SetErrorCode(w.Header(), apperr.StatusCode(status), "")
	JSON(w, status, errorEnvelope{Error: msg})
}

// errBodyTooLarge answers a body over MaxBodyBytes.
var errBodyTooLarge = apperr.TooLarge("request body exceeds the 1 MiB limit")

// RetryAfter is what a 503 tells the caller to wait before trying again
// (the Retry-After header, in seconds): long enough for throttling to
// ease or a stalled table to come back, short enough for an interactive
// client.
const RetryAfter = 5 * time.Second

// unavailableMessage is the 503 body: the store's own message names
// internals (timeouts, throttling) that are logged instead.
var unavailableMessage = "The service's storage is temporarily unavailable; try again in " +
	strconv.Itoa(int(RetryAfter/time.Second)) + " seconds."

// Error writes the response for err: the one mapping of errors to codes
// (apperr.CodeOf), and through them to status codes (Describe). Unknown
// errors are logged and answered 500 (internal) without detail.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	f := Describe(r.Context(), err)
	if f.Code.Status() == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(int(RetryAfter/time.Second)))
	}
	Refuse(w, f.Code, f.Param, f.Message)
}

// Failure is an error as the API answers it: its code (and through it
// the status), the field or parameter at fault, the message.
type Failure struct {
	Code    apperr.Code
	Param   string
	Message string
}

// Status is the failure's HTTP status.
func (f Failure) Status() int { return f.Code.Status() }

// Describe is err as the API answers it (Error writes it): for an answer
// that holds several, such as a batch's, one per operation. Unknown errors
// are logged and described as internal, without detail.
func Describe(ctx context.Context, err error) Failure {
	var inv *apperr.InvalidError
	if errors.As(err, &inv) {
		return Failure{inv.ErrorCode(), inv.Field, invalidMessage(inv)}
	}
	if errors.Is(err, auth.ErrUnauthenticated) {
		return Failure{apperr.CodeUnauthenticated, "", auth.ErrUnauthenticated.Error()}
	}
	code, param := apperr.CodeOf(err)
	switch {
	case code == "" || code.Status() == http.StatusInternalServerError:
		slog.ErrorContext(ctx, "request failed", "err", err)
		return Failure{apperr.CodeInternal, "", "internal error"}
	case code.Status() == http.StatusServiceUnavailable:
		slog.WarnContext(ctx, "storage unavailable", "err", err)
		return Failure{code, "", unavailableMessage}
	case code == apperr.CodeNotFound:
		return Failure{code, param, "not found"}
	default:
		return Failure{code, param, err.Error()}
	}
}

// invalidMessage says what was wrong and where: "Invalid request body:
// website must be a string", "Invalid query parameter: page must be ...".
func invalidMessage(e *apperr.InvalidError) string {
	prefix := "Invalid request body"
	switch e.In {
	case apperr.InQuery:
		prefix = "Invalid query parameter"
	case apperr.InPath:
		prefix = "Invalid path"
	case apperr.InHeader:
		prefix = "Invalid header"
	}
	return prefix + ": " + e.Error()
}
