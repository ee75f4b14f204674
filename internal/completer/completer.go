// Package completer writes the outcomes of job attempts to the store in
// batches. Workers hand results over and move on; the completer turns
// whatever has accumulated into one statement, so a process finishing
// 100,000 jobs a second issues a few hundred statements, not 100,000.
package completer

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	outagelog "github.com/droverhq/drover/internal/outage"
	"github.com/droverhq/drover/internal/testsignal"
)

// Defaults for Config. Two flushes in flight rather than more: every flush
// statement is planned afresh (droverpg's replan), so fewer, larger flushes
// spend less of the database's CPU per job. Four measured 10% fewer noop
// jobs a second than two on PostgreSQL (docs/design/claim-and-flush.md); one was no
// better than two and lets one slow flush hold up every result.
const (
	BatchSizeDefault   = 1000
	MaxInFlightDefault = 2
	CooldownDefault    = time.Millisecond
)

// maxStretch bounds how far a slow flush stretches the cooldown (see
// Config.Cooldown), in cooldowns: a flush slowed by a lock wait or a
// hiccup of the store must not hold the next results back for as long.
const maxStretch = 10

// Config tunes a Completer.
type Config struct {
	// BatchSize caps the results of one statement.
	BatchSize int
	// MaxInFlight caps concurrent flushes. While they are all busy, new
	// results accumulate into the next batch, so batches grow exactly when
	// the store is the bottleneck and stay small (low latency) when not.
	MaxInFlight int
	// Buffer is how many results may wait before Submit blocks, pushing
	// back on workers when the store falls behind.
	Buffer int
	// Cooldown is the least time between the starts of two flushes. It
	// only bites when results trickle in faster than flushes finish
	// (many small jobs, many clients): each result then waits at most this
	// long, and the store sees one commit per cooldown instead of one per
	// job. While the store is busy the cooldown stretches to the time
	// the last flush statement took, up to maxStretch cooldowns: a
	// process whose jobs wait on I/O finishes them in a steady stream,
	// and flushing it as fast as two slots allow made flushes of a dozen
	// results each, whose per-statement cost (planning above all) then
	// took much of the database's CPU. Flushing no more often than the
	// store takes to write one doubled their size and gave 10 ms jobs at
	// 8 processes 6% more throughput (docs/design/claim-and-flush.md).
	Cooldown time.Duration
	Logger   *slog.Logger
	// OnFlushed is called after each successful flush with the results it
	// covered and the IDs the store accepted (fencing may reject some).
	OnFlushed func(results []droverdriver.Result, accepted []int64, took time.Duration)
	// OnDropped is called with a result the completer gives up on: the
	// store refused it and its replacement too. Its job is left to its
	// lease, so the caller must stop extending that lease.
	OnDropped func(r droverdriver.Result)
}

// TestSignals are what a completer tells a test (internal/testsignal).
type TestSignals struct {
	// Flushed is sent after each flush, written or given up on, with the
	// number of results it carried.
	Flushed testsignal.Signal[int]
}

// Init turns the signals on, for tests only.
func (s *TestSignals) Init() { s.Flushed.Init() }

// Completer batches results. Run it in a goroutine; Submit from any number
// of goroutines.
//
// Results wait in a slice under a lock, which a flush takes whole: a
// result costs an append, where a channel cost a send and a receive per
// result (BenchmarkRuntimeNoop: the completer's share of a noop job's
// client CPU fell from about 0.3 to 0.15 µs).
type Completer struct {
	cfg  Config
	exec Store

	mu      sync.Mutex
	pending []droverdriver.Result
	members int // batch members in pending
	closed  bool
	// space is signalled when a flush takes pending results, for Submit
	// waiting for room.
	space *sync.Cond
	// ready wakes Run when a first result is pending, full when
	// BatchSize are (which cuts its cooldown short); Close sends both.
	ready, full chan struct{}
	// spare holds the slices of written batches, which take reuses for
	// the results that gather next, rather than make new ones per flush.
	spare chan []droverdriver.Result
	done  chan struct{}
	// batchLane admits one flush with batch members at a time. Every
	// such flush updates its batches' counter rows, which concurrent
	// flushes would queue on in the store (row locks held until each
	// commits); one at a time, the results that arrive meanwhile gather
	// into the next flush instead. Measured with `drover bench runs`
	// (docs/design/workflows-and-batches.md): +9% at 3 processes, −3% at 1, both within
	// this machine's noise; kept for the mechanism.
	batchLane chan struct{}
	// writer writes each flush, waiting out outages (logged once, not
	// every retry of every flush) and splitting what the store refuses
	// (refuse.go).
	writer *writer

	// TestSignals are off unless a test initialised them before Run.
	TestSignals TestSignals
}

// Store is what a completer writes through: the engine's finish on a
// driver (engine.Finisher), which may also report refusals
// (droverdriver.RefusalReporter). JobGet is the probe that tells a refusal
// from an outage.
type Store interface {
	JobFinish(ctx context.Context, results []droverdriver.Result) ([]int64, error)
	JobGet(ctx context.Context, id int64) (*drovertype.JobRow, error)
}

