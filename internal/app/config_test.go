package app_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/app"
	"github.com/sourcebase/sourcebase/internal/store"
)

func TestStoreTimeoutDefaultsToTenSecondsAndRejectsValuesOutsideItsRange(t *testing.T) {
	for in, want := range map[string]time.Duration{"": store.DefaultCallTimeout, "5s": 5 * time.Second, "250ms": 250 * time.Millisecond, "25s": 25 * time.Second} {
		if got, err := app.ParseStoreTimeout(in); err != nil || got != want {
			t.Errorf("ParseStoreTimeout(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if store.DefaultCallTimeout != 10*time.Second {
		t.Errorf("default store timeout %v, want 10s", store.DefaultCallTimeout)
	}
	for _, in := range []string{"ten", "0s", "-1s", "50ms", "26s", "1m"} {
		if _, err := app.ParseStoreTimeout(in); err == nil || !strings.Contains(err.Error(), "STORE_TIMEOUT") {
			t.Errorf("ParseStoreTimeout(%q) = %v, want an error naming STORE_TIMEOUT", in, err)
		}
	}
}

func TestConfigFromEnvReadsStoreTimeout(t *testing.T) {
	t.Setenv("STORE_TIMEOUT", "3s")
	c, err := app.ConfigFromEnv()
	if err != nil || c.StoreTimeout != 3*time.Second {
		t.Fatalf("ConfigFromEnv = %+v, %v; want StoreTimeout 3s", c, err)
	}
	t.Setenv("STORE_TIMEOUT", "forever")
	if _, err := app.ConfigFromEnv(); err == nil {
		t.Fatal("ConfigFromEnv accepted STORE_TIMEOUT=forever")
	}
}

func TestEnvIsReadBackAsTheSameConfig(t *testing.T) {
	for _, c := range []app.Config{
		app.DefaultConfig(),
		{Table: "t1", CacheTTL: 0, StoreTimeout: 3 * time.Second, StateMachineARN: "arn:aws:states:eu-west-1:123456789012:stateMachine:runs", WebhookBaseURL: "https://hooks.example.com"},
	} {
		for k, v := range c.Env() {
			t.Setenv(k, v)
		}
		got, err := app.ConfigFromEnv()
		if err != nil || got != c {
			t.Errorf("ConfigFromEnv after Env() of %+v = %+v, %v", c, got, err)
		}
	}
}
