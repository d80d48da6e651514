package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
)

func TestTheMCPToolListEventsReadsOnlyItsOrganizationsHistory(t *testing.T) {
	t.Parallel()
	e, evs := apitest.EventsEnv(t)
	a, b := e.Org(t), e.Org(t)
	mine := a.Do("POST", "/v1/deals", map[string]any{"name": "Mine"}).Want(t, 201).Object(t)
	theirs := b.Do("POST", "/v1/deals", map[string]any{"name": "Theirs"}).Want(t, 201).Object(t)
	apitest.Caught(t, evs)
	s := mcpSession(t, e, a)
	out, _ := call(t, s, "list_events", map[string]any{"resourceType": "deal", "limit": 10}, false)
	body := fmt.Sprint(out)
	if !strings.Contains(body, mine["id"].(string)) || strings.Contains(body, theirs["id"].(string)) {
		t.Fatalf("list_events of A: %s", body)
	}
	none, _ := call(t, s, "list_events", map[string]any{"resourceId": theirs["id"]}, false)
	if strings.Contains(fmt.Sprint(none), "Theirs") {
		t.Fatalf("list_events of A reads B's deal: %v", none)
	}
	call(t, s, "list_events", map[string]any{"type": "planet.*"}, true)
}
