package apitest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/dev/apitest"
	"github.com/sourcebase/sourcebase/internal/inbound"
)

// BenchmarkWebhookToCompleted measures, on the in-process engine, the time
// from posting a signed webhook to the run being completed as seen through
// GET /v1/workflow-runs/{id}: accept (trigger read, verify, run write),
// execute (mark running, workflow read, an upsertCompany step, outcome
// write) and the polling that notices it. Reported as ms/run.
func BenchmarkWebhookToCompleted(b *testing.B) {
	env := apitest.New(b)
	admin := env.Org(b)
	res := admin.Do("POST", "/v1/workflows", map[string]any{
		"name":    "bench",
		"trigger": map[string]any{"scheme": "hmac-sha256"},
		"steps": []any{map[string]any{"id": "up", "type": "upsertCompany",
			"with": map[string]any{"canonicalName.$": "$.input.webhook.payload.name"}}},
	}).Want(b, http.StatusCreated)
	trig := res.Object(b)["trigger"].(map[string]any)
	hook := env.Anonymous(b)
	path := "/webhooks/workflows/" + trig["slug"].(string)
	secret := trig["secret"].(string)

	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		body := []byte(`{"name":"Company ` + strings.Repeat("x", i%7) + `"}`)
		r := hook.Do("POST", path, body, "X-Hub-Signature", inbound.Sign(secret, body)).Want(b, http.StatusAccepted)
		id := r.Object(b)["id"].(string)
		for {
			var run struct {
				Data struct{ Status string } `json:"data"`
			}
			_ = json.Unmarshal(admin.Do("GET", "/v1/workflow-runs/"+id, nil).Body, &run)
			if run.Data.Status == "completed" {
				break
			}
			if run.Data.Status == "failed" {
				b.Fatalf("run failed: %s", id)
			}
			time.Sleep(time.Millisecond)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/run")
}
