// Package lambdafront is a local stand-in for API Gateway and Lambda
// function URLs in front of the real function bootstraps: it turns HTTP
// requests into the payload format 2.0 events AWS sends, routes them by
// the route table as an HTTP API does, invokes the function (under
// Amazon's Lambda Runtime Interface Emulator, package lambdaenv) and maps its answer back, with API
// Gateway's own answers where API Gateway answers instead of the function.
//
// Requests under /webhooks/ go to the function reached by a function URL
// (routeKey "$default", no path parameters); every other request is
// matched against the routes of the functions reached by the HTTP API:
// the route whose method and path template match ({param} is one path
// segment; a literal segment wins over a parameter), with routeKey
// "METHOD /path" and pathParameters; a request no route matches goes to
// the Fallback function as the $default route.
package lambdafront

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/lambdaenv"
	"github.com/sourcebase/sourcebase/internal/routes"
)

// Invoker invokes one function synchronously (a *lambdaenv.Function).
type Invoker interface {
	Invoke(ctx context.Context, payload []byte) (lambdaenv.Result, error)
}

// Limits of the services emulated.
const (
	// IntegrationTimeout is API Gateway's limit on an HTTP API's Lambda
	// integration: 30 s, after which it answers 503.
	IntegrationTimeout = 30 * time.Second
	// MaxInvokePayload is Lambda's limit on a synchronous invocation's
	// request payload (6 MB): a larger event is refused with 413.
	MaxInvokePayload = 6 << 20
	// MaxBody is API Gateway's limit on a request body (10 MB).
	MaxBody = 10 << 20
	// WebhookPrefix is the path prefix served by the function URL.
	WebhookPrefix = "/webhooks/"
)

// API Gateway's own answers (HTTP API, Lambda proxy integration).
const (
	msgInternal    = `{"message":"Internal Server Error"}`
	msgUnavailable = `{"message":"Service Unavailable"}`
	msgTooLarge    = `{"message":"Request Entity Too Large"}`
)

// Options configure a Front.
type Options struct {
	// Routes is the route table (api.Routes(); the deployment model's in
	// StartLocal).
	Routes []routes.Route
	// Functions invoke each function of routes.Functions reached by the
	// HTTP API or a function URL, by name.
	Functions map[string]Invoker
	// IntegrationTimeout defaults to IntegrationTimeout.
	IntegrationTimeout time.Duration
	// Log receives a line per failed invocation; nil: slog.Default().
	Log *slog.Logger
}

// Front is the HTTP handler.
type Front struct {
	opt      Options
	api      []compiled
	fallback Invoker
	fallName string
	url      Invoker
	urlName  string
}

type compiled struct {
	route routes.Route
	segs  []string // literal segments, or "{name}"
}

// Origins of the events (the ids AWS would give the API and the URL).
var (
	httpAPI     = origin{accountID: "123456789012", apiID: "localapi01", domain: "localapi01.execute-api.us-east-1.amazonaws.com"}
	functionURL = origin{accountID: "anonymous", apiID: "localwebhook01", domain: "localwebhook01.lambda-url.us-east-1.on.aws"}
)

