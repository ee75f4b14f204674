package drover

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/validate"
)

// Routing: workers that say what they are, jobs that say where they may
// run (docs/routing.md).
//
// A worker has a name, a type and labels (Config.Worker for a Go client;
// the fields of ClaimParams for a remote worker). A job may ask for a
// worker type, one or more worker names and labels
// (InsertOpts.WorkerType, WorkerNames, WorkerLabels): a worker claims a
// routed job only if it matches all of them, and claims plain jobs as
// well. A worker that says nothing of itself claims plain jobs only, with
// the plain claim statement, so routing costs plain workers nothing.

// WorkerAbsentAfterDefault is how long a job aimed at worker names waits
// for them before its AbsentPolicy applies, when InsertOpts leaves
// WorkerAbsentAfter unset.
const WorkerAbsentAfterDefault = 5 * time.Minute

// Input limits of routing.
const (
	// MaxWorkerNames bounds the names one job may aim at.
	MaxWorkerNames = 64
	// MaxLabels bounds the labels of a worker or a job.
	MaxLabels = validate.MaxLabels
)

// WorkerConfig says what a client's workers are (Config.Worker). The zero
// value is a plain worker: it claims plain jobs only.
type WorkerConfig struct {
	// Name is what jobs aim at with InsertOpts.WorkerNames; default the
	// client's ID. Set a name that outlives restarts (a host name, a
	// pod's stable name) for jobs to find the worker again.
	Name string
	// Type is the kind of worker ("gpu", "arm-builder"), for jobs with
	// InsertOpts.WorkerType.
	Type string
	// Labels are properties jobs may require (InsertOpts.WorkerLabels):
	// "gpu": "a100", "region": "eu". SetWorkerLabels changes them while
	// the client runs.
	Labels map[string]string
}

func (w WorkerConfig) plain() bool { return w.Name == "" && w.Type == "" && len(w.Labels) == 0 }

// validateWorker checks what a worker says of itself: its name, type and
// labels, as a Go client's Config.Worker and a remote worker's claim give
// them.
func validateWorker(name, typ string, labels map[string]string) error {
	if name != "" {
		if err := validate.WorkerName(name); err != nil {
			return err
		}
	}
	if typ != "" {
		if err := validate.WorkerType(typ); err != nil {
			return err
		}
	}
	return validate.Labels(labels)
}

// routingOf checks the routing options of o and returns the job's
// routing, nil for a plain job.
func routingOf(o *InsertOpts) (*drovertype.Routing, error) {
	if o.WorkerType == "" && len(o.WorkerNames) == 0 && len(o.WorkerLabels) == 0 {
		if o.OnWorkerAbsent != "" || o.WorkerAbsentAfter != 0 {
			return nil, invalidf("on worker absent: applies to jobs aimed at worker names (WorkerNames)")
		}
		return nil, nil
	}
	r := &drovertype.Routing{Type: o.WorkerType}
	if o.WorkerType != "" {
		if err := validate.WorkerType(o.WorkerType); err != nil {
			return nil, err
		}
	}
	if len(o.WorkerNames) > MaxWorkerNames {
		return nil, invalidf("worker names: %d is over the limit of %d", len(o.WorkerNames), MaxWorkerNames)
	}
	for _, n := range o.WorkerNames {
		if err := validate.WorkerName(n); err != nil {
			return nil, err
		}
		if !slices.Contains(r.Names, n) {
			r.Names = append(r.Names, n)
		}
	}
	if err := validate.Labels(o.WorkerLabels); err != nil {
		return nil, err
	}
	if len(o.WorkerLabels) > 0 {
		r.Labels = maps.Clone(o.WorkerLabels)
	}
	switch o.OnWorkerAbsent {
	case "", drovertype.AbsentWait:
	case drovertype.AbsentFallback:
		if r.Type == "" {
			return nil, invalidf("on worker absent %q: falls back to a worker type, and the job has none (set WorkerType)", o.OnWorkerAbsent)
		}
		r.OnAbsent = o.OnWorkerAbsent
	case drovertype.AbsentFail:
		r.OnAbsent = o.OnWorkerAbsent
	default:
		return nil, invalidf("on worker absent %q: must be %q, %q or %q", o.OnWorkerAbsent, drovertype.AbsentWait, drovertype.AbsentFallback, drovertype.AbsentFail)
	}
	if (o.OnWorkerAbsent != "" || o.WorkerAbsentAfter != 0) && len(r.Names) == 0 {
		return nil, invalidf("on worker absent: applies to jobs aimed at worker names (WorkerNames)")
	}
	if o.WorkerAbsentAfter < 0 {
		return nil, invalidf("worker absent after %s: must not be negative", o.WorkerAbsentAfter)
	}
	if r.OnAbsent != "" {
		r.AbsentAfter = drovertype.MillisOf(cmp.Or(o.WorkerAbsentAfter, WorkerAbsentAfterDefault))
	}
	return r, nil
}

// identity holds what a client's claims say of its workers, which
// SetWorkerLabels may change while it runs.
type identity struct {
	mu     sync.Mutex
	worker *droverdriver.Worker // nil: a plain worker
	name   string               // its name in the registry
}

