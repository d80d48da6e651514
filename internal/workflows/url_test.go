package workflows

import "testing"

// A Lambda function URL ends with "/" (https://<id>.lambda-url.<region>.on.aws/):
// the infrastructure passes it as the webhook base as it is.
func TestTriggerURLsJoinABaseEndingWithASlashWithoutADoubleSlash(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"https://abc.lambda-url.us-east-1.on.aws/", "https://abc.lambda-url.us-east-1.on.aws"} {
		s := NewService(nil, base)
		got := s.view(&record{Workflow: Workflow{Trigger: WebhookTrigger{Slug: "wh_1"}}}).Trigger.URL
		if want := "https://abc.lambda-url.us-east-1.on.aws/webhooks/workflows/wh_1"; got != want {
			t.Errorf("base %q: trigger url = %q, want %q", base, got, want)
		}
	}
}
