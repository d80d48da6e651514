package outbound_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sourcebase/sourcebase/internal/outbound"
)

// slowTimeout is the Client.Timeout of the test against a server that never
// answers; short so the test is quick, and only its expiry is asserted.
const slowTimeout = 200 * time.Millisecond

// server starts a loopback httptest server counting its requests.
func server(t *testing.T, handler http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		handler(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestPostRefusesLoopbackUnlessAllowed(t *testing.T) {
	t.Parallel()
	secret := outbound.NewSecret()
	body := []byte(`{"type":"ping"}`)
	verified := make(chan error, 1)
	srv, hits := server(t, func(w http.ResponseWriter, r *http.Request) {
		got, _ := io.ReadAll(r.Body)
		verified <- outbound.Verify(secret, r.Header, got, time.Now(), 0)
		w.WriteHeader(http.StatusNoContent)
	})
	h, err := outbound.Headers([]string{secret}, "msg_1", time.Now(), body)
	if err != nil {
		t.Fatal(err)
	}

	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		res, err := (&outbound.Client{}).Post(t.Context(), u+"/hooks", h, body)
		var destErr *outbound.DestinationError
		if !errors.As(err, &destErr) || !destErr.Addr.IsLoopback() {
			t.Fatalf("Post(%s) without AllowLoopback: error = %v, want a *DestinationError for a loopback address", u, err)
		}
		for _, want := range []string{"webhooks are sent only to public addresses", "WEBHOOKS_ALLOW_LOOPBACK=true"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Post(%s) error = %q, want it to say %q", u, err, want)
			}
		}
		if res.Status != 0 || res.Latency <= 0 {
			t.Errorf("Post(%s) = %+v, want no status and a latency", u, res)
		}
		t.Logf("Post(%s): %v", u, err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server got %d requests, want none", n)
	}

	c := &outbound.Client{AllowLoopback: true}
	res, err := c.Post(t.Context(), srv.URL+"/hooks", h, body)
	if err != nil {
		t.Fatalf("Post() with AllowLoopback: %v", err)
	}
	if res.Status != http.StatusNoContent || !res.OK() || res.Latency <= 0 {
		t.Errorf("Post() = %+v, want status 204, OK and a latency", res)
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("the server got %d requests, want 1", n)
	}
	if err := <-verified; err != nil {
		t.Errorf("the server could not verify the signed request it got: %v", err)
	}
}

func TestPostReportsStatusesWithoutFollowingRedirects(t *testing.T) {
	t.Parallel()
	var followed atomic.Int32
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/target", http.StatusFound)
		case "/target":
			followed.Add(1)
		case "/error":
			http.Error(w, "database is down", http.StatusInternalServerError)
		}
	})
	c := &outbound.Client{AllowLoopback: true}

	res, err := c.Post(t.Context(), srv.URL+"/redirect", nil, []byte(`{}`))
	if err != nil {
		t.Fatalf("Post() to a redirect: %v", err)
	}
	if res.Status != http.StatusFound || res.OK() {
		t.Errorf("Post() to a redirect = %+v, want status 302 and not OK", res)
	}
	if n := followed.Load(); n != 0 {
		t.Errorf("the redirect was followed %d times", n)
	}

	res, err = c.Post(t.Context(), srv.URL+"/error", nil, []byte(`{}`))
	if err != nil {
		t.Fatalf("Post() to a failing endpoint: a non-2xx must not be an error, got %v", err)
	}
	if res.Status != http.StatusInternalServerError || res.OK() || res.Excerpt != "database is down\n" {
		t.Errorf("Post() to a failing endpoint = %+v, want status 500, not OK, and its body", res)
	}
}

func TestPostGivesUpAfterTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before srv.Close, which waits for handlers

	c := &outbound.Client{AllowLoopback: true, Timeout: slowTimeout}
	res, err := c.Post(t.Context(), srv.URL, nil, []byte(`{}`))
	if err == nil {
		t.Fatalf("Post() to a server that never answers = %+v, want an error", res)
	}
	t.Logf("Post() to a server that never answers: %v", err)
	if res.Latency <= 0 {
		t.Errorf("Post() = %+v, want the latency set even on error", res)
	}
}

