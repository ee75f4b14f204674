package drover

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/validate"
)

// InsertOpts are per-job options. Zero values take the defaults: queue
// "default", priority 0, run now, Config.MaxAttempts, no tags.
type InsertOpts struct {
	// Queue is where the job waits; only clients serving that queue run it.
	Queue string
	// Priority orders jobs within a queue: lower runs first. Any int16.
	Priority int
	// RunAt schedules the job; zero or a past time means now. It must lie
	// between MinTime and MaxTime.
	RunAt time.Time
	// MaxAttempts bounds attempts before the job is discarded.
	MaxAttempts int
	// Tags label the job for filtering (no commas).
	Tags []string
	// Metadata is free-form JSON (an object) stored with the job.
	Metadata json.RawMessage
	// Timeout overrides the worker's and client's timeout for this job.
	Timeout time.Duration

	// DependsOn lists stored jobs this one waits for (workflow.go): it
	// stays pending until all of them completed.
	DependsOn []int64
	// ReleaseOnParentFailure runs the job when a job it depends on is
	// cancelled or discarded, instead of cancelling it too.
	ReleaseOnParentFailure bool

	// order: keyed and unique jobs (keyed.go).

	// Key groups jobs of one queue, like an SQS message group: at most
	// KeyLimit jobs of a key run (or wait to run) at once, started in
	// insert order, while jobs of other keys go on in parallel. The
	// default KeyLimit of 1 runs a key's jobs one at a time in insert
	// order; a job being retried keeps its place. The row Insert returns
	// is the stored one: blocked when the job waits behind its key.
	Key string
	// KeyLimit is how many jobs of Key may be active at once (1-10000).
	KeyLimit int
	// KeyRate, with KeyRatePeriod, caps how often jobs of Key start,
	// cluster-wide: a token bucket of KeyRate tokens refilled at KeyRate
	// per KeyRatePeriod, one token per start (retries after a failed
	// attempt included). A job without a token waits (as blocked, then
	// scheduled for the time its token exists). The last
	// insert that sets it sets the key's rate; the key keeps it while it
	// has unfinished jobs or its bucket refills (see
	// docs/ordering-and-limits.md).
	KeyRate       int
	KeyRatePeriod time.Duration
	// UniqueKey skips the insert, without failing it, while a job of the
	// same kind holds the same unique key: any unfinished job, and a
	// finished one whose final state is in its UniqueStates. Uniqueness is
	// the store's unique index, so no race inserts two.
	UniqueKey string
	// UniqueByQueue holds UniqueKey per queue as well as per kind: jobs of
	// one kind in two queues no longer conflict. A caller that may only
	// enqueue into its own queue then cannot squat, with a job it never
	// lets run, a key that inserts into other queues need.
	UniqueByQueue bool
	// UniquePeriod, when set, limits uniqueness to a time window: jobs
	// inserted in different windows (multiples of UniquePeriod since the
	// Unix epoch) do not collide.
	UniquePeriod time.Duration
	// UniqueStates lists the states in which a job holds its UniqueKey.
	// Nil means UnfinishedStates(): the key is free again once the job
	// finishes. Adding final states keeps it held after the job ends in
	// one of them, until the pruner removes the job, for example
	// append(drovertype.UnfinishedStates(), drovertype.JobStateCompleted) for "at
	// most one completed job per key". The list must hold every unfinished
	// state: jobs move between those without a statement that could
	// release a key (a scheduled job becomes available with the clock).
	UniqueStates []drovertype.JobState

	// routing: where the job may run (routing.go, docs/routing.md). A
	// worker claims the job only if it matches every one set; a job that
	// sets none is plain, which any worker may run.

	// WorkerType is the type of worker that may run the job
	// (WorkerConfig.Type).
	WorkerType string
	// WorkerNames are the workers that may run the job (WorkerConfig.Name,
	// or a remote worker's name); any one of them will do.
	WorkerNames []string
	// WorkerLabels must all be among the worker's labels, with the same
	// values.
	WorkerLabels map[string]string
	// OnWorkerAbsent says what happens to a job with WorkerNames when
	// none of them has been seen for WorkerAbsentAfter while the job
	// waited that long: wait (the default), fall back to any worker of
	// WorkerType, or fail.
	OnWorkerAbsent drovertype.AbsentPolicy
	// WorkerAbsentAfter is how long that is; default
	// WorkerAbsentAfterDefault. Like OnWorkerAbsent, it is refused on a
	// job without WorkerNames, where it would mean nothing.
	WorkerAbsentAfter time.Duration
}

