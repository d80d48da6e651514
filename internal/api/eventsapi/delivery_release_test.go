package eventsapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/dev/testenv"
)

// A record's later deliveries wait behind its failed one until that one's
// retry; a manual retry of it that succeeds releases them at once: the
// second event of the record reaches the endpoint right after the retry,
// not at the first delivery's retry (14 hours away here), and while it is
// being delivered it shows as due, not without a time.
func TestASuccessfulManualRetryReleasesTheRecordsLaterDeliveriesAtOnce(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	e.Deps.Endpoints.Scale = 1e4 // the first retry 5 s × 10,000 later: past any wait of the test
	admin := e.Org(t)
	inFlight, proceed := make(chan struct{}), make(chan struct{})
	recv := apitest.NewReceiver(t, func(n int, w http.ResponseWriter) {
		switch n {
		case 1: // the first event's delivery: the receiver is down
			w.WriteHeader(http.StatusServiceUnavailable)
		case 3: // the second event's, released: held open while the test looks at it
			close(inFlight)
			select {
			case <-proceed:
			case <-time.After(testenv.Scaled(60 * time.Second)):
			}
			w.WriteHeader(http.StatusNoContent)
		default: // the manual retry of the first: the receiver is back
			w.WriteHeader(http.StatusNoContent)
		}
	})
	ep := admin.Do("POST", "/v1/webhook-endpoints", map[string]any{"url": recv.URL, "eventTypes": []string{"company.*"}}).Want(t, 201).Object(t)
	deliveries := "/v1/webhook-endpoints/" + apitest.IDOf(t, ep) + "/deliveries"
	co := admin.Do("POST", "/v1/companies", map[string]any{"canonicalName": "Held Co"}).Want(t, 201).Object(t)
	recv.Wait(t, 1) // the first event's delivery has failed: the record's next one waits behind it
	admin.Do("PUT", "/v1/companies/"+apitest.IDOf(t, co), map[string]any{"description": "Second."}).Want(t, 200)
	apitest.Caught(t, evs)

	var first, second map[string]any
	apitest.WaitFor(t, "the record's two deliveries, the first failed and waiting for its retry", func() bool {
		list := admin.Do("GET", deliveries, nil).Want(t, 200).List(t) // newest first
		if len(list) != 2 {
			return false
		}
		second, first = list[0], list[1]
		return len(first["attempts"].([]any)) == 1 && first["nextAttemptAt"] != nil
	})
	if first["eventType"] != "company.created" || second["eventType"] != "company.updated" || second["status"] != "pending" ||
		len(second["attempts"].([]any)) != 0 {
		t.Fatalf("the deliveries: first %s, second %s; want the created one failed and the updated one pending", apitest.JSONOf(first), apitest.JSONOf(second))
	}
	if got := len(recv.All()); got != 1 {
		t.Fatalf("the endpoint had %d requests before the retry, want the first delivery's one (the second waits)", got)
	}

	admin.Do("POST", deliveries+"/"+apitest.IDOf(t, first)+"/retry", nil).Want(t, 202)
	select {
	case <-inFlight:
	case <-time.After(testenv.Scaled(60 * time.Second)):
		t.Fatalf("the record's second delivery was not released by the successful retry; the endpoint had %d requests", len(recv.All()))
	}
	reqs := recv.All()
	if reqs[1].Header.Get("webhook-id") != apitest.IDOf(t, first) || reqs[2].Header.Get("webhook-id") != apitest.IDOf(t, second) {
		t.Errorf("webhook-ids %q then %q, want the retried delivery then the released one", reqs[1].Header.Get("webhook-id"), reqs[2].Header.Get("webhook-id"))
	}
	// Being attempted, it is still pending: due, not without a time.
	released := deliveryOf(t, admin.Do("GET", deliveries, nil).Want(t, 200).List(t), apitest.IDOf(t, second))
	due, _ := released["nextAttemptAt"].(string)
	if at, err := time.Parse(time.RFC3339Nano, due); released["status"] != "pending" || err != nil || at.After(time.Now()) {
		t.Errorf("the released delivery, being attempted: %s; want it pending with a nextAttemptAt not in the future", apitest.JSONOf(released))
	}
	close(proceed)
	apitest.WaitFor(t, "the released delivery to succeed", func() bool {
		return deliveryOf(t, admin.Do("GET", deliveries, nil).Want(t, 200).List(t), apitest.IDOf(t, second))["status"] == "succeeded"
	})
	if d := deliveryOf(t, admin.Do("GET", deliveries, nil).Want(t, 200).List(t), apitest.IDOf(t, first)); d["status"] != "succeeded" || len(d["attempts"].([]any)) != 2 {
		t.Errorf("the retried delivery: %s, want succeeded after a failed and a manual attempt", apitest.JSONOf(d))
	}
}

// deliveryOf is the delivery with id in list.
func deliveryOf(t *testing.T, list []map[string]any, id string) map[string]any {
	t.Helper()
	for _, d := range list {
		if d["id"] == id {
			return d
		}
	}
	t.Fatalf("no delivery %s in %s", id, apitest.JSONOf(list))
	return nil
}
