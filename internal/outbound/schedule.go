package outbound

import (
	"math"
	"time"
)

// Schedule is the wait before each retry of a failed delivery: Schedule[0]
// before retry 1, up to Schedule[6] before retry 7. The first attempt is
// immediate, so a delivery gets at most 1+len(Schedule) = 8 attempts spread
// over about 27.5 hours, long enough to ride out an endpoint's outage of
// most of a day.
//
// The waits are exact, without jitter: the documentation and tests state the
// schedule, and a receiver's owner can predict when the next attempt comes.
// Retries of different deliveries are already spread out by when their first
// attempts happened, so jitter would buy little.
var Schedule = []time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}

// NextRetry returns how long to wait before the next attempt of a delivery
// whose first attempts failed attempts times, multiplied by scale (tests pass
// a small scale to compress time; scale <= 0 means 1). It returns false when
// the schedule is exhausted, that is after 1+len(Schedule) failed attempts.
// With no failed attempts (attempts <= 0) the next attempt is the first one,
// which is immediate.
func NextRetry(attempts int, scale float64) (time.Duration, bool) {
	if attempts <= 0 {
		return 0, true
	}
	if attempts > len(Schedule) {
		return 0, false
	}
	if !(scale > 0) { // also catches NaN
		scale = 1
	}
	wait := float64(Schedule[attempts-1]) * scale
	if wait >= math.MaxInt64 {
		return time.Duration(math.MaxInt64), true
	}
	return time.Duration(wait), true
}