func (id *identity) get() (*droverdriver.Worker, string) {
	id.mu.Lock()
	defer id.mu.Unlock()
	return id.worker, id.name
}

func newIdentity(cfg *Config) *identity {
	id := &identity{name: cmp.Or(cfg.Worker.Name, cfg.ID)}
	if !cfg.Worker.plain() {
		id.worker = &droverdriver.Worker{Name: id.name, Type: cfg.Worker.Type, Labels: maps.Clone(cfg.Worker.Labels)}
	}
	return id
}

// claimAsWorker is the claim of the client's producers: the client's
// claim, as the worker the client says it is.
func (c *Client[TTx]) claimAsWorker(ctx context.Context, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	p.Worker, _ = c.identity.get()
	return c.claim(ctx, p)
}

// SetWorkerLabels replaces the labels of the client's workers: their next
// claims take the jobs the new labels match, and the registry shows them
// at once. A plain client (no Config.Worker) becomes a worker named by its
// ID with these labels.
func (c *Client[TTx]) SetWorkerLabels(ctx context.Context, labels map[string]string) error {
	if err := validate.Labels(labels); err != nil {
		return err
	}
	id := c.identity
	id.mu.Lock()
	w := id.worker.Clone()
	if w == nil {
		w = &droverdriver.Worker{Name: id.name}
	}
	w.Labels = maps.Clone(labels)
	id.worker = w
	id.mu.Unlock()
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	if !started || len(c.config.Queues) == 0 {
		return nil
	}
	for _, p := range c.producers {
		p.Wake()
	}
	return c.registerWorker(ctx)
}

// workerRecord is the client's row in the worker registry, with the kinds
// its producers claim (the kinds it has workers for).
func (c *Client[TTx]) workerRecord() drovertype.WorkerRecord {
	w, name := c.identity.get()
	queues := slices.Sorted(maps.Keys(c.config.Queues))
	rec := drovertype.WorkerRecord{Name: name, Plain: w == nil, Queues: queues, Owner: c.config.ID,
		Source: drovertype.WorkerSourceGo}
	if c.config.Workers != nil {
		rec.Kinds = slices.Sorted(slices.Values(c.config.Workers.Kinds()))
	}
	if w != nil {
		rec.Type, rec.Labels = w.Type, w.Labels
	}
	return rec
}

// registerWorker writes the client's row of the worker registry.
func (c *Client[TTx]) registerWorker(ctx context.Context) error {
	if err := c.exec.WorkerSeen(ctx, []drovertype.WorkerRecord{c.workerRecord()}); err != nil {
		return fmt.Errorf("register worker: %w", err)
	}
	return nil
}

// Workers lists the worker registry, by name.
func (c *Client[TTx]) Workers(ctx context.Context) ([]*drovertype.WorkerInfo, error) {
	ws, err := engine.Workers(ctx, c.exec, time.Now())
	if err != nil {
		return nil, err
	}
	out := make([]*drovertype.WorkerInfo, len(ws))
	for i := range ws {
		out[i] = &ws[i]
	}
	return out, nil
}

// UnroutableJobs are jobs of a queue and kind, waiting with the same
// routing (none, for plain jobs), that no live worker can take: none that
// works the queue matches their worker type, names and labels and runs
// their kind.
type UnroutableJobs struct {
	Queue string
	Kind  string
	// Routing is nil for plain jobs, which only their kind keeps waiting:
	// the queue's live workers all named the kinds they run, and none
	// named it.
	Routing *drovertype.Routing
	// Jobs is how many wait; OldestRunAt is when the oldest of them could
	// first run, FirstID the lowest of their IDs.
	Jobs        int64
	OldestRunAt time.Time
	FirstID     int64
}

// Unroutable reports the waiting jobs that no live worker can take,
// grouped by queue, kind and routing: routed jobs no live worker of their
// queue matches or runs the kind of (at most 1,000 groups are read), and
// plain jobs of a kind that none of the live workers of their queue runs,
// where every one of them named the kinds it runs (Go clients do; so do
// remote workers that send ClaimParams.Kinds). Such a plain job is found
// among the first engine.KindsHead waiting jobs of its queue in claim
// order, where a job no worker claims ends up, and counted among them.
// A job aimed at worker names with an AbsentPolicy other than wait is
// handled by the leader once its workers stayed away long enough; the
// others wait here until a worker that can take them appears.
func (c *Client[TTx]) Unroutable(ctx context.Context) ([]*UnroutableJobs, error) {
	groups, err := c.exec.RouteWaiting(ctx)
	if err != nil {
		return nil, err
	}
	ws, err := engine.Workers(ctx, c.exec, time.Now())
	if err != nil {
		return nil, err
	}
	for _, q := range engine.KindQueues(ws) {
		kinds, err := c.exec.KindsWaiting(ctx, q, engine.KindsHead)
		if err != nil {
			return nil, err
		}
		groups = append(groups, kinds...)
	}
	bad := engine.Unroutable(groups, ws)
	out := make([]*UnroutableJobs, len(bad))
	for i, g := range bad {
		out[i] = &UnroutableJobs{Queue: g.Queue, Kind: g.Kind, Routing: g.Routing, Jobs: g.Jobs, OldestRunAt: g.OldestRunAt,
			FirstID: g.Sample}
	}
	return out, nil
}

