package apitest

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/openapi"
)

// The contract: every call a test makes through a Client is checked
// against the service's OpenAPI document with kin-openapi, so that the
// document cannot drift from what the service does. Every response is
// validated against the declared responses of its route: its status must
// be declared, and its body must match the schema. The document checked is
// the strict one (api.StrictOpenAPI, which make generate writes beside
// this file as contract.json, so that a test of one feature links no
// other feature to read it): the published document's answers
// allow fields it does not name (a client keeps working when one is
// added), the strict one's do not, so a field the document does not name
// is drift here. A request is
// validated when the service accepted it (2xx): tests send invalid
// requests on purpose, and what the service refuses, the document need
// not allow. Benchmarks are not checked.

// strictDocument is api.StrictOpenAPI as make generate last wrote it (a
// test of package generate fails while it is stale).
//
//go:embed contract.json
var strictDocument []byte

var contract struct {
	once   sync.Once
	router routers.Router
	bodies *bodyDoc
	err    error
}

func contractRouter() (routers.Router, error) {
	contract.once.Do(func() {
		b := strictDocument
		doc, err := openapi3.NewLoader().LoadFromData(b)
		if err != nil {
			contract.err = err
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			contract.err = err
			return
		}
		doc.Servers = nil // match any host: the test servers' ports vary
		if contract.bodies, contract.err = newBodyDoc(b); contract.err != nil {
			return
		}
		contract.router, contract.err = legacy.NewRouter(doc)
	})
	return contract.router, contract.err
}

// checkContract validates a finished call; it reports violations as test
// errors naming the call.
func checkContract(t testing.TB, req *http.Request, reqBody []byte, res *Response) {
	if _, bench := t.(*testing.B); bench {
		return
	}
	t.Helper()
	if err := Contract(req, reqBody, res.Status, res.Header, res.Body); err != nil {
		t.Errorf("contract: %s %s answered %d, which the OpenAPI document does not allow: %v\nresponse: %.600s",
			req.Method, req.URL.RequestURI(), res.Status, err, res.Body)
	}
}

// Contract validates a request and its response against the OpenAPI
// document: the response always, the request when it was accepted (2xx).
// A request to no route of the document (an unknown path or method, which
// the service answers 404 or 405) has nothing to check but its error code:
// every error answer, routed or not, carries an X-Error-Code of its status
// (ErrorCode).
func Contract(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	return errors.Join(documented(req, reqBody, status, header, body), ErrorCode(status, header))
}

// documented validates a call against the OpenAPI document.
func documented(req *http.Request, reqBody []byte, status int, header http.Header, body []byte) error {
	if status == http.StatusMethodNotAllowed {
		return nil // no operation: the router refused the method
	}
	router, err := contractRouter()
	if err != nil {
		return err
	}
	r := req.Clone(context.Background())
	r.Body = io.NopCloser(bytes.NewReader(reqBody))
	r.URL = filterShorthands(r.URL)
	route, params, err := router.FindRoute(r)
	var unrouted *routers.RouteError
	if errors.As(err, &unrouted) {
		return nil
	}
	if err != nil {
		return err
	}
	_, anyBody := route.Operation.Extensions[openapi.AnyBodyExtension]
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true,
			ExcludeRequestBody: anyBody}}
	if status >= 200 && status < 300 {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return errors.Join(errors.New("the request"), err)
		}
	}
	// The status and headers by kin-openapi; the body against the
	// schema compiled once (bodies.go).
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: true}}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return errors.Join(errors.New("the response"), err)
	}
	if err := contract.bodies.validateBody(route, status, header, body); err != nil {
		return errors.Join(errors.New("the response"), err)
	}
	return nil
}

// Allows reports whether the OpenAPI document (the strict one, as the
// contract check reads it) allows a request, whatever the service answers
// it: nil when it does, else what breaks it; an error too for a request
// to no operation of the document. What a validating client or proxy
// would refuse before sending it (Prism answers such a request itself).
func Allows(method, path string, body []byte) error {
	router, err := contractRouter()
	if err != nil {
		return err
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	r, err := http.NewRequest(method, "http://service.invalid"+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	r.URL = filterShorthands(r.URL)
	route, params, err := router.FindRoute(r)
	if err != nil {
		return err
	}
	_, anyBody := route.Operation.Extensions[openapi.AnyBodyExtension]
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: true, ExcludeRequestBody: anyBody}})
}

// ErrorCode checks the error headers of an answer: an error status (4xx,
// 5xx) carries X-Error-Code, one of apperr.Codes answered with that
// status, and at most one X-Error-Param (of a code that has one); a
// success carries neither.
func ErrorCode(status int, header http.Header) error {
	codes, params := header.Values("X-Error-Code"), header.Values("X-Error-Param")
	if status < 400 {
		if len(codes) > 0 || len(params) > 0 {
			return fmt.Errorf("a %d answer carries X-Error-Code %q, X-Error-Param %q", status, codes, params)
		}
		return nil
	}
	if len(codes) != 1 {
		return fmt.Errorf("a %d answer carries X-Error-Code %q, want one code of docs/errors.md", status, codes)
	}
	info, ok := apperr.Lookup(apperr.Code(codes[0]))
	switch {
	case !ok:
		return fmt.Errorf("a %d answer carries X-Error-Code %q, which is none of docs/errors.md", status, codes[0])
	case info.Status != status:
		return fmt.Errorf("a %d answer carries X-Error-Code %q, a code of %d answers", status, codes[0], info.Status)
	case len(params) > 1 || len(params) == 1 && (params[0] == "" || info.Param == ""):
		return fmt.Errorf("a %d %s answer carries X-Error-Param %q", status, codes[0], params)
	}
	return nil
}

// filterShorthands is u with a list's filter[<field>]=v written
// filter[<field>][eq]=v, as the service reads it, when the query also has
// filter[<field>][<operator>]: kin-openapi decodes a deepObject parameter
// into nested objects, and a key that is both a value and an object
// panics its decoder (or, the other way round, loses the operators).
func filterShorthands(u *url.URL) *url.URL {
	q := u.Query()
	changed := false
	for k, vs := range q {
		if !strings.HasPrefix(k, "filter[") || strings.Count(k, "[") != 1 {
			continue
		}
		for other := range q {
			if strings.HasPrefix(other, k+"[") {
				if _, both := q[k+"[eq]"]; !both {
					q[k+"[eq]"] = vs
				}
				delete(q, k)
				changed = true
				break
			}
		}
	}
	if !changed {
		return u
	}
	out := *u
	out.RawQuery = q.Encode()
	return &out
}
