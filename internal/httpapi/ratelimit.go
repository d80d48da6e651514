package httpapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/sourcebase/sourcebase/internal/apperr"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
)

// Rate limit headers, on every answer a limit counted (GitHub's names):
// the requests a window allows, those left in it, and the seconds until
// it starts again.
const (
	HeaderRateLimit     = "X-RateLimit-Limit"
	HeaderRateRemaining = "X-RateLimit-Remaining"
	HeaderRateReset     = "X-RateLimit-Reset"
)

// The rate headers' canonical keys, as net/http writes them.
var (
	rateLimitKey     = http.CanonicalHeaderKey(HeaderRateLimit)
	rateRemainingKey = http.CanonicalHeaderKey(HeaderRateRemaining)
	rateResetKey     = http.CanonicalHeaderKey(HeaderRateReset)
)

// limited names what a limit of each scope limits, as a 429 says it.
var limited = map[string]string{
	ratelimit.ScopeKey:          "this API key",
	ratelimit.ScopeOrganization: "this organization",
	ratelimit.ScopeWebhook:      "this webhook trigger",
}

// LimitedBy names what the limit that decided d limits ("this API key",
// "this organization", "this webhook trigger"); who when d does not say.
func LimitedBy(d ratelimit.Decision, who string) string {
	if s, ok := limited[d.Scope]; ok {
		return s
	}
	return who
}

// RateLimit writes d's headers (those of the limit that decided: the one
// that refused, or the tighter of two that allowed) and, when d refuses the
// request, the 429 answer (with Retry-After) naming the limit that refused
// (LimitedBy; who when d names none); it reports whether the request may
// go on.
func RateLimit(w http.ResponseWriter, d ratelimit.Decision, who string) bool {
	reset := RateLimitHeaders(w, d)
	if d.Allowed {
		return true
	}
	w.Header().Set("Retry-After", strconv.FormatInt(reset, 10))
	Refuse(w, apperr.CodeRateLimited, "", fmt.Sprintf(
		"Too many requests for %s: the limit is %d a minute; try again in %d seconds.", LimitedBy(d, who), d.Limit, reset))
	return false
}

// RateLimitHeaders writes d's headers and returns the seconds until its
// window starts again: for an answer that counts more than once (a
// batch's operations), the last count's.
func RateLimitHeaders(w http.ResponseWriter, d ratelimit.Decision) int64 {
	reset := int64((d.Reset + time.Second - 1) / time.Second)
	h := w.Header()
	// Assigned under their canonical keys: Set would allocate each
	// key's canonical form (X-Ratelimit-Limit) on every response.
	h[rateLimitKey] = []string{strconv.FormatInt(d.Limit, 10)}
	h[rateRemainingKey] = []string{strconv.FormatInt(d.Remaining, 10)}
	h[rateResetKey] = []string{strconv.FormatInt(reset, 10)}
	return reset
}