// ArgsWithOpts may be implemented by Args to give defaults for every job of
// that kind; explicit InsertOpts fields win.
type ArgsWithOpts interface {
	InsertOpts() InsertOpts
}

// InsertManyParams is one job of an InsertMany call.
type InsertManyParams struct {
	Args Args
	Opts *InsertOpts
}

// RawArgs carries a kind and already-encoded JSON args, for callers that do
// not have a Go type for the job (the CLI, the HTTP API, other languages).
type RawArgs struct {
	KindName string
	JSON     json.RawMessage
}

// Kind implements Args.
func (r RawArgs) Kind() string { return r.KindName }

// MarshalJSON returns the raw args unchanged.
func (r RawArgs) MarshalJSON() ([]byte, error) { return r.JSON, nil }

// Input limits. They keep one bad job from bloating the hot table or
// stalling every claim that reads it.
const (
	// MaxArgsBytes bounds encoded args.
	MaxArgsBytes = 1 << 20
	// MaxMetadataBytes bounds encoded metadata.
	MaxMetadataBytes = 64 << 10
	// DefaultQueue is the queue of jobs inserted without one.
	DefaultQueue = "default"
	// DefaultMaxAttempts is the default number of attempts before discard.
	DefaultMaxAttempts = 25
)

// buildInsert validates one job and turns it into driver parameters. Every
// check happens here, before any statement runs, so a bad job in a batch
// stores nothing.
func (c *Client[TTx]) buildInsert(args Args, opts *InsertOpts) (droverdriver.InsertParams, error) {
	var p droverdriver.InsertParams
	if args == nil {
		return p, invalidf("args: nil")
	}
	kind := args.Kind()
	if err := validate.Kind(kind); err != nil {
		return p, err
	}
	// A stored periodic definition's kind may be worked by other
	// processes or languages (periodic_store.go).
	_, stored := args.(storedArgs)
	if c.config.Workers != nil && !stored && !c.config.Workers.has(kind) {
		return p, fmt.Errorf("%w %q: register a worker for it with AddWorker before inserting", ErrUnknownKind, kind)
	}
	var o InsertOpts
	if d, ok := args.(ArgsWithOpts); ok {
		o = d.InsertOpts()
	}
	if opts != nil {
		mergeOpts(&o, opts)
	}
	encoded, err := json.Marshal(args)
	if err != nil {
		return p, invalidf("args of kind %q: %v", kind, err)
	}
	// json.Marshal only produces valid JSON, and a Go value's nesting is
	// bounded by its type, so typed args need only the size check. Raw args
	// come from outside (CLI, HTTP) and get the full check.
	if _, raw := args.(RawArgs); raw || stored {
		if err := validate.JSON("args", encoded, MaxArgsBytes); err != nil {
			return p, err
		}
	} else if len(encoded) > MaxArgsBytes {
		return p, invalidf("args: %d bytes is over the limit of %d", len(encoded), MaxArgsBytes)
	}
	// Args are an object, as metadata is: workers in every language decode
	// them into a record of named fields (a Go struct, a Python dataclass),
	// and the HTTP API and the CLI refuse anything else for the same reason.
	// json.Marshal writes no leading space.
	if len(encoded) == 0 || encoded[0] != '{' {
		return p, invalidf("args: must be a JSON object")
	}
	// Typed args are checked too: json.Marshal writes a string's NUL as
	// \u0000, and a json.RawMessage field passes its bytes through.
	if err := validate.JSONText("args", encoded); err != nil {
		return p, err
	}
	if o.Queue == "" {
		o.Queue = DefaultQueue
	}
	if err := validate.Queue(o.Queue); err != nil {
		return p, err
	}
	if o.Priority < math.MinInt16 || o.Priority > math.MaxInt16 {
		return p, invalidf("priority %d: must be between %d and %d", o.Priority, math.MinInt16, math.MaxInt16)
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = c.config.MaxAttempts
	}
	if o.MaxAttempts < 1 || o.MaxAttempts > 1_000_000 {
		return p, invalidf("max attempts %d: must be between 1 and 1000000", o.MaxAttempts)
	}
	if !o.RunAt.IsZero() {
		if err := validate.Time("run at", o.RunAt); err != nil {
			return p, err
		}
	}
	if o.Timeout < 0 {
		return p, invalidf("timeout %s: must not be negative", o.Timeout)
	}
	for i, t := range o.Tags {
		if t == "" || len(t) > 255 || strings.ContainsRune(t, ',') {
			return p, invalidf("tag %s: must be 1-255 characters without commas", validate.Echo(t))
		}
		if !validate.Storable(t) {
			return p, validate.Text(fmt.Sprintf("tags[%d]", i), t)
		}
	}
	if len(o.Metadata) > 0 {
		if err := validate.JSON("metadata", o.Metadata, MaxMetadataBytes); err != nil {
			return p, err
		}
		if trimmed := bytes.TrimSpace(o.Metadata); len(trimmed) == 0 || trimmed[0] != '{' {
			return p, invalidf("metadata: must be a JSON object")
		}
		if err := validate.JSONText("metadata", o.Metadata); err != nil {
			return p, err
		}
	}
	p = droverdriver.InsertParams{
		Queue:       o.Queue,
		Kind:        kind,
		Args:        encoded,
		Metadata:    o.Metadata,
		Tags:        o.Tags,
		Priority:    o.Priority,
		MaxAttempts: o.MaxAttempts,
		RunAt:       o.RunAt,
		Timeout:     o.Timeout,
	}
	if p.RunAt.IsZero() && c.config.Clock != nil {
		// The store's clock would stamp it otherwise, and a test clock's
		// claims would find it not yet due.
		p.RunAt = c.config.Clock.Now()
	}
	// order: Key, KeyLimit, KeyRate and UniqueKey are checked and set in
	// keyed.go.
	if err := setOrderOpts(&p, &o, c.now()); err != nil {
		return droverdriver.InsertParams{}, err
	}
	// routing: checked in routing.go.
	if p.Routing, err = routingOf(&o); err != nil {
		return droverdriver.InsertParams{}, err
	}
	return p, nil
}

