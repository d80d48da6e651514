package outbound_test

import (
	"math"
	"testing"
	"time"

	"github.com/sourcebase/sourcebase/internal/outbound"
)

func TestNextRetry(t *testing.T) {
	t.Parallel()
	if len(outbound.Schedule) != 7 {
		t.Fatalf("Schedule has %d waits, want 7", len(outbound.Schedule))
	}
	if wait, ok := outbound.NextRetry(0, 1); !ok || wait != 0 {
		t.Errorf("NextRetry(0, 1) = %v, %v; want the first attempt immediately", wait, ok)
	}

	var total time.Duration
	for attempts := 1; attempts <= 7; attempts++ {
		wait, ok := outbound.NextRetry(attempts, 1)
		if !ok || wait != outbound.Schedule[attempts-1] {
			t.Errorf("NextRetry(%d, 1) = %v, %v; want %v, true", attempts, wait, ok, outbound.Schedule[attempts-1])
		}
		if attempts > 1 && wait < outbound.Schedule[attempts-2] {
			t.Errorf("NextRetry(%d, 1) = %v, shorter than the wait before it", attempts, wait)
		}
		total += wait
	}
	if total < 20*time.Hour || total > 40*time.Hour {
		t.Errorf("the retries span %v, want about a day (20h to 40h)", total)
	}
	for _, attempts := range []int{8, 9, 100} {
		if wait, ok := outbound.NextRetry(attempts, 1); ok {
			t.Errorf("NextRetry(%d, 1) = %v, true; want the schedule exhausted", attempts, wait)
		}
	}

	// A scale compresses the schedule; a scale that is not positive is 1.
	var scaled time.Duration
	for attempts := 1; attempts <= 7; attempts++ {
		wait, ok := outbound.NextRetry(attempts, 1.0/3600)
		if !ok {
			t.Fatalf("NextRetry(%d, 1/3600) exhausted early", attempts)
		}
		scaled += wait
	}
	if want := total / 3600; scaled < want-time.Millisecond || scaled > want+time.Millisecond {
		t.Errorf("the retries span %v at scale 1/3600, want about %v", scaled, want)
	}
	if _, ok := outbound.NextRetry(8, 1.0/3600); ok {
		t.Error("NextRetry(8, 1/3600) = true; want the schedule exhausted whatever the scale")
	}
	for _, scale := range []float64{0, -1, math.NaN()} {
		if wait, _ := outbound.NextRetry(2, scale); wait != 5*time.Minute {
			t.Errorf("NextRetry(2, %v) = %v, want the unscaled 5m", scale, wait)
		}
	}
	if wait, ok := outbound.NextRetry(7, math.Inf(1)); !ok || wait != time.Duration(math.MaxInt64) {
		t.Errorf("NextRetry(7, +Inf) = %v, %v; want the longest Duration", wait, ok)
	}
}