// New checks that every function the routes and routes.Functions need
// has an Invoker and returns the front.
func New(o Options) (*Front, error) {
	if o.IntegrationTimeout <= 0 {
		o.IntegrationTimeout = IntegrationTimeout
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	f := &Front{opt: o}
	need := func(name string) (Invoker, error) {
		inv, ok := o.Functions[name]
		if !ok || inv == nil {
			return nil, fmt.Errorf("lambdafront: no invoker for the %s function", name)
		}
		return inv, nil
	}
	for _, fn := range routes.Functions {
		var err error
		switch {
		case fn.Reach == routes.ByURL:
			if f.url != nil {
				return nil, errors.New("lambdafront: more than one function has a function URL")
			}
			f.urlName = fn.Name
			if f.url, err = need(fn.Name); err != nil {
				return nil, err
			}
			for _, r := range routes.Of(o.Routes, fn.Name) {
				if !strings.HasPrefix(r.Path, WebhookPrefix) {
					return nil, fmt.Errorf("lambdafront: the route %s of the function URL is not under %s", r.Pattern(), WebhookPrefix)
				}
			}
		case fn.Reach == routes.ByAPI:
			rs := routes.Of(o.Routes, fn.Name)
			if len(rs) > 0 || fn.Fallback {
				inv, err := need(fn.Name)
				if err != nil {
					return nil, err
				}
				if fn.Fallback {
					f.fallback, f.fallName = inv, fn.Name
				}
			}
			for _, r := range rs {
				f.api = append(f.api, compiled{route: r, segs: strings.Split(strings.TrimPrefix(r.Path, "/"), "/")})
			}
		}
	}
	if f.fallback == nil {
		return nil, errors.New("lambdafront: no function serves the $default route")
	}
	return f, nil
}

// Match returns the HTTP API route of method and escapedPath (the path as
// sent, percent-encoding kept) with its path parameters, decoded, as API
// Gateway matches it; ok is false when the request goes to $default.
func (f *Front) Match(method, escapedPath string) (r routes.Route, params map[string]string, ok bool) {
	segs := strings.Split(strings.TrimPrefix(escapedPath, "/"), "/")
	var best *compiled
	for i := range f.api {
		c := &f.api[i]
		if c.route.Method != method || len(c.segs) != len(segs) || !c.matches(segs) {
			continue
		}
		if best == nil || c.moreSpecific(best) {
			best = c
		}
	}
	if best == nil {
		return routes.Route{}, nil, false
	}
	for i, s := range best.segs {
		if isParam(s) {
			v, err := url.PathUnescape(segs[i])
			if err != nil {
				return routes.Route{}, nil, false
			}
			if params == nil {
				params = map[string]string{}
			}
			params[s[1:len(s)-1]] = v
		}
	}
	return best.route, params, true
}

func isParam(s string) bool { return len(s) > 2 && s[0] == '{' && s[len(s)-1] == '}' }

func (c *compiled) matches(segs []string) bool {
	for i, s := range c.segs {
		if isParam(s) {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if s != segs[i] {
			return false
		}
	}
	return true
}

// moreSpecific: at the first segment where they differ in kind, c has a
// literal and o a parameter.
func (c *compiled) moreSpecific(o *compiled) bool {
	for i := range c.segs {
		a, b := isParam(c.segs[i]), isParam(o.segs[i])
		if a != b {
			return !a
		}
	}
	return false
}

// ServeHTTP answers one request through the function that serves it.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	viaURL := strings.HasPrefix(r.URL.Path, WebhookPrefix)
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return // the client went away
	}
	if len(body) > MaxBody {
		gatewayError(w, viaURL, http.StatusRequestEntityTooLarge, msgTooLarge)
		return
	}
	var ev *Event
	var inv Invoker
	var name string
	timeout := f.opt.IntegrationTimeout
	if viaURL {
		ev = newEvent(r, body, "$default", nil, functionURL, now)
		inv, name = f.url, f.urlName
		timeout = 0 // a function URL waits for the function's own timeout
	} else if route, params, ok := f.Match(r.Method, r.URL.EscapedPath()); ok {
		ev = newEvent(r, body, route.Method+" "+route.Path, params, httpAPI, now)
		inv, name = f.opt.Functions[route.Function], route.Function
	} else {
		ev = newEvent(r, body, "$default", nil, httpAPI, now)
		inv, name = f.fallback, f.fallName
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		gatewayError(w, viaURL, http.StatusInternalServerError, msgInternal)
		return
	}
	if len(payload) > MaxInvokePayload {
		gatewayError(w, viaURL, http.StatusRequestEntityTooLarge, msgTooLarge)
		return
	}
	// An invocation, once sent, runs to its end even when the client
	// leaves, as in Lambda.
	ctx := context.WithoutCancel(r.Context())
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, err := inv.Invoke(ctx, payload)
	switch {
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		f.opt.Log.Warn("integration timeout", "function", name, "route", ev.RouteKey, "timeout", timeout)
		gatewayError(w, viaURL, http.StatusServiceUnavailable, msgUnavailable)
		return
	case err != nil:
		f.opt.Log.Error("invoke failed", "function", name, "route", ev.RouteKey, "err", err)
		gatewayError(w, viaURL, http.StatusInternalServerError, msgInternal)
		return
	case res.Error != nil:
		f.opt.Log.Error("function error", "function", name, "route", ev.RouteKey, "errorType", res.Error.Type, "errorMessage", res.Error.Message)
		gatewayError(w, viaURL, http.StatusInternalServerError, msgInternal)
		return
	}
	resp, ok := decodeResponse(res.Payload)
	var out []byte
	if ok && resp.IsBase64Encoded {
		out, err = base64.StdEncoding.DecodeString(resp.Body)
		ok = err == nil
	} else if ok {
		out = []byte(resp.Body)
	}
	if !ok {
		f.opt.Log.Error("malformed function response", "function", name, "route", ev.RouteKey)
		gatewayError(w, viaURL, http.StatusInternalServerError, msgInternal)
		return
	}
	h := w.Header()
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	for _, c := range resp.Cookies {
		h.Add("Set-Cookie", c)
	}
	h.Del("Content-Length") // recomputed, as API Gateway does
	setRequestID(h, viaURL, ev.RequestContext.RequestID)
	w.WriteHeader(resp.StatusCode)
	if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified && r.Method != http.MethodHead {
		w.Write(out)
	}
}

func setRequestID(h http.Header, viaURL bool, id string) {
	if viaURL {
		h.Set("X-Amzn-Requestid", id)
	} else {
		h.Set("Apigw-Requestid", id)
	}
}

// gatewayError is an answer of API Gateway itself, or for a function URL,
// of Lambda's URL endpoint (which answers a failed function with 502 and a
// plain "Internal Server Error").
func gatewayError(w http.ResponseWriter, viaURL bool, status int, body string) {
	setRequestID(w.Header(), viaURL, requestID())
	if viaURL && status == http.StatusInternalServerError {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "Internal Server Error")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}