func mergeOpts(dst, src *InsertOpts) {
	if src.Queue != "" {
		dst.Queue = src.Queue
	}
	if src.Priority != 0 {
		dst.Priority = src.Priority
	}
	if !src.RunAt.IsZero() {
		dst.RunAt = src.RunAt
	}
	if src.MaxAttempts != 0 {
		dst.MaxAttempts = src.MaxAttempts
	}
	if src.Tags != nil {
		dst.Tags = src.Tags
	}
	if src.Metadata != nil {
		dst.Metadata = src.Metadata
	}
	if src.Timeout != 0 {
		dst.Timeout = src.Timeout
	}
	if src.DependsOn != nil {
		dst.DependsOn = src.DependsOn
	}
	if src.ReleaseOnParentFailure {
		dst.ReleaseOnParentFailure = true
	}
	if src.Key != "" {
		dst.Key = src.Key
	}
	if src.KeyLimit != 0 {
		dst.KeyLimit = src.KeyLimit
	}
	if src.KeyRate != 0 {
		dst.KeyRate = src.KeyRate
	}
	if src.KeyRatePeriod != 0 {
		dst.KeyRatePeriod = src.KeyRatePeriod
	}
	if src.UniqueKey != "" {
		dst.UniqueKey = src.UniqueKey
	}
	if src.UniqueByQueue {
		dst.UniqueByQueue = true
	}
	if src.UniquePeriod != 0 {
		dst.UniquePeriod = src.UniquePeriod
	}
	if src.UniqueStates != nil {
		dst.UniqueStates = src.UniqueStates
	}
	if src.WorkerType != "" {
		dst.WorkerType = src.WorkerType
	}
	if src.WorkerNames != nil {
		dst.WorkerNames = src.WorkerNames
	}
	if src.WorkerLabels != nil {
		dst.WorkerLabels = src.WorkerLabels
	}
	if src.OnWorkerAbsent != "" {
		dst.OnWorkerAbsent = src.OnWorkerAbsent
	}
	if src.WorkerAbsentAfter != 0 {
		dst.WorkerAbsentAfter = src.WorkerAbsentAfter
	}
}

