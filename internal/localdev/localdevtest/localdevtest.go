// Package localdevtest helps the tests of the local servers (`make run`,
// `make run-lambdas`): a clean environment and the banner's fields.
package localdevtest

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/sourcebase/sourcebase/internal/app"
)

// IsolateEnv clears the AWS and service environment for a local server's
// run (t.Setenv restores it afterwards): free ports, and with
// AWS_ENDPOINT_URL_DYNAMODB unset the server starts its own DynamoDB Local
// with its own dummy credentials; no profile or credentials file is read.
func IsolateEnv(t *testing.T) {
	t.Helper()
	none := filepath.Join(t.TempDir(), "none")
	vars := map[string]string{
		"PORT":                        "0",
		"DYNAMODB_PORT":               "0",
		"AWS_ENDPOINT_URL_DYNAMODB":   "",
		"AWS_ENDPOINT_URL_SFN":        "",
		"AWS_ENDPOINT_URL":            "",
		"AWS_ACCESS_KEY_ID":           "",
		"AWS_SECRET_ACCESS_KEY":       "",
		"AWS_SESSION_TOKEN":           "",
		"AWS_REGION":                  "",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             none,
		"AWS_SHARED_CREDENTIALS_FILE": none,
		"AWS_EC2_METADATA_DISABLED":   "",
	}
	// Every variable of the service's configuration.
	for k := range app.DefaultConfig().Env() {
		vars[k] = ""
	}
	for _, k := range []string{app.EnvStateMachineARN, app.EnvWebhookBaseURL, app.EnvSearchEngine,
		app.EnvOpenSearchEndpoint, app.EnvOpenSearchService, app.EnvOpenSearchIndexPrefix} {
		vars[k] = ""
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
}

// BannerField returns the first group of pattern in a server's banner.
func BannerField(t *testing.T, banner, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("no %s in the banner:\n%s", pattern, banner)
	}
	return m[1]
}