// New returns a completer writing through exec.
func New(exec Store, cfg Config) *Completer {
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = BatchSizeDefault
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = MaxInFlightDefault
	}
	if cfg.Cooldown == 0 {
		cfg.Cooldown = CooldownDefault
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = cfg.BatchSize * cfg.MaxInFlight
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Completer{cfg: cfg, exec: exec, ready: make(chan struct{}, 1), full: make(chan struct{}, 1), done: make(chan struct{}),
		spare:     make(chan []droverdriver.Result, cfg.MaxInFlight+1),
		batchLane: make(chan struct{}, 1)}
	c.writer = &writer{exec: exec, logger: cfg.Logger, failures: &outagelog.Reporter{Logger: cfg.Logger, What: "writing job results"},
		written: func(batch []droverdriver.Result, accepted []int64, took time.Duration) {
			if cfg.OnFlushed != nil {
				cfg.OnFlushed(batch, accepted, took)
			}
		},
		dropped: cfg.OnDropped}
	c.space = sync.NewCond(&c.mu)
	return c
}

// Submit queues one result, blocking while the buffer is full.
func (c *Completer) Submit(r droverdriver.Result) {
	c.mu.Lock()
	for len(c.pending) >= c.cfg.Buffer {
		c.space.Wait()
	}
	c.pending = append(c.pending, r)
	if isMember(r) {
		c.members++
	}
	n := len(c.pending)
	c.mu.Unlock()
	if n == 1 {
		signal(c.ready)
	}
	if n == c.cfg.BatchSize {
		signal(c.full)
	}
}

// signal sends on a channel of capacity 1 unless a send is pending.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Close tells Run that no more results will come; Run flushes what it has
// and returns. Submit must not be called after Close.
func (c *Completer) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	signal(c.ready)
	signal(c.full)
}

// Run flushes results until Close is called and everything is written, or
// until ctx ends (results still unwritten then are left to the lease
// rescuer: their jobs run again, nothing is lost). Failed flushes are retried
// with backoff, so a database outage delays completions instead of dropping
// them; a flush the store refuses for its values is split instead, so that
// one result cannot hold up the others (refuse.go).
func (c *Completer) Run(ctx context.Context) {
	defer close(c.done)
	slots := make(chan struct{}, c.cfg.MaxInFlight)
	var lastFlush time.Time
	// lastTook is how long the last flush statement took (Config.Cooldown).
	var lastTook atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		// Wait for a first result.
		c.mu.Lock()
		for len(c.pending) == 0 {
			if c.closed {
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			select {
			case <-c.ready:
			case <-ctx.Done():
				return
			}
			c.mu.Lock()
		}
		closed, members := c.closed, c.members > 0
		c.mu.Unlock()
		// Wait for the cooldown since the previous flush began, while
		// results gather; a full batch or Close cuts it short.
		gap := min(max(c.cfg.Cooldown, time.Duration(lastTook.Load())), maxStretch*c.cfg.Cooldown)
		if wait := time.Until(lastFlush.Add(gap)); wait > 0 && !closed {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-c.full:
			case <-ctx.Done():
				t.Stop()
				return
			}
			t.Stop()
		}
		// Wait for a flush slot, and for the lane if batch members are
		// pending, while results keep gathering.
		lane := false
		if members {
			if !acquire(ctx, c.batchLane) {
				return
			}
			lane = true
		}
		if !acquire(ctx, slots) {
			return
		}
		batch, hasMembers := c.take()
		switch {
		case hasMembers && !lane:
			// A member came after the look above.
			if !acquire(ctx, c.batchLane) {
				<-slots
				return
			}
		case !hasMembers && lane:
			<-c.batchLane
		}
		lastFlush = time.Now()
		wg.Add(1)
		go func(batch []droverdriver.Result, members bool) {
			defer wg.Done()
			defer func() {
				<-slots
				if members {
					<-c.batchLane
				}
			}()
			if took, ok := c.flush(ctx, batch); ok {
				lastTook.Store(int64(took))
			}
			c.TestSignals.Flushed.Send(len(batch))
			clear(batch) // drop what the results point to
			select {
			case c.spare <- batch[:0]:
			default:
			}
		}(batch, hasMembers)
	}
}

// acquire sends on ch (a semaphore) unless ctx ends first.
func acquire(ctx context.Context, ch chan struct{}) bool {
	select {
	case ch <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// take removes the oldest pending results, at most BatchSize, and reports
// whether any of them is a batch member.
func (c *Completer) take() (batch []droverdriver.Result, members bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(c.pending), c.cfg.BatchSize)
	batch = c.pending[:n]
	var next []droverdriver.Result
	select {
	case next = <-c.spare:
	default:
		next = make([]droverdriver.Result, 0, max(c.cfg.BatchSize, len(c.pending)-n))
	}
	c.pending = append(next, c.pending[n:]...)
	taken := 0
	for i := range batch {
		if isMember(batch[i]) {
			taken++
		}
	}
	c.members -= taken
	if len(c.pending) < c.cfg.BatchSize {
		select {
		case <-c.full:
		default:
		}
	}
	c.space.Broadcast()
	return batch, taken > 0
}

// isMember reports whether r's job belongs to a batch (see batchLane).
func isMember(r droverdriver.Result) bool { return r.Flow&droverdriver.FlowBatchMember != 0 }

// Done is closed when Run has returned.
func (c *Completer) Done() <-chan struct{} { return c.done }

// flush writes batch, retrying failures until it is written or ctx ends,
// and reports how long the statement that wrote it took. See write for
// what happens to a batch the store refuses.
func (c *Completer) flush(ctx context.Context, batch []droverdriver.Result) (took time.Duration, ok bool) {
	took, err := c.writer.write(ctx, batch, false)
	if err != nil {
		c.cfg.Logger.Warn("completer stopped with unwritten results; their jobs will be rescued when their leases expire",
			"results", len(batch), "error", err)
		return 0, false
	}
	return took, true
}
