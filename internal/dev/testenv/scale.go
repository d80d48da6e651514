package testenv

import (
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ScaleEnv names the environment variable that sets the one factor every
// wait and deadline of the tests is multiplied by (a positive number, such
// as 3 on a slow or shared machine).
const ScaleEnv = "SOURCEBASE_TEST_SCALE"

// maxAutoScale bounds the factor derived from the machine's load.
const maxAutoScale = 10

var scale = sync.OnceValue(func() float64 {
	if s, err := strconv.ParseFloat(os.Getenv(ScaleEnv), 64); err == nil && s > 0 && !math.IsInf(s, 0) {
		return s
	}
	return autoScale(loadAverage(), runtime.NumCPU())
})

// Scale is the factor of the tests' waits and deadlines: SOURCEBASE_TEST_SCALE
// when set; otherwise derived from the machine's load when the tests start
// (1 on an idle machine, 1 + the runnable processes per CPU on a busy one,
// at most 10), so that a suite started beside another still passes.
func Scale() float64 { return scale() }

// Scaled is d times Scale: every wait for something to happen and every
// deadline of a test goes through it. Waits that end as soon as what they
// wait for happens cost nothing more on an idle machine.
func Scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * Scale())
}

func autoScale(load float64, cpus int) float64 {
	if load <= 0 || cpus <= 0 {
		return 1
	}
	return math.Min(maxAutoScale, 1+math.Floor(load/float64(cpus)))
}

// loadAverage is the one-minute load average (Linux), 0 when unknown.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return v
}