func TestPostReadsAtMostMaxResponseBytes(t *testing.T) {
	t.Parallel()
	const maxBytes = 100
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("a", 1<<10))
		for range 1 << 10 { // 1 MiB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	c := &outbound.Client{AllowLoopback: true, MaxResponseBytes: maxBytes}
	res, err := c.Post(t.Context(), srv.URL, nil, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Excerpt != strings.Repeat("a", maxBytes) {
		t.Errorf("Post() read %d bytes of a 1 MiB body, want %d", len(res.Excerpt), maxBytes)
	}
}

func TestPostExcerptIsAtMost1KiBOfValidUTF8(t *testing.T) {
	t.Parallel()
	bodies := map[string]string{
		"two-byte characters":    strings.Repeat("é", 2000),
		"four-byte characters":   strings.Repeat("🚀", 1000),
		"invalid UTF-8":          strings.Repeat("\xff\xfe", 1000),
		"a short body":           "ok",
		"a character at 1 KiB":   strings.Repeat("a", 1023) + "é",
		"a body of exactly 1KiB": strings.Repeat("b", 1024),
	}
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, bodies[r.URL.Query().Get("body")])
	})
	c := &outbound.Client{AllowLoopback: true}
	for name, body := range bodies {
		res, err := c.Post(t.Context(), srv.URL+"?"+url.Values{"body": {name}}.Encode(), nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(res.Excerpt) > 1<<10 || !utf8.ValidString(res.Excerpt) {
			t.Errorf("%s: Excerpt is %d bytes, valid UTF-8 = %v; want at most 1024 and valid", name, len(res.Excerpt), utf8.ValidString(res.Excerpt))
		}
		if utf8.ValidString(body) && !strings.HasPrefix(body, res.Excerpt) {
			t.Errorf("%s: Excerpt %q is not a prefix of the body", name, res.Excerpt)
		}
		if len(body) <= 1<<10 && res.Excerpt != body {
			t.Errorf("%s: Excerpt = %q, want the whole body %q", name, res.Excerpt, body)
		}
	}
}

func TestPostFailures(t *testing.T) {
	t.Parallel()
	srv, hits := server(t, func(w http.ResponseWriter, r *http.Request) {})
	c := &outbound.Client{AllowLoopback: true}

	if _, err := c.Post(t.Context(), "ftp://example.com/", nil, nil); err == nil || !strings.Contains(err.Error(), "scheme") {
		t.Errorf("Post() to an ftp URL: error = %v, want one about the scheme", err)
	}
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Post(canceled, srv.URL, nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Post() with a canceled context: error = %v, want context.Canceled", err)
	}
	// A port nothing listens on: take one from a listener, then close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	res, err := c.Post(t.Context(), "http://"+closed+"/", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "sending to "+closed) {
		t.Errorf("Post() to a closed port = %+v, %v; want an error naming the destination", res, err)
	}
	t.Logf("Post() to a closed port: %v", err)
	if res.Latency <= 0 {
		t.Errorf("Post() to a closed port = %+v, want the latency set even on error", res)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server got %d requests, want none", n)
	}
}

