package bench

import (
	"context"
	"time"

	"github.com/droverhq/drover"
)

// Args are the arguments of the bench job kind. They describe the work a
// job simulates, so that one worker binary can run every scenario.
type Args struct {
	Seq int64 `json:"seq"`
	// At is when the producer inserted the job (Unix nanoseconds), so the
	// handler can record pickup latency without asking the store.
	At int64 `json:"at,omitempty"`
	// WorkNS sleeps this long, like a handler waiting on I/O.
	WorkNS int64 `json:"work_ns,omitempty"`
	// CPUNS spins this long, like a handler computing.
	CPUNS int64 `json:"cpu_ns,omitempty"`
	// Payload pads the args to a chosen size.
	Payload string `json:"payload,omitempty"`
}

// Kind implements drover.Args.
func (Args) Kind() string { return "drover.bench" }

// Workers returns the worker set that runs bench jobs.
func Workers() *drover.Workers {
	w := drover.NewWorkers()
	drover.AddWorker(w, drover.WorkFunc(work))
	drover.AddWorker(w, drover.WorkFunc(runSim))  // runs scenario (flow.go)
	drover.AddWorker(w, drover.WorkFunc(runStep)) // dag scenario (flow.go)
	return w
}

func work(ctx context.Context, j *drover.Job[Args]) error {
	if j.Args.At > 0 {
		pickup.Load().Record(time.Duration(time.Now().UnixNano() - j.Args.At))
	}
	if j.Args.CPUNS > 0 {
		spin(time.Duration(j.Args.CPUNS))
	}
	if j.Args.WorkNS > 0 {
		t := time.NewTimer(time.Duration(j.Args.WorkNS))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// spinSink keeps the compiler from removing the busy loop.
var spinSink uint64

// spin burns CPU for d, checking the clock every few thousand iterations
// so the check itself stays a small share of the work.
func spin(d time.Duration) {
	end := time.Now().Add(d)
	x := uint64(88172645463325252)
	for time.Now().Before(end) {
		for range 2000 {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	spinSink += x
}
