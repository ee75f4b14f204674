package server

import (
	"sync"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// maxInflight bounds the attempts the server remembers. Past it, new claims
// are not remembered and their results are counted under queue and kind
// "unknown": memory stays bounded whatever the workers do.
const maxInflight = 1_000_000

// forgetAfter is how long after its lease expired an attempt is forgotten,
// and how long a silent worker stays listed.
const forgetAfter = time.Minute

// inflight remembers the attempts this server handed out, so that a result,
// which names only (id, attempt), can be counted by queue and kind and its
// run time measured. It is only for observing: fencing never depends on
// it, and after a restart (or with several servers behind a balancer)
// results it does not know are still written, just counted as unknown.
// What each worker holds is the store's to say (the worker registry and
// the leases, which the dashboard shows), not this server's memory of the
// claims it served.
type inflight struct {
	mu       sync.Mutex
	attempts map[int64]*attemptInfo
}

// attemptInfo is one attempt handed out.
type attemptInfo struct {
	id      int64
	attempt int
	// token is the lease token of the claim, so that a heartbeat naming
	// the attempt with another token (a forgery, which the store reports
	// lost) does not make the server forget the real worker's attempt.
	token       drovertype.LeaseToken
	queue, kind string
	worker      string
	started     time.Time
	expires     time.Time
	// metadata is kept only when tracing is on, to link the run's span
	// to the span that enqueued the job.
	metadata []byte
}

func newInflight() *inflight {
	return &inflight{attempts: map[int64]*attemptInfo{}}
}

// claimed records the attempts of one claim.
func (f *inflight) claimed(worker string, attempts []attemptInfo) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, a := range attempts {
		if len(f.attempts) >= maxInflight {
			return
		}
		a.worker = worker
		f.attempts[a.id] = &a
	}
}

// finished forgets the attempt of id if it is the one named, and returns
// what was known of it.
func (f *inflight) finished(id int64, attempt int) (attemptInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.attempts[id]
	if !ok || a.attempt != attempt {
		return attemptInfo{}, false
	}
	delete(f.attempts, id)
	return *a, true
}

// extended moves the expiry of attempts a heartbeat kept, and forgets those
// it reported lost. Only attempts named with the token they were claimed
// with count: the store reports a forged attempt lost, and that must not
// end the record of the worker that really holds it.
func (f *inflight) extended(refs []drover.AttemptRef, lost []int64, expires time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	named := make(map[int64]bool, len(refs))
	for _, r := range refs {
		a, ok := f.attempts[r.ID]
		if !ok || a.attempt != r.Attempt || a.token != r.LeaseToken {
			continue
		}
		named[r.ID] = true
		a.expires = expires
	}
	for _, id := range lost {
		if named[id] {
			delete(f.attempts, id)
		}
	}
}

// sweep forgets attempts whose lease expired a while ago (their worker
// died; the rescuer has them).
func (f *inflight) sweep(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, a := range f.attempts {
		if now.Sub(a.expires) > forgetAfter {
			delete(f.attempts, id)
		}
	}
}