func TestResultOK(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]bool{0: false, 100: false, 199: false, 200: true, 202: true, 204: true, 299: true, 300: false, 302: false, 404: false, 500: false} {
		if got := (outbound.Result{Status: status}).OK(); got != want {
			t.Errorf("Result{Status: %d}.OK() = %v, want %v", status, got, want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	valid := []string{
		"https://example.com",
		"https://example.com/hooks?token=abc&x=1",
		"http://example.com:8080/hooks",
		"https://[2606:4700::1]/hooks",
		"HTTPS://EXAMPLE.COM/",
		"https://example.com/" + strings.Repeat("a", outbound.MaxURLLength-len("https://example.com/")),
	}
	for _, raw := range valid {
		if _, err := outbound.CheckURL(raw); err != nil {
			t.Errorf("CheckURL(%q) = %v, want nil", raw, err)
		}
	}
	invalid := map[string]string{
		"":                               "url: a URL is required",
		"ftp://example.com/":             "url: the scheme must be https or http",
		"javascript:alert(1)":            "url: the scheme must be https or http",
		"example.com/hooks":              "url: the scheme must be https or http",
		"//example.com/hooks":            "url: the scheme must be https or http",
		"https:///hooks":                 "url: a host is required",
		"https:example.com":              "url: a host is required",
		"https://:443/":                  "url: a host is required",
		"https://user:pass@example.com/": "url: the URL must not contain a user name or password",
		"https://user@example.com/":      "url: the URL must not contain a user name or password",
		"https://example.com/#section":   "url: the URL must not contain a fragment",
		"https://example.com/#":          "url: the URL must not contain a fragment",
		"https://example.com:0/":         "url: the port 0 is not between 1 and 65535",
		"https://example.com:70000/":     "url: the port 70000 is not between 1 and 65535",
		"https://example.com:x/":         "url: not a valid URL",
		"https://exa mple.com/":          "url: not a valid URL",
		"https://example.com/\n":         "url: not a valid URL",
		"https://example.com/" + strings.Repeat("a", outbound.MaxURLLength): "url: the URL is 2068 characters; at most 2048 are allowed",
	}
	for raw, want := range invalid {
		if _, err := outbound.CheckURL(raw); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("CheckURL(%q) = %v, want an error starting %q", raw, err, want)
		}
	}
}

func TestPublic(t *testing.T) {
	t.Parallel()
	refused := []string{
		"127.0.0.1", "127.255.255.254", "::1", // loopback
		"10.0.0.1", "172.16.0.1", "192.168.1.1", "fc00::1", "fd12:3456::1", // private
		"169.254.169.254", "169.254.0.1", "fe80::1", "fe80::1%eth0", // link-local, cloud metadata
		"fd00:ec2::254",                 // AWS IPv6 metadata
		"100.64.0.1", "100.127.255.254", // carrier-grade NAT
		"0.0.0.0", "0.1.2.3", "::", // unspecified, "this network"
		"224.0.0.1", "239.255.255.250", "ff02::1", "ff05::2", // multicast
		"255.255.255.255", "240.0.0.1", // broadcast, reserved
		"192.0.0.8", "192.0.2.1", "198.18.0.1", "198.51.100.1", "203.0.113.1", "2001:db8::1", "100::1", // special purpose
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:100.64.0.1", // IPv4-mapped
		"::127.0.0.1", "::10.0.0.1", // IPv4-compatible (deprecated)
		"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::1", // NAT64 of loopback, metadata; local-use NAT64
		"2002:7f00:1::1", "2002:a00:1::", // 6to4 of loopback and private
		"2001::1",        // Teredo
		"4000::1", "::2", // outside 2000::/3
	}
	for _, s := range refused {
		if outbound.Public(netip.MustParseAddr(s)) {
			t.Errorf("Public(%s) = true, want false", s)
		}
	}
	allowed := []string{
		"93.184.216.34", "8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.1", "172.32.0.1", "11.0.0.1",
		"2606:4700::1", "2a00:1450:4001::200e", "::ffff:93.184.216.34", "64:ff9b::5db8:d822", "2002:5db8:d822::1",
	}
	for _, s := range allowed {
		if !outbound.Public(netip.MustParseAddr(s)) {
			t.Errorf("Public(%s) = false, want true", s)
		}
	}
	if outbound.Public(netip.Addr{}) {
		t.Error("Public(the zero Addr) = true, want false")
	}
}

func TestCheckDestination(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	check := func(c *outbound.Client, raw string) error {
		u, err := outbound.CheckURL(raw)
		if err != nil {
			t.Fatal(err)
		}
		return c.CheckDestination(ctx, u)
	}
	strict, loose := &outbound.Client{}, &outbound.Client{AllowLoopback: true}

	for _, raw := range []string{"https://93.184.216.34/", "https://[2606:4700::1]:8443/"} {
		if err := check(strict, raw); err != nil {
			t.Errorf("CheckDestination(%s) = %v, want nil", raw, err)
		}
	}
	for _, tc := range []struct {
		c        *outbound.Client
		raw      string
		wantAddr string
	}{
		{strict, "http://127.0.0.1:8080/", "127.0.0.1"},
		{strict, "http://[::1]/", "::1"},
		{strict, "http://169.254.169.254/latest/meta-data/", "169.254.169.254"},
		{loose, "http://169.254.169.254/latest/meta-data/", "169.254.169.254"},
		{loose, "http://10.0.0.1/", "10.0.0.1"},
		{loose, "http://[fd00:ec2::254]/", "fd00:ec2::254"},
		{loose, "http://[::ffff:10.0.0.1]/", "::ffff:10.0.0.1"},
	} {
		err := check(tc.c, tc.raw)
		var destErr *outbound.DestinationError
		if !errors.As(err, &destErr) || destErr.Addr.String() != tc.wantAddr {
			t.Errorf("CheckDestination(%s) with AllowLoopback %v = %v, want a *DestinationError for %s", tc.raw, tc.c.AllowLoopback, err, tc.wantAddr)
		}
	}
	if err := check(loose, "http://127.0.0.1/"); err != nil {
		t.Errorf("CheckDestination(127.0.0.1) with AllowLoopback = %v, want nil", err)
	}

	// A name is refused if any one of its addresses is not public.
	mixed := &outbound.Client{Resolver: fakeDNS(t, func(int) []netip.Addr {
		return []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.7")}
	})}
	err := check(mixed, "https://mixed.example.com/")
	want := "the destination mixed.example.com resolves to 10.0.0.7, a private/loopback/link-local address; webhooks are sent only to public addresses"
	if err == nil || err.Error() != want {
		t.Errorf("CheckDestination(a name with a public and a private address) = %v, want %q", err, want)
	}
	public := &outbound.Client{Resolver: fakeDNS(t, func(int) []netip.Addr {
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}
	})}
	if err := check(public, "https://public.example.com/"); err != nil {
		t.Errorf("CheckDestination(a name with a public address) = %v, want nil", err)
	}
	nowhere := &outbound.Client{Resolver: fakeDNS(t, func(int) []netip.Addr { return nil })}
	if err := check(nowhere, "https://nowhere.example.com/"); err == nil || !strings.Contains(err.Error(), "nowhere.example.com does not resolve") {
		t.Errorf("CheckDestination(a name without addresses) = %v, want an error saying it does not resolve", err)
	}
}

