package droverdriver

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/droverhq/drover/drovertype"
)

// Routing: jobs that say where they may run, workers that say what they
// are (docs/routing.md, docs/design/routing.md).
//
// A routed job carries two columns: route, the key of the claim index it
// waits under (jobs_route_idx: queue, route, priority, run_at, id), and
// routing, the whole of its constraints as JSON (drovertype.Routing.JSON). A worker's
// claim walks the index under each key it can match (RouteKeys) and
// checks the rest of a job's constraints (its labels, its type when it is
// keyed by name) on the rows it finds there: it never walks past jobs of
// another type or aimed at another worker, only past jobs of its own key
// whose required labels it lacks. Plain jobs have no route and keep the
// plain claim index and statement.

// Route keys. A job is keyed by the most selective constraint it has: one
// worker name, then several names, then a worker type, then labels alone.
const (
	// RouteTypePrefix starts the key of jobs for a worker type: "t:gpu".
	RouteTypePrefix = "t:"
	// RouteNamePrefix starts the key of jobs aimed at one worker name:
	// "n:render-7".
	RouteNamePrefix = "n:"
	// RouteNames is the key of jobs aimed at several worker names: every
	// named worker looks there, and walks past those aimed at others.
	RouteNames = "n*"
	// RouteLabels is the key of jobs that require labels and nothing else:
	// every worker with labels looks there.
	RouteLabels = "*"
)

// RouteKey returns the route key a job routed by r waits under (the
// Route* constants), "" for a plain job.
func RouteKey(r *drovertype.Routing) string {
	switch {
	case r == nil:
		return ""
	case len(r.Names) == 1:
		return RouteNamePrefix + r.Names[0]
	case len(r.Names) > 1:
		return RouteNames
	case r.Type != "":
		return RouteTypePrefix + r.Type
	case len(r.Labels) > 0:
		return RouteLabels
	}
	return ""
}

// DecodeRouting reads a routing column; nil for a plain job.
func DecodeRouting(b []byte) (*drovertype.Routing, error) {
	if len(b) == 0 {
		return nil, nil
	}
	r := &drovertype.Routing{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, err
	}
	return r, nil
}

// Worker is what a claimer says of itself: a name other jobs may aim at,
// a type and labels. A claim with a nil *Worker is a plain worker's, which
// takes plain jobs only, with the plain statement.
type Worker struct {
	Name   string
	Type   string
	Labels map[string]string
}

