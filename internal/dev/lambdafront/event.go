package lambdafront

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Event is the payload format 2.0 request that API Gateway HTTP APIs and
// Lambda function URLs send, with exactly the fields they send.
type Event struct {
	Version               string            `json:"version"`
	RouteKey              string            `json:"routeKey"`
	RawPath               string            `json:"rawPath"`
	RawQueryString        string            `json:"rawQueryString"`
	Cookies               []string          `json:"cookies,omitempty"`
	Headers               map[string]string `json:"headers"`
	QueryStringParameters map[string]string `json:"queryStringParameters,omitempty"`
	PathParameters        map[string]string `json:"pathParameters,omitempty"`
	RequestContext        RequestContext    `json:"requestContext"`
	Body                  string            `json:"body,omitempty"`
	IsBase64Encoded       bool              `json:"isBase64Encoded"`
}

// RequestContext is the event's requestContext.
type RequestContext struct {
	AccountID    string      `json:"accountId"`
	APIID        string      `json:"apiId"`
	DomainName   string      `json:"domainName"`
	DomainPrefix string      `json:"domainPrefix"`
	HTTP         HTTPContext `json:"http"`
	RequestID    string      `json:"requestId"`
	RouteKey     string      `json:"routeKey"`
	Stage        string      `json:"stage"`
	Time         string      `json:"time"`
	TimeEpoch    int64       `json:"timeEpoch"`
}

// HTTPContext is requestContext.http.
type HTTPContext struct {
	Method    string `json:"method"`
	Path      string `json:"path"`
	Protocol  string `json:"protocol"`
	SourceIP  string `json:"sourceIp"`
	UserAgent string `json:"userAgent"`
}

// Response is a function's answer in payload format 2.0.
type Response struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	Cookies           []string            `json:"cookies"`
	Body              string              `json:"body"`
	IsBase64Encoded   bool                `json:"isBase64Encoded"`
}

// origin is where the event comes from: the HTTP API or a function URL.
type origin struct {
	accountID string
	apiID     string
	domain    string // domainName
}

// newEvent turns r (whose body is body) into the event API Gateway sends:
// header names lowercased and repeated headers joined with commas, the
// Cookie header moved to cookies, repeated query parameters joined with
// commas, a body that is not text base64-encoded.
func newEvent(r *http.Request, body []byte, routeKey string, params map[string]string, o origin, now time.Time) *Event {
	ev := &Event{
		Version:        "2.0",
		RouteKey:       routeKey,
		RawPath:        r.URL.EscapedPath(),
		RawQueryString: r.URL.RawQuery,
		Headers:        map[string]string{},
		PathParameters: params,
	}
	names := make([]string, 0, len(r.Header))
	for k := range r.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		lk := strings.ToLower(k)
		if lk == "cookie" {
			for _, line := range r.Header[k] {
				for c := range strings.SplitSeq(line, ";") {
					if c = strings.TrimSpace(c); c != "" {
						ev.Cookies = append(ev.Cookies, c)
					}
				}
			}
			continue
		}
		ev.Headers[lk] = strings.Join(r.Header[k], ",")
	}
	ev.Headers["host"] = r.Host
	ip := clientIP(r)
	if xff := ev.Headers["x-forwarded-for"]; xff != "" {
		ev.Headers["x-forwarded-for"] = xff + ", " + ip
	} else {
		ev.Headers["x-forwarded-for"] = ip
	}
	_, port, _ := net.SplitHostPort(r.Host)
	if port == "" {
		port = "80"
	}
	ev.Headers["x-forwarded-port"] = port
	ev.Headers["x-forwarded-proto"] = "http"
	ev.Headers["x-amzn-trace-id"] = traceID(now)
	if len(body) > 0 {
		ev.Headers["content-length"] = strconv.Itoa(len(body))
	}
	if q, err := url.ParseQuery(r.URL.RawQuery); err == nil && len(q) > 0 {
		ev.QueryStringParameters = make(map[string]string, len(q))
		for k, vs := range q {
			ev.QueryStringParameters[k] = strings.Join(vs, ",")
		}
	}
	if len(body) > 0 {
		if isText(r.Header.Get("Content-Type"), body) {
			ev.Body = string(body)
		} else {
			ev.Body = base64.StdEncoding.EncodeToString(body)
			ev.IsBase64Encoded = true
		}
	}
	prefix, _, _ := strings.Cut(o.domain, ".")
	ev.RequestContext = RequestContext{
		AccountID:    o.accountID,
		APIID:        o.apiID,
		DomainName:   o.domain,
		DomainPrefix: prefix,
		HTTP: HTTPContext{
			Method:    r.Method,
			Path:      r.URL.Path,
			Protocol:  r.Proto,
			SourceIP:  ip,
			UserAgent: r.UserAgent(),
		},
		RequestID: requestID(),
		RouteKey:  routeKey,
		Stage:     "$default",
		Time:      now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
		TimeEpoch: now.UnixMilli(),
	}
	return ev
}

// isText reports whether a body of contentType is passed as text: the
// textual media types, when the body is valid UTF-8.
func isText(contentType string, body []byte) bool {
	if !utf8.Valid(body) {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		strings.HasSuffix(mt, "/json"), strings.HasSuffix(mt, "+json"),
		strings.HasSuffix(mt, "/xml"), strings.HasSuffix(mt, "+xml"),
		mt == "application/javascript", mt == "application/x-www-form-urlencoded":
		return true
	}
	return false
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// requestID has the shape of API Gateway's request ids (Xyq1mhJkoAMEPbA=).
func requestID() string { return base64.StdEncoding.EncodeToString(randomBytes(10)) }

func traceID(now time.Time) string {
	return "Root=1-" + strconv.FormatInt(now.Unix(), 16) + "-" + hexString(randomBytes(12))
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 2*len(b))
	for i, c := range b {
		out[2*i], out[2*i+1] = digits[c>>4], digits[c&15]
	}
	return string(out)
}

// decodeResponse reads a function's answer as API Gateway does for payload
// format 2.0: an object with statusCode is a response; any other valid
// JSON is the body of a 200 application/json response.
func decodeResponse(payload []byte) (*Response, bool) {
	if !json.Valid(payload) {
		return nil, false
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(payload, &probe) == nil {
		if _, ok := probe["statusCode"]; ok {
			var res Response
			if err := json.Unmarshal(payload, &res); err != nil || res.StatusCode < 100 || res.StatusCode > 599 {
				return nil, false
			}
			return &res, true
		}
	}
	return &Response{StatusCode: 200, Headers: map[string]string{"content-type": "application/json"}, Body: string(payload)}, true
}
