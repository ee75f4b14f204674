// Package producer fetches jobs of one queue and runs them. It claims in
// batches into a bounded local buffer, refills before the buffer is empty,
// and sleeps when the queue is drained until a notification, a poll tick or
// its own free capacity says there may be work.
package producer

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/lease"
	"github.com/droverhq/drover/internal/outage"
	"github.com/droverhq/drover/internal/testsignal"
)

// ClaimMaxDefault caps one claim statement. Past a few hundred rows the
// per-statement overhead is already amortised, and bigger claims only hold
// jobs away from other processes for longer.
const ClaimMaxDefault = 500

// claimCooldown is the least time between the starts of two claims of one
// producer. Notifications arrive per insert; without it, a stream of
// single-job inserts makes every idle producer claim once per job. With it,
// wake-ups within a millisecond share one claim, and pickup waits at most a
// millisecond longer.
const claimCooldown = time.Millisecond

// maxEmptyCooldown caps the cooldown after claims that found nothing. It
// also bounds the extra pickup latency of a producer that was idle.
const maxEmptyCooldown = 16 * time.Millisecond

// maxClaimsInFlight caps concurrent claims of one producer.
const maxClaimsInFlight = 4

// prefetchHorizon bounds the local buffer by time: a producer buffers at
// most as many claimed jobs as its workers are expected to start within it,
// judged from its handlers' recent run times, and never more than
// Producer.prefetch. Short jobs get the whole buffer. A producer of jobs that
// run for seconds or minutes claims little more than its free slots, so
// claimed jobs do not wait in one process's buffer for a worker to free up
// while another process has idle workers; its claims then start as soon
// as one slot is free instead of a quarter of its capacity.
const prefetchHorizon = 100 * time.Millisecond

// claimTimeout bounds one claim statement.
const claimTimeout = 30 * time.Second

// Config configures one queue's producer.
type Config struct {
	Queue string
	// MaxWorkers is the number of handlers that run at once.
	MaxWorkers int
	// ClaimMax caps one claim statement.
	ClaimMax int
	// Claim runs one claim; nil claims with the executor's JobClaim. The
	// client passes the engine's claim, which applies the queue's stored
	// settings (pause, cluster-wide limits).
	Claim func(context.Context, droverdriver.ClaimParams) ([]*drovertype.JobRow, error)
	Owner string
	Lease time.Duration
	// PollInterval is the fallback fetch interval when no notification
	// arrives; 0 when the runner polls for every queue at once and wakes
	// the producer of a queue with jobs due (the client's poller): the
	// producer then keeps no poll of its own.
	PollInterval time.Duration
	Logger       *slog.Logger
	// FromHead makes every claim start at the head of the claim order,
	// never past the producer's last claimed row (position.go): for
	// stores that leave no entries of claimed rows to walk
	// (droverdriver.HeadClaimer).
	FromHead bool
	// Kinds, when not nil, are the kinds the runner has workers for: the
	// producer claims only those (ClaimParams.Kinds).
	Kinds []string
	// OnRan, when set, is told of every attempt the producer ran, with its
	// result, before the result goes to the completer: the client's
	// metrics count them (attempts released unrun are not told).
	OnRan func(ran Ran, res droverdriver.Result)
}

// Ran is what OnRan is told of an attempt besides its result: what its
// row said, read before the handler ran (the handler's Job holds the row,
// and may change it), and how long the handler took.
type Ran struct {
	Queue, Kind string
	// Pickup is the time from the job's run_at to the claim that handed
	// it to this process; PickedUp is false when the row does not say
	// when it was claimed.
	Pickup   time.Duration
	PickedUp bool
	Took     time.Duration
}

// RanOf returns what OnRan is told of the attempt of row, to be read
// before its handler runs; Took is left for the caller.
func RanOf(row *drovertype.JobRow) Ran {
	ran := Ran{Queue: row.Queue, Kind: row.Kind}
	if row.AttemptedAt != nil {
		ran.Pickup, ran.PickedUp = row.AttemptedAt.Sub(row.RunAt), true
	}
	return ran
}

