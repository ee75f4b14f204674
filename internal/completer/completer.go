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
	outagelog "github.com/droverhq/drover/internal/outage"
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

// Completer batches results. Run it in a goroutine; Submit from any number
// of goroutines.
type Completer struct {
	cfg  Config
	exec Store
	in   chan droverdriver.Result
	done chan struct{}
	// batchLane admits one flush with batch members at a time. Every
	// such flush updates its batches' counter rows, which concurrent
	// flushes would queue on in the store (row locks held until each
	// commits); one at a time, the results that arrive meanwhile gather
	// into the next flush instead. Measured with `drover bench runs`
	// (docs/design/workflows-and-batches.md): +9% at 3 processes, −3% at 1, both within
	// this machine's noise; kept for the mechanism.
	batchLane chan struct{}
	// failures logs the start and end of an outage once, not every retry
	// of every flush.
	failures *outagelog.Reporter
}

// Store is what a completer writes through: the engine's finish on a
// driver (engine.Finisher), which may also report refusals
// (droverdriver.RefusalReporter). JobGet is the probe that tells a refusal
// from an outage.
type Store interface {
	JobFinish(ctx context.Context, results []droverdriver.Result) ([]int64, error)
	JobGet(ctx context.Context, id int64) (*droverdriver.JobRow, error)
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
	return &Completer{cfg: cfg, exec: exec, in: make(chan droverdriver.Result, cfg.Buffer), done: make(chan struct{}),
		batchLane: make(chan struct{}, 1), failures: &outagelog.Reporter{Logger: cfg.Logger, What: "writing job results"}}
}

// Submit queues one result, blocking while the buffer is full.
func (c *Completer) Submit(r droverdriver.Result) {
	c.in <- r
}

// Close tells Run that no more results will come; Run flushes what it has
// and returns. Submit must not be called after Close.
func (c *Completer) Close() {
	close(c.in)
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
		var first droverdriver.Result
		select {
		case r, ok := <-c.in:
			if !ok {
				return
			}
			first = r
		case <-ctx.Done():
			return
		}
		batch := make([]droverdriver.Result, 1, c.cfg.BatchSize)
		batch[0] = first
		members := isMember(first)
		// Wait for a flush slot, and for the cooldown since the previous
		// flush began, while gathering: everything that arrives meanwhile
		// joins this batch.
		var cooldown <-chan time.Time
		gap := min(max(c.cfg.Cooldown, time.Duration(lastTook.Load())), maxStretch*c.cfg.Cooldown)
		if wait := time.Until(lastFlush.Add(gap)); wait > 0 {
			cooldown = time.After(wait)
		}
	gather:
		for len(batch) < c.cfg.BatchSize {
			var slot, lane chan struct{}
			if cooldown == nil {
				if members {
					lane = c.batchLane
				} else {
					slot = slots
				}
			}
			select {
			case r, ok := <-c.in:
				if !ok {
					break gather
				}
				batch = append(batch, r)
				members = members || isMember(r)
			case <-cooldown:
				cooldown = nil
			case slot <- struct{}{}:
				goto flush
			case lane <- struct{}{}:
				slots <- struct{}{}
				goto flush
			}
		}
		if members {
			c.batchLane <- struct{}{}
		}
		slots <- struct{}{}
	flush:
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
		}(batch, members)
	}
}

// isMember reports whether r's job belongs to a batch (see batchLane).
func isMember(r droverdriver.Result) bool { return r.Flow&droverdriver.FlowBatchMember != 0 }

// Done is closed when Run has returned.
func (c *Completer) Done() <-chan struct{} { return c.done }

// flush writes batch, retrying failures until it is written or ctx ends,
// and reports how long the statement that wrote it took. See write for
// what happens to a batch the store refuses.
func (c *Completer) flush(ctx context.Context, batch []droverdriver.Result) (took time.Duration, ok bool) {
	return c.write(ctx, batch, false)
}
