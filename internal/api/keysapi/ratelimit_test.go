package keysapi_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/admin"
	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/inbound"
	"github.com/sourcebase/sourcebase/internal/ratelimit"
)

func TestAKeyOverItsLimitIs429WithRetryAfterWhileOtherKeysAndOrganizationsGoOn(t *testing.T) {
	t.Parallel()
	e, now := apitest.Limited(t)
	c := e.Org(t)
	apitest.SetLimits(t, e, c.Org, ratelimit.Limits{KeyPerMinute: 3, WebhookPerMinute: 10})
	for i := 1; i <= 3; i++ {
		r := c.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK)
		if got := r.Header.Get("X-RateLimit-Remaining"); got != strconv.Itoa(3-i) {
			t.Errorf("request %d: X-RateLimit-Remaining %q, want %d", i, got, 3-i)
		}
		if r.Header.Get("X-RateLimit-Limit") != "3" || r.Header.Get("X-RateLimit-Reset") != "55" {
			t.Errorf("request %d: limit %q reset %q", i, r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Reset"))
		}
	}
	r := c.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Over"})
	apitest.WantExactBody(t, r.Want(t, http.StatusTooManyRequests),
		`{"error":"Too many requests for this API key: the limit is 3 a minute; try again in 55 seconds."}`)
	if r.Header.Get("Retry-After") != "55" || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Errorf("Retry-After %q, remaining %q", r.Header.Get("Retry-After"), r.Header.Get("X-RateLimit-Remaining"))
	}
	// Nothing was written by the refused request.
	if n := len(c.Do("GET", "/v1/companies", nil).Want(t, http.StatusTooManyRequests).Body); n == 0 {
		t.Fatal("empty 429")
	}

	// Another key of the organization, and another organization, go on.
	other := e.Key(t, c.Org, "member")
	other.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK)
	e.Org(t).Do("GET", "/v1/companies", nil).Want(t, http.StatusOK)

	// The next minute lets the key through again; the refused create did
	// not happen.
	*now = now.Add(time.Minute)
	list := c.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK).List(t)
	if len(list) != 0 {
		t.Errorf("a refused create was stored: %v", list)
	}
}

func TestTwoInstancesOnOneTableTogetherGrantNoMoreThanTheLimit(t *testing.T) {
	t.Parallel()
	e, now := apitest.Limited(t)
	second := apitest.NewWith(t, apitest.Options{Store: e.Store})
	second.Deps.Limits.SetClock(func() time.Time { return *now })
	c := e.Org(t)
	apitest.SetLimits(t, e, c.Org, ratelimit.Limits{KeyPerMinute: 40, WebhookPerMinute: 10})
	c2 := *c
	c2.Base = second.URL
	var mu sync.Mutex
	granted := 0
	var wg sync.WaitGroup
	for _, client := range []*apitest.Client{c, &c2} {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 15 {
					if r := client.Do("GET", "/v1/keys", nil); r.Status == http.StatusOK {
						mu.Lock()
						granted++
						mu.Unlock()
					} else if r.Status != http.StatusTooManyRequests {
						t.Errorf("status %d: %s", r.Status, r.Body)
					}
				}
			}()
		}
	}
	wg.Wait()
	// 120 requests against a limit of 40: never more than 40, and at most
	// one lease per instance below it (the leases near the limit are 1).
	if granted > 40 || granted < 38 {
		t.Errorf("two instances granted %d requests of a limit of 40", granted)
	}
}