// Matches reports whether w may run a job routed by r: the same test the
// claim statements make in SQL, for the reports that say which waiting
// jobs no live worker can take.
func (w *Worker) Matches(r *drovertype.Routing) bool {
	if r == nil {
		return true
	}
	if w == nil {
		return false
	}
	if r.Type != "" && r.Type != w.Type {
		return false
	}
	if len(r.Names) > 0 && !slices.Contains(r.Names, w.Name) {
		return false
	}
	for k, v := range r.Labels {
		if got, ok := w.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// RouteKeys returns the route keys a claim of w reads, besides plain
// jobs: its type's, its name's, the key of jobs aimed at several names
// when it has a name, and the key of jobs that require labels alone when
// it has labels. A job under one of them may still fail w's other
// constraints (Matches); a job under any other key never matches w.
func (w *Worker) RouteKeys() []string {
	var keys []string
	if w.Type != "" {
		keys = append(keys, RouteTypePrefix+w.Type)
	}
	if w.Name != "" {
		keys = append(keys, RouteNamePrefix+w.Name, RouteNames)
	}
	if len(w.Labels) > 0 {
		keys = append(keys, RouteLabels)
	}
	return keys
}

// LabelsJSON returns the worker's labels as a JSON object ("{}" for
// none), as the claim statements take them.
func (w *Worker) LabelsJSON() string {
	if w == nil || len(w.Labels) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(w.Labels)
	return string(b)
}

// Clone returns a copy of w that shares nothing with it.
func (w *Worker) Clone() *Worker {
	if w == nil {
		return nil
	}
	c := *w
	c.Labels = maps.Clone(w.Labels)
	return &c
}

// WorkerColumns returns a registry row's labels as a JSON object and its
// queues as a JSON array ("{}" and "[]" for none), as the registry stores
// them.
func WorkerColumns(r *drovertype.WorkerRecord) (labels, queues string) {
	labels, queues = "{}", "[]"
	if len(r.Labels) > 0 {
		b, _ := json.Marshal(r.Labels) // a map of strings cannot fail
		labels = string(b)
	}
	if len(r.Queues) > 0 {
		b, _ := json.Marshal(r.Queues)
		queues = string(b)
	}
	return labels, queues
}

// KindsJSON returns a registry row's kinds as a JSON array, "" for a
// worker that named none.
func KindsJSON(r *drovertype.WorkerRecord) string {
	if r.Kinds == nil {
		return ""
	}
	b, _ := json.Marshal(r.Kinds) // a slice of strings cannot fail
	return string(b)
}

// WorkerOf returns a registry row's identity, as its claims present it:
// nil for a plain worker.
func WorkerOf(r *drovertype.WorkerRecord) *Worker {
	if r.Plain {
		return nil
	}
	return &Worker{Name: r.Name, Type: r.Type, Labels: r.Labels}
}

// RouteGroup is one line of RouteWaiting or KindsWaiting: the jobs of a
// queue and kind that wait with the same constraints (none, for
// KindsWaiting's plain jobs).
type RouteGroup struct {
	Queue   string
	Kind    string
	Routing *drovertype.Routing
	// Jobs is how many wait (available, due or not).
	Jobs int64
	// OldestRunAt is the run_at of the oldest of them.
	OldestRunAt time.Time
	// Sample is the lowest ID among them, for a report to point at.
	Sample int64
}

// RouteAbsentParams bounds one pass of the absent-worker policy.
type RouteAbsentParams struct {
	Now   time.Time
	Limit int
}

// RoutingExecutor holds the statements of routing and the worker
// registry.
type RoutingExecutor interface {
	// WorkerSeen upserts the registry rows of workers, as last seen now:
	// type, labels and owner are replaced, queues merged with those
	// stored (a remote worker names one queue per claim), started_at kept.
	WorkerSeen(ctx context.Context, workers []drovertype.WorkerRecord) error

	// WorkerGone deletes the registry row of a worker that stopped,
	// when owner still holds it (a worker of the same name may have
	// started elsewhere since).
	WorkerGone(ctx context.Context, name, owner string) error

	// WorkerList returns the registry, by name.
	WorkerList(ctx context.Context) ([]drovertype.WorkerRecord, error)

	// WorkerPrune deletes the rows of workers not seen since before.
	WorkerPrune(ctx context.Context, before time.Time) (int, error)

	// RouteWaiting groups the routed jobs that wait to run (available,
	// scheduled or retryable) by queue, routing and kind, for the reports
	// of jobs no live worker can take.
	RouteWaiting(ctx context.Context) ([]RouteGroup, error)

	// KindsWaiting groups by kind the first limit plain jobs of queue
	// that wait to run, in claim order (priority, run_at, id): where a
	// job of a kind no worker claims ends up, since every other job is
	// claimed past it. It reads that many entries of the claim index, for
	// the reports of jobs no live worker can take, however long the
	// queue's backlog.
	KindsWaiting(ctx context.Context, queue string, limit int) ([]RouteGroup, error)

	// JobRouteAbsent applies the absent-worker policy to at most p.Limit
	// routed jobs aimed at worker names none of which has a registry row
	// seen within the job's AbsentAfter, while the job has waited at
	// least that long (its run_at is that far past): AbsentFallback jobs
	// are keyed by their type from then on (their names move to
	// FellBackFrom) and wake their queue; AbsentFail jobs end as
	// discarded with an error naming the workers, returned as JobRescue
	// returns the jobs it ends, for engine.RouteAbsent to settle in the
	// same transaction. It reports how many jobs fell back.
	JobRouteAbsent(ctx context.Context, p RouteAbsentParams) (failed []FinishedRow, fellBack int, err error)

	// QueueHead reports what a queue in strict order waits on, for an
	// operator: the head, the first of its jobs a limited claim started
	// that wait again (in the order they started, from
	// jobs_returned_idx), or failing one the first waiting job in claim
	// order (priority, run_at, id); and how many of its rows a limited
	// claim took still run.
	QueueHead(ctx context.Context, queue string) (drovertype.QueueHead, error)
}