// Insert stores one job and returns it as the store holds it once
// inserted: its state (blocked behind its key, scheduled, available),
// CreatedAt and RunAt are the store's, read back in the same round trip.
// A unique job skipped as a duplicate comes back with
// UniqueSkippedAsDuplicate set and no ID.
func (c *Client[TTx]) Insert(ctx context.Context, args Args, opts *InsertOpts) (*drovertype.JobRow, error) {
	return c.insertOne(ctx, c.exec, args, opts)
}

// InsertTx stores one job inside the caller's transaction: the job becomes
// visible, and workers are woken, only if that transaction commits.
func (c *Client[TTx]) InsertTx(ctx context.Context, tx TTx, args Args, opts *InsertOpts) (*drovertype.JobRow, error) {
	return c.insertOne(ctx, c.driver.UnwrapExecutor(tx), args, opts)
}

// InsertMany stores many jobs in one round trip and returns their IDs in
// input order. Either all are stored or, on any error, none. A unique job
// skipped as a duplicate (InsertOpts.UniqueKey) gets ID 0.
func (c *Client[TTx]) InsertMany(ctx context.Context, jobs []InsertManyParams) ([]int64, error) {
	return c.insertMany(ctx, c.exec, jobs)
}

// InsertManyTx is InsertMany inside the caller's transaction.
func (c *Client[TTx]) InsertManyTx(ctx context.Context, tx TTx, jobs []InsertManyParams) ([]int64, error) {
	return c.insertMany(ctx, c.driver.UnwrapExecutor(tx), jobs)
}

func (c *Client[TTx]) insertOne(ctx context.Context, exec droverdriver.Executor, args Args, opts *InsertOpts) (*drovertype.JobRow, error) {
	p, err := c.buildInsert(args, opts)
	if err != nil {
		return nil, err
	}
	if opts != nil && len(opts.DependsOn) > 0 { // a workflow step (workflow.go)
		ids, err := c.insertDependants(ctx, exec, []InsertManyParams{{Args: args, Opts: opts}}, nil)
		if err != nil {
			return nil, err
		}
		// It may be pending or not, depending on its parents: ask, in
		// the same transaction.
		r, err := exec.JobGet(ctx, ids[0])
		if err != nil {
			return nil, err
		}
		return r, nil
	}
	params := []droverdriver.InsertParams{p}
	c.injectTrace(ctx, params)
	r, err := exec.JobInsert(ctx, params[0])
	if err != nil {
		return nil, err
	}
	if r == nil {
		return &drovertype.JobRow{Queue: p.Queue, Kind: p.Kind, UniqueSkippedAsDuplicate: true}, nil
	}
	return r, nil
}

func (c *Client[TTx]) insertMany(ctx context.Context, exec droverdriver.Executor, jobs []InsertManyParams) ([]int64, error) {
	for _, j := range jobs {
		if j.Opts != nil && len(j.Opts.DependsOn) > 0 { // workflow steps (workflow.go)
			return c.insertDependants(ctx, exec, jobs, nil)
		}
	}
	params := make([]droverdriver.InsertParams, len(jobs))
	for i, j := range jobs {
		p, err := c.buildInsert(j.Args, j.Opts)
		if err != nil {
			return nil, fmt.Errorf("job %d of %d: %w", i+1, len(jobs), err)
		}
		params[i] = p
	}
	c.injectTrace(ctx, params)
	return exec.JobInsertMany(ctx, params)
}