func TestAWebhookTriggerOverItsLimitIs429AndUnsignedRequestsDoNotSpendIt(t *testing.T) {
	t.Parallel()
	e, _ := apitest.Limited(t)
	c := e.Org(t)
	apitest.SetLimits(t, e, c.Org, ratelimit.Limits{KeyPerMinute: 100, WebhookPerMinute: 2})
	wf := c.Do("POST", "/v1/workflows", map[string]any{"name": "Limited"}).Want(t, http.StatusCreated).Object(t)
	trigger := wf["trigger"].(map[string]any)
	url, secret := trigger["url"].(string), trigger["secret"].(string)
	send := func(secret string) *apitest.Response {
		h := e.Anonymous(t)
		h.Base = ""
		return h.Do("POST", url, `{"a":1}`, inbound.SharedSecret.DefaultHeader(), secret)
	}
	for range 5 {
		send("wrong").Want(t, http.StatusUnauthorized)
	}
	for i := range 2 {
		if r := send(secret).Want(t, http.StatusAccepted); r.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(1-i) {
			t.Errorf("delivery %d: remaining %q", i, r.Header.Get("X-RateLimit-Remaining"))
		}
	}
	r := send(secret).Want(t, http.StatusTooManyRequests)
	apitest.WantExactBody(t, r, `{"error":"Too many requests for this webhook trigger: the limit is 2 a minute; try again in 55 seconds."}`)
	if r.Header.Get("Retry-After") != "55" {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
}

func TestAnOrganizationsLimitsAreValidated(t *testing.T) {
	t.Parallel()
	e, _ := apitest.Limited(t)
	c := e.Org(t)
	for _, l := range []ratelimit.Limits{{KeyPerMinute: 0, WebhookPerMinute: 1}, {KeyPerMinute: 1, WebhookPerMinute: ratelimit.MaxLimit + 1}} {
		if err := e.Deps.Limits.SetLimits(context.Background(), c.Org, l); err == nil {
			t.Errorf("limits %v were accepted", l)
		}
	}
}

func TestAnOrganizationOverItsLimitIs429NamingItAndTheHeadersReportTheTighterLimit(t *testing.T) {
	t.Parallel()
	e, _ := apitest.Limited(t)
	c := e.Org(t)
	other := e.Key(t, c.Org, "member")
	apitest.SetLimits(t, e, c.Org, ratelimit.Limits{KeyPerMinute: 5, OrganizationPerMinute: 3, WebhookPerMinute: 10})
	for i, k := range []*apitest.Client{c, other, c} {
		r := k.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK)
		if r.Header.Get("X-RateLimit-Limit") != "3" || r.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(2-i) {
			t.Errorf("request %d: limit %q remaining %q, want the organization's 3 with %d left",
				i+1, r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"), 2-i)
		}
	}
	for _, k := range []*apitest.Client{other, c} {
		r := k.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Over"})
		apitest.WantExactBody(t, r.Want(t, http.StatusTooManyRequests),
			`{"error":"Too many requests for this organization: the limit is 3 a minute; try again in 55 seconds."}`)
		if r.Header.Get("Retry-After") != "55" || r.Header.Get("X-RateLimit-Limit") != "3" || r.Header.Get("X-RateLimit-Remaining") != "0" {
			t.Errorf("Retry-After %q, limit %q, remaining %q", r.Header.Get("Retry-After"), r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"))
		}
	}

	// Where the key's limit is the tighter, the headers report it.
	d := e.Org(t)
	apitest.SetLimits(t, e, d.Org, ratelimit.Limits{KeyPerMinute: 2, OrganizationPerMinute: 100, WebhookPerMinute: 10})
	if r := d.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK); r.Header.Get("X-RateLimit-Limit") != "2" || r.Header.Get("X-RateLimit-Remaining") != "1" {
		t.Errorf("key limit 2 of 100 for the organization: limit %q remaining %q", r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"))
	}
}

func TestARaisedLimitAdmitsAKeyRefusedOnAnotherInstanceWithoutWaitingForTheWindow(t *testing.T) {
	t.Parallel()
	e, now := apitest.Limited(t)
	second := apitest.NewWith(t, apitest.Options{Store: e.Store})
	second.Deps.Limits.SetClock(func() time.Time { return *now })
	c := e.Org(t)
	c2 := *c
	c2.Base = second.URL
	operator := func(keyPerMinute, organizationPerMinute int64) {
		t.Helper()
		_, err := admin.Run(context.Background(), e.Store, admin.Request{Action: "set-limits", Org: c.Org,
			KeyPerMinute: keyPerMinute, OrganizationPerMinute: organizationPerMinute})
		if err != nil {
			t.Fatal(err)
		}
	}
	operator(2, 0)
	c.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK)
	c2.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK)
	for _, k := range []*apitest.Client{c, &c2} {
		k.Do("GET", "/v1/companies", nil).Want(t, http.StatusTooManyRequests)
	}
	operator(4, 0)
	*now = now.Add(ratelimit.RecheckEvery)
	for _, k := range []*apitest.Client{c, &c2} {
		if r := k.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK); r.Header.Get("X-RateLimit-Limit") != "4" {
			t.Errorf("after the raise: X-RateLimit-Limit %q, want 4", r.Header.Get("X-RateLimit-Limit"))
		}
	}
	for _, k := range []*apitest.Client{c, &c2} {
		k.Do("GET", "/v1/companies", nil).Want(t, http.StatusTooManyRequests)
	}

	// The organization's limit too.
	operator(100, 4)
	*now = now.Add(ratelimit.RecheckEvery)
	c.Do("GET", "/v1/companies", nil).Want(t, http.StatusTooManyRequests) // the organization has counted 4
	operator(0, 6)
	*now = now.Add(ratelimit.RecheckEvery)
	c2.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK)
	c.Do("GET", "/v1/companies", nil).Want(t, http.StatusOK)
	apitest.WantExactBody(t, c2.Do("GET", "/v1/companies", nil).Want(t, http.StatusTooManyRequests),
		`{"error":"Too many requests for this organization: the limit is 6 a minute; try again in 52 seconds."}`)
}
