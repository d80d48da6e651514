// Package localdevtest helps the tests of the local servers (`make run`,
// `make run-lambdas`): a clean environment and the banner's fields.
package localdevtest

import (
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sourcebase/sourcebase/internal/dev/portowner"
	"github.com/sourcebase/sourcebase/internal/service"
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
		"SFN_PORT":                    "0",
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
	for k := range service.DefaultConfig().Env() {
		vars[k] = ""
	}
	for _, k := range []string{service.EnvStateMachineARN, service.EnvWebhookBaseURL, service.EnvSearchEngine,
		service.EnvOpenSearchEndpoint, service.EnvOpenSearchService, service.EnvOpenSearchIndexPrefix} {
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

// OnlyLoopbackListeners fails the test naming every listening TCP socket of
// process pid and its descendants that is not bound to a loopback address
// (on 0.0.0.0, ::, or an interface's address, anyone who can reach the
// machine could connect), and returns the sockets it found. It skips
// where there is no /proc to list them from.
func OnlyLoopbackListeners(t *testing.T, pid int) []portowner.Listener {
	t.Helper()
	ls, err := portowner.Listeners(pid)
	if errors.Is(err, portowner.ErrNoProc) {
		t.Skip("no /proc to list the listening sockets from")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("listening: %v", ls)
	var open []string
	for _, l := range ls {
		if !l.Loopback() {
			open = append(open, l.String())
		}
	}
	if len(open) > 0 {
		t.Errorf("listening on more than loopback: %s\n(every listening socket: %v)", strings.Join(open, ", "), ls)
	}
	return ls
}
