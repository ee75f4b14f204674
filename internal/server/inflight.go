package server

import (
	"github.com/droverhq/drover"
	"sort"
	"sync"
	"time"
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
// run time measured, and so that the dashboard can show each HTTP worker
// with what it holds and when it was last heard from. It is only for
// observing: fencing never depends on it, and after a restart (or with
// several servers behind a balancer) results it does not know are still
// written, just counted as unknown.
type inflight struct {
	mu       sync.Mutex
	attempts map[int64]*attemptInfo
	workers  map[string]*workerState
}

// attemptInfo is one attempt handed out.
type attemptInfo struct {
	id      int64
	attempt int
	// token is the lease token of the claim, so that a heartbeat naming
	// the attempt with another token (a forgery, which the store reports
	// lost) does not make the server forget the real worker's attempt.
	token       drover.LeaseToken
	queue, kind string
	worker      string
	started     time.Time
	expires     time.Time
	// metadata is kept only when tracing is on, to link the run's span
	// to the span that enqueued the job.
	metadata []byte
}

type workerState struct {
	queues   map[string]bool
	held     int
	lastSeen time.Time
}

// WorkerInfo is what the server knows of one HTTP worker.
type WorkerInfo struct {
	ID       string
	Queues   []string
	Held     int
	LastSeen time.Time
}

func newInflight() *inflight {
	return &inflight{attempts: map[int64]*attemptInfo{}, workers: map[string]*workerState{}}
}

func (f *inflight) seen(id string, now time.Time) *workerState {
	w, ok := f.workers[id]
	if !ok {
		w = &workerState{queues: map[string]bool{}}
		f.workers[id] = w
	}
	w.lastSeen = now
	return w
}

// claimed records the attempts of one claim.
func (f *inflight) claimed(worker, queue string, attempts []attemptInfo, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := f.seen(worker, now)
	w.queues[queue] = true
	for _, a := range attempts {
		if len(f.attempts) >= maxInflight {
			return
		}
		f.drop(a.id)
		a.worker = worker
		f.attempts[a.id] = &a
		w.held++
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
	f.drop(id)
	return *a, true
}

// extended moves the expiry of attempts a heartbeat kept, and forgets those
// it reported lost. Only attempts named with the token they were claimed
// with count: the store reports a forged attempt lost, and that must not
// end the record of the worker that really holds it.
func (f *inflight) extended(refs []drover.AttemptRef, lost []int64, expires, now time.Time) {
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
		f.seen(a.worker, now)
	}
	for _, id := range lost {
		if named[id] {
			f.drop(id)
		}
	}
}

func (f *inflight) drop(id int64) {
	a, ok := f.attempts[id]
	if !ok {
		return
	}
	delete(f.attempts, id)
	if w, ok := f.workers[a.worker]; ok && w.held > 0 {
		w.held--
	}
}

// sweep forgets attempts whose lease expired a while ago (their worker
// died; the rescuer has them) and workers not heard from since.
func (f *inflight) sweep(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, a := range f.attempts {
		if now.Sub(a.expires) > forgetAfter {
			f.drop(id)
		}
	}
	for id, w := range f.workers {
		if w.held == 0 && now.Sub(w.lastSeen) > forgetAfter {
			delete(f.workers, id)
		}
	}
}

// workerList returns the known workers, most recently seen first.
func (f *inflight) workerList() []WorkerInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]WorkerInfo, 0, len(f.workers))
	for id, w := range f.workers {
		wi := WorkerInfo{ID: id, Held: w.held, LastSeen: w.lastSeen}
		for q := range w.queues {
			wi.Queues = append(wi.Queues, q)
		}
		sort.Strings(wi.Queues)
		out = append(out, wi)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastSeen.After(out[j].LastSeen) })
	return out
}
