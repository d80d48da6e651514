// Package httpapi is the HTTP edge shared by every resource group: the
// {data: ...} envelope, the {error: ...} body and the one place where error
// kinds become status codes, query parameters, body reading, middleware and
// the router built from the route table.
package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/auth"
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
// json.Marshal, then a newline).
func JSON(w http.ResponseWriter, status int, v any) {
	buf := pooledBuffer()
	defer release(buf)
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		slog.Error("encode response", "err", err)
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":"internal error"}` + "\n")
	}
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

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

// ErrorBody writes {"error": msg}.
func ErrorBody(w http.ResponseWriter, status int, msg string) {
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

// Error writes the response for err: the one mapping of error kinds to
// status codes. Unknown errors are logged and answered 500 without detail.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	var inv *apperr.InvalidError
	switch {
	case errors.As(err, &inv):
		ErrorBody(w, http.StatusBadRequest, invalidMessage(inv))
	case errors.Is(err, auth.ErrUnauthenticated):
		ErrorBody(w, http.StatusUnauthorized, auth.ErrUnauthenticated.Error())
	case errors.Is(err, apperr.ErrNotFound):
		ErrorBody(w, http.StatusNotFound, "not found")
	case errors.Is(err, apperr.ErrForbidden):
		ErrorBody(w, http.StatusForbidden, err.Error())
	case errors.Is(err, apperr.ErrConflict):
		ErrorBody(w, http.StatusConflict, err.Error())
	case errors.Is(err, apperr.ErrTooLarge):
		ErrorBody(w, http.StatusRequestEntityTooLarge, err.Error())
	case errors.Is(err, apperr.ErrPreconditionFailed):
		ErrorBody(w, http.StatusPreconditionFailed, err.Error())
	case errors.Is(err, apperr.ErrUnavailable):
		slog.WarnContext(r.Context(), "storage unavailable", "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(int(RetryAfter/time.Second)))
		ErrorBody(w, http.StatusServiceUnavailable, unavailableMessage)
	default:
		slog.ErrorContext(r.Context(), "request failed", "err", err)
		ErrorBody(w, http.StatusInternalServerError, "internal error")
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
	}
	return prefix + ": " + e.Error()
}
