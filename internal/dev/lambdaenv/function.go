package lambdaenv

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Function is a function's execution environments: concurrent invocations
// run in separate instances started on demand, an idle instance is
// reused, and one that crashed or timed out is replaced, as in Lambda.
type Function struct {
	opt Options

	mu         sync.Mutex
	idle       []*Instance
	all        []*Instance
	coldStarts []time.Duration
	inits      []time.Duration
	closed     bool
}

// ErrClosed is returned by Invoke after Close.
var ErrClosed = errors.New("lambdaenv: the function is closed")

// NewFunction returns a function that starts instances of opt.
func NewFunction(opt Options) *Function { return &Function{opt: opt} }

// Invoke runs payload in an idle instance, or a new one. A runtime that
// crashed or timed out is started again by its emulator on the next
// invocation, as Lambda starts a new environment.
//
// An emulator that crashed on its own race with a runtime that exits at
// start (ErrEmulatorCrashed) never delivered the event: the invocation is
// sent to a new instance, up to three times, as Lambda would have reported
// the runtime's exit instead.
func (f *Function) Invoke(ctx context.Context, payload []byte) (Result, error) {
	for attempt := 1; ; attempt++ {
		inst, err := f.acquire()
		if err != nil {
			return Result{}, err
		}
		cold := inst.ColdStart() == 0
		res, err := inst.Invoke(ctx, payload)
		f.release(inst, cold)
		if !errors.Is(err, ErrEmulatorCrashed) || attempt == 3 || ctx.Err() != nil {
			return res, err
		}
	}
}

func (f *Function) acquire() (*Instance, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, ErrClosed
	}
	if n := len(f.idle); n > 0 {
		inst := f.idle[n-1]
		f.idle = f.idle[:n-1]
		return inst, nil
	}
	inst, err := Start(f.opt)
	if err != nil {
		return nil, err
	}
	f.all = append(f.all, inst)
	return inst, nil
}

func (f *Function) release(inst *Instance, cold bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cold {
		if d := inst.ColdStart(); d > 0 {
			f.coldStarts = append(f.coldStarts, d)
			f.inits = append(f.inits, inst.InitDuration())
		}
	}
	if inst.Alive() && !f.closed {
		f.idle = append(f.idle, inst)
		return
	}
	for j, x := range f.all {
		if x == inst {
			f.all = append(f.all[:j], f.all[j+1:]...)
			break
		}
	}
	if !f.closed {
		go inst.Stop()
	}
}

// ColdStarts are the cold starts (emulator start to first response) of
// the instances started so far, in order.
func (f *Function) ColdStarts() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.coldStarts...)
}

// InitDurations are the inits of the instances started so far as their
// emulators reported them (INIT REPORT), in the order of ColdStarts.
func (f *Function) InitDurations() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.inits...)
}

// CPU is the CPU time the function's live instances have used so far
// (Instance.CPU): measured before and after warm invocations, it is their
// CPU per invocation.
func (f *Function) CPU() time.Duration {
	f.mu.Lock()
	all := append([]*Instance(nil), f.all...)
	f.mu.Unlock()
	var sum time.Duration
	for _, inst := range all {
		sum += inst.CPU()
	}
	return sum
}

// MaxMemory is the largest peak resident memory of the function's live
// runtimes (Instance.MaxMemory): what Lambda reports as Max Memory Used.
func (f *Function) MaxMemory() int64 {
	f.mu.Lock()
	all := append([]*Instance(nil), f.all...)
	f.mu.Unlock()
	var peak int64
	for _, inst := range all {
		peak = max(peak, inst.MaxMemory())
	}
	return peak
}

// Close stops every instance.
func (f *Function) Close() {
	f.mu.Lock()
	f.closed = true
	all := f.all
	f.all, f.idle = nil, nil
	f.mu.Unlock()
	for _, inst := range all {
		inst.Stop()
	}
}