// Runner runs one claimed attempt under ctx and returns its result. ctx is
// the attempt's *JobContext, known to the Tracker since the claim: the
// runner may set its timeout (JobContext.SetTimeout) and hand it to the
// handler.
type Runner func(ctx context.Context, row *drovertype.JobRow) droverdriver.Result

// Stats are cumulative counters of a producer, for benches and metrics.
type Stats struct {
	Claims      int64
	ClaimedJobs int64
	ClaimNanos  int64
	Ran         int64
	RunNanos    int64
}

// TestSignals are what a producer tells a test (internal/testsignal).
type TestSignals struct {
	// Claimed is sent after each claim that succeeded, with the number of
	// jobs it claimed (0 for a claim that found none), once they are in
	// the buffer and the tracker.
	Claimed testsignal.Signal[int]
}

// Init turns the signals on, for tests only.
func (s *TestSignals) Init() { s.Claimed.Init() }

// Producer fetches and runs the jobs of one queue.
type Producer struct {
	// TestSignals are off unless a test initialised them before Run.
	TestSignals TestSignals

	cfg     Config
	tracker *lease.Tracker
	submit  func(droverdriver.Result)
	run     Runner
	// prefetch is how many claimed jobs may wait in the local buffer
	// beyond the running ones, so that a refill can be in flight while
	// every worker is busy: the larger of MaxWorkers and ClaimMax.
	// Producers of slow jobs buffer fewer (prefetchHorizon). Below
	// ClaimMax, short jobs would be claimed a few dozen at a time however
	// fast they ran: with 50 workers of 10 ms jobs, a buffer of 50 made
	// claims of 33 jobs on average, planned afresh each (droverpg's
	// replan), and 8 such processes on 2 cores did 25K jobs/s; a buffer
	// of 500 (100 ms of their work) made claims of 250 and 32K jobs/s
	// (docs/design/claim-and-flush.md).
	prefetch int

	wake chan struct{}
	// freed wakes the fetch loop when a job frees room it waits for;
	// needRoom says it waits for that, so that the other jobs' ends do
	// not wake it for nothing.
	freed    chan struct{}
	needRoom atomic.Bool
	// drained mirrors the fetch loop's own: the last claim found the
	// queue empty and nothing announced jobs since (Drained).
	drained atomic.Bool
	// workers runs the claimed jobs, at most MaxWorkers at once; the
	// rows waiting for one are the local buffer.
	workers  *pool
	inflight atomic.Int64
	stopping atomic.Bool
	stopped  chan struct{} // closed with stopping set
	position position
	// deadlines times out the handlers of this producer's attempts.
	deadlines deadlines

	claims, claimedJobs, claimNanos, ran, runNanos atomic.Int64
	// meanRun is a moving average of handler run times, in nanoseconds;
	// 0 until the first job has run.
	meanRun atomic.Int64
}

