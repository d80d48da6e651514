package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/auth"
	"github.com/sourcebase/sourcebase/internal/ids"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
	"github.com/sourcebase/sourcebase/internal/store"
	"github.com/sourcebase/sourcebase/internal/telemetry"
	"github.com/sourcebase/sourcebase/internal/usage"
)

// requestLog collects what the access log line reports; handlers deeper in
// the stack fill in the caller once it is known.
type requestLog struct {
	id       string
	org      string
	clientID string
	route    string // the route's pattern, set by the router
}

type logKey struct{}

// LogHandler adds the request id and the caller to every record logged with
// a request's context, so log lines of one request can be joined.
type LogHandler struct{ slog.Handler }

// Handle adds the request's attributes.
func (h LogHandler) Handle(ctx context.Context, r slog.Record) error {
	if rl, ok := ctx.Value(logKey{}).(*requestLog); ok {
		r.AddAttrs(slog.String("requestId", rl.id))
		if rl.org != "" {
			r.AddAttrs(slog.String("organizationId", rl.org), slog.String("clientId", rl.clientID))
		}
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs keeps the wrapper.
func (h LogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return LogHandler{h.Handler.WithAttrs(as)}
}

// WithGroup keeps the wrapper.
func (h LogHandler) WithGroup(name string) slog.Handler { return LogHandler{h.Handler.WithGroup(name)} }

// statusWriter remembers the status code and size for the access log,
// and keeps a copy of the body when copy is set (for idempotent replays).
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
	copy   *bytes.Buffer
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.copy != nil {
		w.copy.Write(b)
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// requestID accepts the caller's X-Request-Id when it is short and plain,
// so a request can be traced across systems; otherwise makes one.
func requestID(r *http.Request) string {
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 64 {
		return ids.New("req")
	}
	for _, c := range id {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return ids.New("req")
		}
	}
	return id
}

// RequestID is the id of ctx's request, as its X-Request-Id answers it;
// "" outside a request.
func RequestID(ctx context.Context) string {
	if rl, ok := ctx.Value(logKey{}).(*requestLog); ok {
		return rl.id
	}
	return ""
}

// Observe logs one structured line per request (telemetry.Request: the
// request's ids, caller, route, status, duration, DynamoDB calls and units,
// rate limit state and EMF metrics; never headers, bodies or query strings,
// which may hold secrets), traces it (an X-Ray subsegment when the
// invocation's trace is sampled) and turns a panic into a 500.
func Observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rl := &requestLog{id: requestID(r)}
		meter := new(telemetry.Meter)
		ctx := telemetry.WithMeter(telemetry.WithRequestID(context.WithValue(r.Context(), logKey{}, rl), rl.id), meter)
		ctx, seg := telemetry.Start(ctx, "request")
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w}
		sw.Header().Set("X-Request-Id", rl.id)
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				slog.ErrorContext(ctx, "panic", "panic", p, "stack", string(debug.Stack()))
				if sw.status == 0 {
					Refuse(sw, apperr.CodeInternal, "", "internal error")
				}
			}
			line := telemetry.Request{Method: r.Method, Path: r.URL.Path, Route: rl.route, Status: sw.status, Bytes: sw.bytes,
				Latency: time.Since(start), Meter: meter, Rate: rateState(sw)}
			if seg != nil {
				name := line.Route
				if name == "" {
					name = telemetry.NoRoute // a segment must have a name
				}
				seg.SetName(name)
				seg.Annotate("request_id", rl.id)
				seg.Annotate("organization", rl.org)
				seg.SetHTTP(r.Method, r.URL.Path, sw.status)
				seg.End()
			}
			line.Log(ctx)
		}()
		next.ServeHTTP(sw, r)
	})
}

// rateState is the rate limit's state as the answer's headers say it.
func rateState(sw *statusWriter) telemetry.RateState {
	h := sw.Header()
	limit, ok := h[rateLimitKey]
	if !ok || len(limit) == 0 {
		return telemetry.RateState{}
	}
	n := func(v []string) int64 {
		if len(v) == 0 {
			return 0
		}
		i, _ := strconv.ParseInt(v[0], 10, 64)
		return i
	}
	return telemetry.RateState{Counted: true, Limit: n(limit), Remaining: n(h[rateRemainingKey]), ResetSeconds: n(h[rateResetKey]),
		Limited: sw.status == http.StatusTooManyRequests}
}

// routed records the route that serves a request, for its log line.
func routed(pattern string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rl, ok := r.Context().Value(logKey{}).(*requestLog); ok {
			rl.route = pattern
		}
		h.ServeHTTP(w, r)
	})
}

// Identify names r's caller in its log line: what Authenticate does, for
// a handler that authenticates its requests itself (the MCP endpoint).
func Identify(r *http.Request, p auth.Principal) {
	if rl, ok := r.Context().Value(logKey{}).(*requestLog); ok {
		rl.org, rl.clientID = p.OrgID, p.ClientID
	}
}

// CountUsage adds requests, and the capacity units ctx's request spent so
// far, to org's usage (rec; nil counts nothing): what list-orgs reports.
func CountUsage(ctx context.Context, rec *usage.Recorder, org string, requests int64) {
	m := telemetry.MeterOf(ctx)
	if rec == nil || m == nil {
		return
	}
	// A flush the recorder makes is not this request's work: no meter.
	rec.Add(telemetry.WithMeter(context.WithoutCancel(ctx), nil), org,
		usage.Units{Requests: requests, ReadUnits: m.ReadUnits(), WriteUnits: m.WriteUnits()})
}

// Client id and secret headers of every /v1 request.
const (
	HeaderClientID = "X-Service-Client-Id"
	HeaderAPIKey   = "X-Service-Api-Key"
)

// Authenticate admits requests with a valid key pair and puts the caller
// into the context; everything else is 401 with the spec's exact body. A
// request counts against its key's rate limit and its organization's
// (ratelimit.Limiter.Key); a 429 names the one that refused. The request
// and the capacity units it spent count toward its organization's usage
// (rec; nil counts none), what list-orgs reports.
func Authenticate(a *auth.Authenticator, limits *ratelimit.Limiter, rec *usage.Recorder) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, err := a.Authenticate(r.Context(), r.Header.Get(HeaderClientID), r.Header.Get(HeaderAPIKey))
			if err != nil {
				Error(w, r, err)
				return
			}
			Identify(r, p)
			// A request marked counted (an MCP tool's REST call, whose
			// JSON-RPC message was counted) is not counted twice.
			if limits != nil && !counted(r.Context()) {
				if d := limits.Key(r.Context(), p.OrgID, p.ClientID); !RateLimit(w, d, "this API key") {
					return
				}
			}
			ctx, work := store.WithWork(auth.WithPrincipal(r.Context(), p))
			next.ServeHTTP(w, r.WithContext(ctx))
			// What the request read beyond its answer counts too: one
			// request per store.RecordsPerRequest records passed over
			// (an MCP tool's REST call included), seen in the headers of
			// the key's next answer.
			if n := work.Requests(); limits != nil && n > 0 {
				limits.Charge(context.WithoutCancel(r.Context()), p.OrgID, p.ClientID, n)
			}
			requests := int64(1)
			if counted(r.Context()) {
				requests = 0 // an MCP tool's REST call: its message counted
			}
			CountUsage(ctx, rec, p.OrgID, requests)
		})
	}
}