// TestPostRechecksAddressesWhenDialling has a name resolve to a public
// address when CheckDestination looks and to the test server's loopback
// address when the connection is dialled (DNS rebinding): the dialer's own
// check must refuse it. Without that check the request would reach the
// server.
func TestPostRechecksAddressesWhenDialling(t *testing.T) {
	t.Parallel()
	srv, hits := server(t, func(w http.ResponseWriter, r *http.Request) {})
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	loopback := netip.MustParseAddr("127.0.0.1")

	// As a control, a name resolving to loopback reaches the server through
	// the Client's resolver when loopback is allowed.
	c := &outbound.Client{AllowLoopback: true, Resolver: fakeDNS(t, func(int) []netip.Addr { return []netip.Addr{loopback} })}
	if res, err := c.Post(t.Context(), "http://hooks.example.com:"+strconv.Itoa(port)+"/", nil, nil); err != nil || !res.OK() {
		t.Fatalf("Post() through the fake resolver = %+v, %v; want status 200", res, err)
	}
	if hits.Load() != 1 {
		t.Fatalf("the server got %d requests, want 1", hits.Load())
	}

	rebinding := fakeDNS(t, func(query int) []netip.Addr {
		if query == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}
		}
		return []netip.Addr{loopback}
	})
	c = &outbound.Client{Resolver: rebinding}
	res, err := c.Post(t.Context(), "http://rebind.example.com:"+strconv.Itoa(port)+"/", nil, nil)
	var destErr *outbound.DestinationError
	if !errors.As(err, &destErr) || destErr.Addr != loopback || destErr.Host != "rebind.example.com" {
		t.Fatalf("Post() to a rebinding name = %+v, %v; want a *DestinationError for rebind.example.com at 127.0.0.1", res, err)
	}
	if hits.Load() != 1 {
		t.Errorf("the server got %d requests, want the one from the control", hits.Load())
	}
}

