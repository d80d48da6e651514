package eventsapi_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

// Issue 45, item 13: an endpoint whose host does not resolve yet is saved,
// as Svix, Stripe and GitHub save it, and the answer says the host does not
// resolve now; an address deliveries may not reach is still refused. The
// resolver is the test's own, which finds nothing: no name is sent to a
// network's DNS.
func TestAnEndpointWhoseHostDoesNotResolveYetIsSavedWithAWarning(t *testing.T) {
	t.Parallel()
	nowhere := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS server here")
	}}
	c := apitest.NewWith(t, apitest.Options{Resolver: nowhere}).Org(t)
	ep := c.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": "https://hooks.not-yet-set-up.example/in"}).Want(t, 201).Object(t)
	warning, _ := ep["warning"].(string)
	if !strings.Contains(warning, "hooks.not-yet-set-up.example") || !strings.Contains(warning, "each delivery resolves it again") {
		t.Errorf("created endpoint %s, want a warning naming the host", apitest.JSONOf(ep))
	}
	got := c.Do("GET", "/v1/webhook-endpoints/"+apitest.IDOf(t, ep), nil).Want(t, 200).Object(t)
	if _, ok := got["warning"]; ok || got["url"] != "https://hooks.not-yet-set-up.example/in" {
		t.Errorf("the endpoint as read: %s (a warning is the write's answer only)", apitest.JSONOf(got))
	}
	upd := c.Do("PATCH", "/v1/webhook-endpoints/"+apitest.IDOf(t, ep), map[string]any{"description": "later"}).Object(t)
	if _, ok := upd["warning"]; ok {
		t.Errorf("an update that leaves the url alone warns: %s", apitest.JSONOf(upd))
	}
	c.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": "https://10.1.2.3/in"}).Want(t, 400)
}
