// Package serviceapi serves the service's own routes: the health check
// and the OpenAPI document (which package api assembles from every
// feature's operations, and gives it).
package serviceapi

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/httpapi"
	"github.com/sourcebase/sourcebase/internal/lambdas"
	"github.com/sourcebase/sourcebase/internal/openapi"
	"github.com/sourcebase/sourcebase/internal/operation"
	"github.com/sourcebase/sourcebase/internal/routes"
	"github.com/sourcebase/sourcebase/internal/store"
)

// API serves the health check, over the table it pings, and the
// document.
type API struct {
	store *store.Store
	// served is the published document as served, made at the first
	// request from document.
	served func() (servedDoc, error)
}

// New returns the service's own routes over the table the health check
// pings and the published OpenAPI document.
func New(st *store.Store, document func() ([]byte, error)) *API {
	return &API{store: st, served: sync.OnceValues(func() (servedDoc, error) { return makeServed(document) })}
}

// Operations are the service's own: the health check and the OpenAPI
// document, public and fixed.
func Operations() []operation.Operation {
	return []operation.Operation{
		operation.Declare(lambdas.Keys, http.MethodGet, routes.HealthPath, (*API).health).InTopic("service").Answers(routes.AnswerFixed).Doc(func(op *openapi.Operation) {
			op.Summary, op.Raw = "Check the service's health", true
			op.Description = "200 when the table answers within 2 seconds, else 503."
			op.Data = openapi.Schema{"type": "object", "additionalProperties": false, "required": []any{"status"},
				"properties": openapi.Schema{"status": openapi.Schema{"type": "string", "enum": []any{"ok"}}}}
			op.Errors = []int{503}
		}),
		operation.Declare(lambdas.Keys, http.MethodGet, routes.OpenAPIPath, (*API).serveOpenAPI).InTopic("service").Answers(routes.AnswerFixed).Doc(func(op *openapi.Operation) {
			op.Summary, op.Raw = "Get this OpenAPI document", true
			op.Description = "The one `/v1` route without credentials. Compressed with gzip when `Accept-Encoding` allows it " +
				"(`Content-Encoding: gzip`); its `ETag` is the document's digest: with `If-None-Match` naming it, the answer is 304 without a body."
			op.Data = openapi.Schema{"type": "object", "additionalProperties": true}
			op.ETag, op.NotModified = true, true
			op.Headers = []openapi.Param{{Name: "If-None-Match", Schema: openapi.Schema{"type": "string"},
				Description: "the `ETag` of a copy the client holds: 304 when it is still the current document"}}
			op.ResponseHeaders = map[string]openapi.Param{"Content-Encoding": {Schema: openapi.Schema{"type": "string", "enum": []any{"gzip"}},
				Description: "`gzip` when the request's `Accept-Encoding` allows it; absent otherwise"}}
		}),
	}
}

// HealthTimeout bounds the health check's table call, shorter than a
// storage call's deadline: a load balancer or operator learns quickly
// that the table does not answer.
const HealthTimeout = 2 * time.Second

// health answers 200 when the table answers, else 503 with Retry-After.
func (a *API) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), HealthTimeout)
	defer cancel()
	if err := a.store.Ping(ctx); err != nil {
		if !errors.Is(err, apperr.ErrUnavailable) {
			err = apperr.Unavailable(err, "health check: %v", err)
		}
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// serveOpenAPI answers the document: gzip-compressed when the request
// accepts it, with its digest as ETag, and 304 to an If-None-Match that
// names it (the document is ~1 MB: a client that polls it, or a slow link,
// need not take it whole each time).
func (a *API) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	served, err := a.served()
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("ETag", served.etag)
	h.Set("Vary", "Accept-Encoding")
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagListed(inm, served.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	if acceptsGzip(r.Header.Values("Accept-Encoding")) {
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(served.gzipped)))
		w.Write(served.gzipped)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(served.plain)))
	w.Write(served.plain)
}

// servedDoc is the published document as served: plain, gzip-compressed
// and its ETag, made once per process.
type servedDoc struct {
	plain, gzipped []byte
	etag           string
}

// makeServed compresses and digests the document.
func makeServed(document func() ([]byte, error)) (servedDoc, error) {
	b, err := document()
	if err != nil {
		return servedDoc{}, err
	}
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		return servedDoc{}, err
	}
	sum := sha256.Sum256(b)
	return servedDoc{plain: b, gzipped: z.Bytes(), etag: `"` + hex.EncodeToString(sum[:16]) + `"`}, nil
}

// acceptsGzip reports whether Accept-Encoding values allow gzip (named,
// or *, with a q-value above 0).
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if coding != "gzip" && coding != "*" {
				continue
			}
			if name, q, ok := strings.Cut(strings.TrimSpace(params), "="); ok && strings.EqualFold(strings.TrimSpace(name), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(q), 64); err != nil || f <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

// etagListed reports whether an If-None-Match value names etag (or is *),
// comparing weakly as RFC 9110 asks of If-None-Match.
func etagListed(inm, etag string) bool {
	for _, t := range strings.Split(inm, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