// fakeDNS returns a resolver that answers the n-th A query (counting from 1)
// for any name with the IPv4 addresses of answer(n), and AAAA queries with
// the IPv6 addresses of answer for the latest A query. It speaks DNS over an in-memory
// stream, so no socket or real DNS server is involved.
func fakeDNS(t *testing.T, answer func(n int) []netip.Addr) *net.Resolver {
	t.Helper()
	var aQueries atomic.Int32
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			client, srv := net.Pipe()
			go serveFakeDNS(srv, func(qtype uint16) []netip.Addr {
				if qtype == typeA {
					return answer(int(aQueries.Add(1)))
				}
				// AAAA: answer from the latest A round, without counting.
				return answer(max(int(aQueries.Load()), 1))
			})
			return client, nil
		},
	}
}

const (
	typeA    = 1
	typeAAAA = 28
)

// serveFakeDNS answers DNS-over-TCP-framed queries on conn until it closes.
func serveFakeDNS(conn net.Conn, answer func(qtype uint16) []netip.Addr) {
	defer conn.Close()
	for {
		var size [2]byte
		if _, err := io.ReadFull(conn, size[:]); err != nil {
			return
		}
		query := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(conn, query); err != nil || len(query) < 12 {
			return
		}
		// The question: a name as labels ending in a zero byte, then type and class.
		end := 12
		for end < len(query) && query[end] != 0 {
			end += int(query[end]) + 1
		}
		end += 5
		if end > len(query) {
			return
		}
		question := query[12:end]
		qtype := binary.BigEndian.Uint16(query[end-4 : end-2])

		var answers [][]byte
		for _, addr := range answer(qtype) {
			var rtype uint16
			var data []byte
			switch {
			case qtype == typeA && addr.Is4():
				rtype, data = typeA, addr.AsSlice()
			case qtype == typeAAAA && addr.Is6():
				rtype, data = typeAAAA, addr.AsSlice()
			default:
				continue
			}
			rr := []byte{0xc0, 12} // a pointer to the question's name
			rr = binary.BigEndian.AppendUint16(rr, rtype)
			rr = binary.BigEndian.AppendUint16(rr, 1) // class IN
			rr = binary.BigEndian.AppendUint32(rr, 0) // TTL
			rr = binary.BigEndian.AppendUint16(rr, uint16(len(data)))
			answers = append(answers, append(rr, data...))
		}

		resp := append([]byte{}, query[:2]...) // the query's id
		resp = append(resp, 0x85, 0x80)        // a response, authoritative, recursion desired and available, no error
		resp = binary.BigEndian.AppendUint16(resp, 1)
		resp = binary.BigEndian.AppendUint16(resp, uint16(len(answers)))
		resp = binary.BigEndian.AppendUint32(resp, 0) // no authority or additional records
		resp = append(resp, question...)
		for _, rr := range answers {
			resp = append(resp, rr...)
		}
		framed := binary.BigEndian.AppendUint16(nil, uint16(len(resp)))
		if _, err := conn.Write(append(framed, resp...)); err != nil {
			return
		}
	}
}