// markUnroutable sets Unroutable on the waiting routed jobs of rows that
// no live worker can take, reading the registry once if any is routed.
func (c *Client[TTx]) markUnroutable(ctx context.Context, rows []*drovertype.JobRow) error {
	var ws []drovertype.WorkerInfo
	for _, r := range rows {
		if r.Routing == nil || !r.State.Waiting() {
			continue
		}
		if ws == nil {
			var err error
			if ws, err = engine.Workers(ctx, c.exec, time.Now()); err != nil {
				return err
			}
		}
		r.Unroutable = !engine.Routable(r.Queue, r.Kind, r.Routing, ws)
	}
	return nil
}

// QueueSetStrictOrder puts a queue in strict order, or takes it out with
// maxRunning 0: its jobs then start strictly in claim order (priority,
// then run_at, then insert order) across every client and remote worker,
// at most maxRunning of them running at once, and a job that fails keeps
// its place at the head until it runs again. No leader forwards claims:
// each claim of the queue takes the settings row's lock in the store, so
// the queue's claims take turns while other queues' run as before. See
// docs/routing.md, "Strict order".
func (c *Client[TTx]) QueueSetStrictOrder(ctx context.Context, name string, maxRunning int) (*drovertype.QueueSettings, error) {
	if maxRunning < 0 || maxRunning > 1_000_000 {
		return nil, invalidf("strict order %d: must be between 0 (off) and 1000000 jobs running at once", maxRunning)
	}
	return c.setQueueSettings(ctx, droverdriver.QueueSettingsSetParams{Queue: name, Strict: &maxRunning})
}

// QueueHeadOf reports what a queue in strict order waits on, for an
// operator who sees it stand still: the job at its head (a job that failed
// and waits for its retry keeps that place, and nothing behind it starts)
// and how many of its jobs run. For other queues it reports their first
// waiting job in claim order. Two reads of the hot table through its
// indexes, whatever the queue's length.
func (c *Client[TTx]) QueueHeadOf(ctx context.Context, name string) (*drovertype.QueueHead, error) {
	if err := validate.Queue(name); err != nil {
		return nil, err
	}
	h, err := c.exec.QueueHead(ctx, name)
	if err != nil {
		return nil, err
	}
	if h.ID == 0 {
		return &h, nil
	}
	h.Job, err = c.JobGet(ctx, h.ID)
	if errors.Is(err, ErrNotFound) {
		// Deleted between the two reads: it no longer waits.
		return &drovertype.QueueHead{Running: h.Running}, nil
	}
	return &h, err
}

// registrar writes the registry rows of remote workers as they claim: a
// row when a worker first claims, or claims from a queue it had not
// claimed from, or says something else of itself, and otherwise at most
// every engine.WorkerSeenEvery, so that a worker claiming one job at a
// time does not write the registry at every claim. Its zero value is
// ready to use.
type registrar struct {
	mu      sync.Mutex
	workers map[string]*registered // by worker name
}

type registered struct {
	said   string // what the worker said of itself, as one string
	queues []string
	at     time.Time
}

// maxRegistered bounds the workers a registrar remembers: remote workers
// name themselves freely.
const maxRegistered = 10_000

// claimed registers the worker of claim p (identity w, nil for a plain
// worker) if its row is due.
func (g *registrar) claimed(ctx context.Context, ex droverdriver.Executor, p *ClaimParams, w *droverdriver.Worker) error {
	rec := drovertype.WorkerRecord{Name: p.Owner, Plain: w == nil, Owner: p.Owner, Source: drovertype.WorkerSourceHTTP,
		Kinds: p.kinds()}
	if w != nil {
		rec.Name, rec.Type, rec.Labels = w.Name, w.Type, w.Labels
	}
	said := fmt.Sprint(rec.Plain, "\x00", rec.Owner, "\x00", rec.Type, "\x00", w.LabelsJSON(), "\x00", droverdriver.KindsJSON(&rec))
	now := time.Now()
	g.mu.Lock()
	r := g.workers[rec.Name]
	due := r == nil || r.said != said || !slices.Contains(r.queues, p.Queue) || now.Sub(r.at) >= engine.WorkerSeenEvery
	if !due {
		g.mu.Unlock()
		return nil
	}
	if r == nil || r.said != said {
		r = &registered{said: said}
	}
	if !slices.Contains(r.queues, p.Queue) {
		r.queues = append(r.queues, p.Queue)
	}
	r.at = now
	rec.Queues = slices.Clone(r.queues)
	if g.workers == nil || len(g.workers) >= maxRegistered {
		g.workers = map[string]*registered{}
	}
	g.workers[rec.Name] = r
	g.mu.Unlock()
	return ex.WorkerSeen(ctx, []drovertype.WorkerRecord{rec})
}
