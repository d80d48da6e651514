package outbound

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// Client defaults.
const (
	// DefaultTimeout bounds one delivery attempt when Client.Timeout is zero.
	DefaultTimeout = 10 * time.Second
	// DefaultMaxResponseBytes is how much of a response body Post reads when
	// Client.MaxResponseBytes is zero.
	DefaultMaxResponseBytes = 64 << 10
	// MaxURLLength is the longest URL CheckURL accepts.
	MaxURLLength = 2048
)

// excerptBytes bounds Result.Excerpt.
const excerptBytes = 1 << 10

// Client posts webhooks to customer-supplied URLs without letting those URLs
// reach the service's own network (server-side request forgery): a
// destination whose host resolves to any private, loopback, link-local or
// otherwise non-public address (see Public) is refused, both before the
// request and again for every address actually dialled, so a DNS answer that
// changes between the two (DNS rebinding) cannot slip through. Redirects are
// never followed, proxies from the environment are not used, and each attempt
// is bounded in time and in how much of the response it reads.
//
// The zero value is ready to use. A Client keeps one HTTP transport (and its
// idle connections) for all its calls and is safe for concurrent use; set its
// fields before the first call and do not change or copy it afterwards.
type Client struct {
	// AllowLoopback lets requests reach loopback addresses (127.0.0.0/8 and
	// ::1), for local development and tests. Every other non-public address
	// stays refused.
	AllowLoopback bool
	// Timeout bounds one whole attempt: resolving, connecting, sending and
	// reading the response. Zero or less means DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes is how much of a response body is read; the rest is
	// discarded by closing the connection. Zero or less means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// Resolver resolves destination hosts, both for CheckDestination and for
	// dialling. Nil means net.DefaultResolver.
	Resolver *net.Resolver

	once       sync.Once
	httpClient *http.Client
}

// Result describes one delivery attempt that got a response.
type Result struct {
	// Status is the response's HTTP status code, 0 if there was no response.
	Status int
	// Latency is how long the attempt took, from resolving the destination
	// to reading the response body (or failing).
	Latency time.Duration
	// Excerpt is the start of the response body, at most 1 KiB and valid
	// UTF-8 (invalid bytes are replaced with U+FFFD), for showing the
	// endpoint's owner what their server answered.
	Excerpt string
}

// OK reports whether the attempt succeeded, that is got a 2xx status. A
// redirect is a failure: Client never follows one.
func (r Result) OK() bool { return r.Status >= 200 && r.Status <= 299 }

// DestinationError is returned when a destination's host resolves to an
// address that is not public (see Public), at check time or at dial time.
type DestinationError struct {
	Host string     // the host as written in the URL
	Addr netip.Addr // the offending address (one of them, if several)
}

func (e *DestinationError) Error() string {
	// A loopback destination is what a developer trying webhooks on this
	// machine gives: say how the dev server allows it.
	hint := ""
	if e.Addr.IsLoopback() {
		hint = " (a dev server started with WEBHOOKS_ALLOW_LOOPBACK=true delivers to this machine)"
	}
	if e.Host == e.Addr.String() {
		return fmt.Sprintf("the destination %s is a private/loopback/link-local address; webhooks are sent only to public addresses%s", e.Host, hint)
	}
	return fmt.Sprintf("the destination %s resolves to %s, a private/loopback/link-local address; webhooks are sent only to public addresses%s", e.Host, e.Addr, hint)
}

// CheckURL parses raw as a webhook destination and returns it, or an error
// meant for API users if it is not one: the URL must be absolute http or
// https with a host, have no user name, password or fragment, and be at most
// MaxURLLength characters. CheckURL does not resolve the host; see
// Client.CheckDestination.
func CheckURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("url: a URL is required")
	}
	if len(raw) > MaxURLLength {
		return nil, fmt.Errorf("url: the URL is %d characters; at most %d are allowed", len(raw), MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, fmt.Errorf("url: not a valid URL: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return nil, errors.New("url: the scheme must be https or http")
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return nil, errors.New("url: a host is required, as in https://example.com/hooks")
	}
	if u.User != nil {
		return nil, errors.New("url: the URL must not contain a user name or password; put credentials in the path or query instead")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, errors.New("url: the URL must not contain a fragment (#...), which is never sent to the server")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("url: the port %s is not between 1 and 65535", p)
		}
	}
	return u, nil
}

// UnresolvedError is a destination whose host has no address now (no such
// host, no answer, or a resolver failure): a delivery to it fails, and is
// checked again at each attempt.
type UnresolvedError struct {
	Host string
	Why  string
	Err  error
}