// New returns a producer. submit hands results to the completer.
func New(exec droverdriver.Executor, tracker *lease.Tracker, submit func(droverdriver.Result), run Runner, cfg Config) *Producer {
	if cfg.MaxWorkers <= 0 {
		cfg.MaxWorkers = 1
	}
	if cfg.ClaimMax <= 0 {
		cfg.ClaimMax = ClaimMaxDefault
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Claim == nil {
		cfg.Claim = exec.JobClaim
	}
	prefetch := max(cfg.MaxWorkers, cfg.ClaimMax)
	p := &Producer{
		cfg: cfg, tracker: tracker, submit: submit, run: run, prefetch: prefetch,
		wake:    make(chan struct{}, 1),
		stopped: make(chan struct{}),
		freed:   make(chan struct{}, 1),
	}
	p.workers = newPool(cfg.MaxWorkers, func() time.Duration { return time.Duration(p.meanRun.Load()) }, p.runOne)
	return p
}

// Wake tells the producer that jobs may have arrived. It never blocks, and
// wake-ups that arrive while one is pending coalesce into one fetch. It
// reports how many jobs the producer has room to claim now (none below its
// low-water mark, where it waits for more to free up), so that a listener
// can stop waking other producers once the new jobs are covered.
func (p *Producer) Wake() int {
	select {
	case p.wake <- struct{}{}:
	default:
	}
	if p.stopping.Load() {
		return 0
	}
	return int(p.room())
}

// Drained says that the producer's last claim found its queue empty and
// that it waits for a wake-up: a client that polls for its producers
// (Config.PollInterval 0) asks the store only about the queues of those.
func (p *Producer) Drained() bool { return p.drained.Load() }

// room returns how many jobs the producer may claim now: its free
// capacity, or 0 while that is below the low-water mark.
func (p *Producer) room() int64 {
	limit, lowWater := p.capacity()
	if free := limit - p.inflight.Load(); free >= lowWater {
		return free
	}
	return 0
}

// capacity returns how many jobs the producer may hold (running, buffered
// and reserved by claims under way) and how many of them must be free
// before it claims. The buffer holds what the workers are expected to
// start within prefetchHorizon, up to prefetch, and nothing until a
// job has run. Claims start once half the buffer is free (at least one
// slot), so workers never wait on a claim's round trip when jobs are short.
func (p *Producer) capacity() (limit, lowWater int64) {
	workers := int64(p.cfg.MaxWorkers)
	var buffer int64
	if mean := p.meanRun.Load(); mean > 0 {
		buffer = min(int64(p.prefetch), workers*int64(prefetchHorizon)/mean)
	}
	return workers + buffer, max(1, min(int64(p.cfg.ClaimMax), buffer/2))
}

// Stats returns cumulative counters.
func (p *Producer) Stats() Stats {
	return Stats{Claims: p.claims.Load(), ClaimedJobs: p.claimedJobs.Load(), ClaimNanos: p.claimNanos.Load(),
		Ran: p.ran.Load(), RunNanos: p.runNanos.Load()}
}

// Run fetches until ctx ends. Handlers get a context that nothing cancels
// and are interrupted through the lease.Tracker. Once fetching
// stops, jobs still waiting in the buffer are released (not run), and Run
// returns when every running handler has returned.
func (p *Producer) Run(ctx context.Context) {
	p.fetchLoop(ctx)
	p.stopping.Store(true)
	close(p.stopped)
	// A stopping producer releases buffered jobs at once instead of
	// holding them until a running job frees a worker.
	for _, c := range p.workers.close() {
		p.runOne(c)
	}
	p.workers.wait()
	p.deadlines.stop()
}

// growStack grows a new goroutine's stack while it is still shallow.
// Handlers (and the JSON decoding of their args) need more than the
// runtime's small initial stack; growing it from deep inside a decoder
// copies and adjusts every frame, repeatedly (measured: a fifth of the
// process's CPU on noop jobs), while growing it here copies almost nothing.
//
//go:noinline
func growStack() {
	var pad [stackPad]byte
	pad[stackIndex] = 1 // a variable index keeps the array (and the frame) real
	runtime.KeepAlive(pad[stackIndex/2])
}

// stackPad is sized so the stack grows to 16 KiB up front.
const stackPad = 10 << 10

// stackIndex is a variable so the compiler cannot drop the array.
var stackIndex = stackPad - 1

func (p *Producer) runOne(c claimed) {
	row := c.row
	var res droverdriver.Result
	if p.stopping.Load() {
		res = droverdriver.Result{ID: row.ID, Attempt: row.Attempt, LeaseToken: row.LeaseToken, Outcome: droverdriver.OutcomeReleased,
			Key: row.Key, Queue: row.Queue}
		c.ctx.cancel(nil)
	} else {
		var ran Ran
		if p.cfg.OnRan != nil {
			ran = RanOf(row)
		}
		start := time.Now()
		c.ctx.begin(start)
		res = p.run(c.ctx, row)
		c.ctx.Release()
		took := int64(time.Since(start))
		if p.cfg.OnRan != nil {
			ran.Took = time.Duration(took)
			p.cfg.OnRan(ran, res)
		}
		p.runNanos.Add(took)
		p.ran.Add(1)
		// Concurrent updates may drop one another's samples; an estimate
		// needs no more.
		if mean := p.meanRun.Load(); mean == 0 {
			p.meanRun.Store(max(1, took))
		} else {
			p.meanRun.Store(max(1, mean+(took-mean)/16))
		}
	}
	p.submit(res)
	p.inflight.Add(-1)
	// The fetch loop sets needRoom before it reads inflight, and this
	// reads needRoom after it wrote inflight: one of the two sees the
	// other's write, so a freed slot is never missed.
	if p.needRoom.Load() && p.room() > 0 && p.needRoom.CompareAndSwap(true, false) {
		select {
		case p.freed <- struct{}{}:
		default:
		}
	}
}

// claimResult is what one claim goroutine reports back to the fetch loop.
type claimResult struct {
	asked, got int
	err        error
	// news is the fetch loop's count of wake-ups and polls when the claim
	// began.
	news int
	// recheck says the claim looked again because wake-ups came in while
	// the claim before it ran, or because that one claimed past a position
	// (see fetchLoop); started is when it began.
	recheck bool
	started time.Time
	// positional says the claim started past the producer's position.
	positional bool
}

func (p *Producer) fetchLoop(ctx context.Context) {
	claimMax := int64(p.cfg.ClaimMax)
	// A second claim may be in flight while the first one runs, but only
	// where the whole capacity holds two full claims: that is where one
	// claim's round trip, not the store, caps throughput. Smaller producers
	// claim one batch at a time, which keeps strict priority order.
	maxInFlight := int(max(1, min(maxClaimsInFlight, int64(p.cfg.MaxWorkers+p.prefetch)/(2*claimMax))))
	results := make(chan claimResult, maxInFlight)
	failures := &outage.Reporter{Logger: p.cfg.Logger, What: "claiming jobs", Attrs: []any{"queue", p.cfg.Queue}}
	inFlight := 0
	var poll <-chan time.Time
	var pollTimer *time.Timer
	if p.cfg.PollInterval > 0 {
		pollTimer = time.NewTimer(p.cfg.PollInterval)
		defer pollTimer.Stop()
		poll = pollTimer.C
	}
	drained := false
	// news counts the wake-ups and poll ticks the loop has taken in. A
	// claim that comes back short drains the queue only if none came in
	// after it began: the jobs such a wake-up announces may have been
	// committed after the claim looked (a workflow step released while a
	// claim ran), and waiting for the next poll would leave them idle.
	news := 0
	backoff := 100 * time.Millisecond
	var retry, cooldown <-chan time.Time
	var lastClaim time.Time
	// A claim that finds nothing lost the race for the jobs a notification
	// announced (every listening producer hears every insert). Each empty
	// claim in a row doubles the cooldown, up to maxEmptyCooldown, so idle
	// producers of a busy fleet stop crowding the store; one that gets
	// jobs is back to the base cooldown at once.
	//
	// A claim that looks again because wake-ups came in while the claim
	// before it ran (recheck) is not such a race: the jobs they announced
	// were mostly taken by that claim itself, and the recheck finds
	// nothing. An empty recheck leaves the cooldown as it was and does not
	// count as a claim for it, so that the next insert's wake-up is
	// claimed at once. Otherwise a trickle of single inserts (1,000 a
	// second, one claim a millisecond) locked the claims into step with
	// the cooldown: a recheck a millisecond after each claim, just before
	// the next insert, held that insert's job back for most of a
	// millisecond, and its emptiness doubled the cooldown up to 16 ms
	// (BenchmarkTrickle: p50 2.2 ms, p99 7-17 ms from the producer alone,
	// a fifth of its claims empty).
	cooldownNow := claimCooldown
	recheck := false
	for {
		// inflight counts running and buffered jobs plus room reserved
		// by claims under way, so claims never overfill the buffer.
		for !drained && retry == nil && cooldown == nil && inFlight < maxInFlight {
			p.needRoom.Store(true)
			free := p.room()
			if free == 0 {
				break
			}
			p.needRoom.Store(false)
			if wait := time.Until(lastClaim.Add(cooldownNow)); wait > 0 {
				cooldown = time.After(wait)
				break
			}
			lastClaim = time.Now()
			n := min(free, claimMax)
			p.inflight.Add(n)
			inFlight++
			go func(news int, recheck bool, started time.Time) {
				got, positional, err := p.claim(ctx, int(n))
				results <- claimResult{asked: int(n), got: got, err: err, news: news, recheck: recheck, started: started,
					positional: positional}
			}(news, recheck, lastClaim)
			recheck = false
		}
		select {
		case <-ctx.Done():
			for ; inFlight > 0; inFlight-- {
				r := <-results
				p.inflight.Add(int64(r.got - r.asked))
			}
			return
		case r := <-results:
			inFlight--
			p.inflight.Add(int64(r.got - r.asked))
			if r.err != nil {
				if ctx.Err() == nil {
					failures.Failed(r.err)
				}
				retry = time.After(backoff)
				backoff = min(backoff*2, 5*time.Second)
				continue
			}
			failures.OK()
			backoff = 100 * time.Millisecond
			// A short claim means the queue is drained for now: wait for
			// a notification or the poll instead of asking again. Not so
			// for a claim past a position, which ends its span: rows that
			// sort before the position (an insert that committed after a
			// later one) wait for the next claim from the head, which must
			// not wait for a wake-up that may never come (the last jobs
			// of a run waited out the poll, a second).
			short := r.got < r.asked
			drained = short && r.news == news && !r.positional
			p.drained.Store(drained)
			recheck = short && (r.news != news || r.positional)
			switch {
			case r.got > 0:
				cooldownNow = claimCooldown
			case !r.recheck:
				cooldownNow = min(2*cooldownNow, maxEmptyCooldown)
			case lastClaim.Equal(r.started):
				lastClaim = time.Time{}
			}
		case <-retry:
			retry = nil
		case <-cooldown:
			cooldown = nil
		case <-p.wake:
			drained = false
			p.drained.Store(false)
			news++
		case <-poll:
			drained = false
			p.drained.Store(false)
			news++
			pollTimer.Reset(p.cfg.PollInterval)
		case <-p.freed:
		}
	}
}

// claim claims up to n jobs and hands them to the buffer. It returns how
// many jobs it handed out and whether it claimed past the producer's
// position, with an error when the claim failed.
func (p *Producer) claim(ctx context.Context, n int) (int, bool, error) {
	// The claim itself is not cancelled with ctx: a statement cancelled
	// after the store committed it would strand the claimed rows until
	// their leases expire. A stopping producer releases them instead.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	start := time.Now()
	var after *droverdriver.ClaimPosition
	if !p.cfg.FromHead {
		after = p.position.after(start)
	}
	params := droverdriver.ClaimParams{Queue: p.cfg.Queue, Max: n, Owner: p.cfg.Owner, Lease: p.cfg.Lease,
		After: after, Kinds: p.cfg.Kinds}
	rows, err := p.cfg.Claim(ctx, params)
	if err != nil {
		return 0, after != nil, err
	}
	p.claims.Add(1)
	took := time.Since(start)
	p.claimNanos.Add(int64(took))
	p.claimedJobs.Add(int64(len(rows)))
	var last *drovertype.JobRow
	if len(rows) > 0 {
		last = rows[len(rows)-1]
	}
	p.position.observe(time.Now(), after == nil, took, last, len(rows) < n)
	// Each attempt's context is made now, so that the tracker can
	// interrupt it from the start.
	jobs := make([]claimed, len(rows))
	attempts := make([]lease.Attempt, len(rows))
	contexts := newJobContexts(len(rows), &p.deadlines)
	for i, row := range rows {
		jc := &contexts[i]
		jobs[i] = claimed{row: row, ctx: jc}
		attempts[i] = lease.Attempt{ID: row.ID, Attempt: row.Attempt, Token: row.LeaseToken, Cancel: jc.cancel}
	}
	p.tracker.Add(attempts)
	p.workers.push(jobs)
	p.TestSignals.Claimed.Send(len(rows))
	return len(rows), after != nil, nil
}