func (e *UnresolvedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("the destination %s %s: %v", e.Host, e.Why, e.Err)
	}
	return fmt.Sprintf("the destination %s %s", e.Host, e.Why)
}

func (e *UnresolvedError) Unwrap() error { return e.Err }

// CheckDestination resolves u's host and refuses it, with a *DestinationError,
// if any address it resolves to is not public (see Public; loopback is allowed
// when AllowLoopback is set), or with an *UnresolvedError if it resolves to
// none now. A host that is an IP address is checked as is.
// Post calls it and checks again at dial time; call it directly to vet a URL
// when it is registered.
func (c *Client) CheckDestination(ctx context.Context, u *url.URL) error {
	host := u.Hostname()
	if host == "" {
		return errors.New("url: a host is required, as in https://example.com/hooks")
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if !c.allowed(addr) {
			return &DestinationError{Host: host, Addr: addr}
		}
		return nil
	}
	addrs, err := c.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return &UnresolvedError{Host: host, Why: "does not resolve to any address (no such host)"}
		}
		return &UnresolvedError{Host: host, Why: "could not be resolved", Err: err}
	}
	if len(addrs) == 0 {
		return &UnresolvedError{Host: host, Why: "does not resolve to any address"}
	}
	for _, addr := range addrs {
		if !c.allowed(addr) {
			// The resolver returns IPv4 answers in their IPv4-mapped form.
			return &DestinationError{Host: host, Addr: addr.Unmap()}
		}
	}
	return nil
}

// Post sends body to the URL u with headers h (typically from Headers) in one
// delivery attempt.
//
// A non-2xx response, including a redirect (which is never followed), is not
// an error: Result.Status tells, and Result.OK reports success. An invalid URL,
// a refused destination (*DestinationError), a network failure or running out
// of Timeout is an error; Result.Latency is set even then. The response body
// is read up to MaxResponseBytes; a failure while reading it does not change
// the outcome, since the status already arrived.
func (c *Client) Post(ctx context.Context, u string, h http.Header, body []byte) (Result, error) {
	start := time.Now()
	res, err := c.post(ctx, u, h, body)
	res.Latency = time.Since(start)
	return res, err
}

func (c *Client) post(ctx context.Context, raw string, h http.Header, body []byte) (Result, error) {
	u, err := CheckURL(raw)
	if err != nil {
		return Result{}, err
	}
	timeout := c.timeout()
	attemptCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	if err := c.CheckDestination(attemptCtx, u); err != nil {
		if timedOut(ctx, attemptCtx) {
			return Result{}, fmt.Errorf("sending to %s: no complete response within %v: %w", u.Host, timeout, err)
		}
		return Result{}, err
	}
	req, err := http.NewRequestWithContext(attemptCtx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("building the request to %s: %w", u.Host, err)
	}
	req.Header = h.Clone()
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return Result{}, c.explain(ctx, attemptCtx, u, err)
	}
	defer resp.Body.Close()
	// Closing the body without draining it drops the connection when the
	// response is longer than this; that is the point of the limit.
	read, _ := io.ReadAll(io.LimitReader(resp.Body, c.maxResponseBytes()))
	return Result{Status: resp.StatusCode, Excerpt: excerpt(read, excerptBytes)}, nil
}

// explain turns a failed attempt's error into one that says what went wrong
// in terms an endpoint's owner understands, keeping the cause wrapped.
func (c *Client) explain(parent, attempt context.Context, u *url.URL, err error) error {
	var destErr *DestinationError
	if errors.As(err, &destErr) {
		return destErr
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err // its message repeats the whole URL, query and all
	}
	if timedOut(parent, attempt) {
		return fmt.Errorf("sending to %s: no complete response within %v: %w", u.Host, c.timeout(), err)
	}
	return fmt.Errorf("sending to %s: %w", u.Host, err)
}

// timedOut reports whether an attempt ended because its own deadline (the
// Client's Timeout) passed, rather than because the caller gave up.
func timedOut(parent, attempt context.Context) bool {
	return parent.Err() == nil && errors.Is(attempt.Err(), context.DeadlineExceeded)
}

// client returns the HTTP client, building it on first use.
func (c *Client) client() *http.Client {
	c.once.Do(func() {
		dialer := &net.Dialer{
			Timeout:   c.timeout(),
			KeepAlive: 30 * time.Second,
			Resolver:  c.Resolver,
		}
		transport := &http.Transport{
			Proxy: nil, // never a proxy from the environment: it would dial for us, unchecked
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				// A copy per dial, so that a refusal can name the URL's host;
				// Control sees each address about to be connected to, after
				// resolution, which is what defeats DNS rebinding.
				d := *dialer
				host, _, _ := net.SplitHostPort(addr)
				d.Control = func(_, address string, _ syscall.RawConn) error {
					return c.checkDial(host, address)
				}
				return d.DialContext(ctx, network, addr)
			},
			TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    c.timeout(),
			MaxIdleConns:           100,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        90 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
		}
		c.httpClient = &http.Client{
			Transport: transport,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	})
	return c.httpClient
}

// checkDial is the dialer's last word, called with the very address about to
// be connected to ("ip:port"), after any DNS resolution.
func (c *Client) checkDial(host, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refusing to dial %q: not an IP address and port: %w", address, err)
	}
	if !c.allowed(ap.Addr()) {
		return &DestinationError{Host: host, Addr: ap.Addr()}
	}
	return nil
}

// allowed reports whether c may connect to addr.
func (c *Client) allowed(addr netip.Addr) bool {
	if Public(addr) {
		return true
	}
	return c.AllowLoopback && addr.Unmap().IsLoopback()
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c *Client) maxResponseBytes() int64 {
	if c.MaxResponseBytes > 0 {
		return c.MaxResponseBytes
	}
	return DefaultMaxResponseBytes
}

func (c *Client) resolver() *net.Resolver {
	if c.Resolver != nil {
		return c.Resolver
	}
	return net.DefaultResolver
}

// excerpt returns the longest prefix of b that fits in limit bytes once
// invalid UTF-8 is replaced with U+FFFD, so the result is valid UTF-8 and at
// most limit bytes long.
func excerpt(b []byte, limit int) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if sb.Len()+utf8.RuneLen(r) > limit {
			break
		}
		sb.WriteRune(r) // utf8.RuneError for an invalid byte
		b = b[size:]
	}
	return sb.String()
}

// Non-public address ranges that netip.Addr's predicates do not cover; see
// the IANA IPv4 and IPv6 Special-Purpose Address Registries.
var nonPublicPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),         // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),     // shared address space (carrier-grade NAT)
	netip.MustParsePrefix("192.0.0.0/24"),      // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),      // documentation (TEST-NET-1)
	netip.MustParsePrefix("198.18.0.0/15"),     // benchmarking; also used by some proxies for fake DNS answers
	netip.MustParsePrefix("198.51.100.0/24"),   // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),    // documentation (TEST-NET-3)
	netip.MustParsePrefix("240.0.0.0/4"),       // reserved, and 255.255.255.255 broadcast
	netip.MustParsePrefix("fd00:ec2::254/128"), // AWS instance metadata over IPv6 (also inside fc00::/7)
	netip.MustParsePrefix("::/96"),             // deprecated IPv4-compatible addresses, including :: and ::1
	netip.MustParsePrefix("64:ff9b:1::/48"),    // local-use NAT64
	netip.MustParsePrefix("100::/64"),          // discard-only
	netip.MustParsePrefix("2001::/32"),         // Teredo, whose IPv4 server and client are obfuscated
	netip.MustParsePrefix("2001:db8::/32"),     // documentation
}

// Prefixes of IPv6 ranges that embed an IPv4 address, which a gateway may
// translate to: they are public only if the embedded address is.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96") // embeds it in the last 4 bytes
	sixToFour   = netip.MustParsePrefix("2002::/16")    // embeds it in bytes 2 to 5
	globalIPv6  = netip.MustParsePrefix("2000::/3")     // all global unicast IPv6 allocated so far
)

// Public reports whether addr is a public unicast address that webhooks may
// be sent to. It is false for the unspecified address, loopback, private
// (RFC 1918 and fc00::/7), link-local (169.254.0.0/16, which holds the
// 169.254.169.254 cloud metadata service, and fe80::/10), multicast and
// broadcast addresses, carrier-grade NAT (100.64.0.0/10), 0.0.0.0/8, other
// special-purpose ranges (documentation, benchmarking, reserved), AWS's IPv6
// metadata address fd00:ec2::254, IPv6 outside 2000::/3, and IPv4-mapped,
// NAT64 and 6to4 IPv6 addresses whose embedded IPv4 address is not public.
func Public(addr netip.Addr) bool {
	if !addr.IsValid() {
		return false
	}
	addr = addr.Unmap().WithZone("")
	if addr.IsUnspecified() || addr.IsLoopback() || addr.IsPrivate() ||
		addr.IsLinkLocalUnicast() || addr.IsMulticast() ||
		addr.IsLinkLocalMulticast() || addr.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range nonPublicPrefixes {
		if p.Contains(addr) {
			return false
		}
	}
	if addr.Is4() {
		return true
	}
	b := addr.As16()
	switch {
	case nat64Prefix.Contains(addr):
		return Public(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(addr):
		return Public(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return globalIPv6.Contains(addr)
}
