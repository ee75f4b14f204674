package producer

import (
	"sync"
	"time"

	"github.com/droverhq/drover/drovertype"
)

// drainHorizon bounds how long a claimed job waits in the queue while
// workers are free. A producer keeps as many workers busy as drain its
// queue within it, judged from its handlers' recent run times: 500 noop
// jobs are drained by one or two workers looping, while 500 jobs of 10 ms
// get a worker each, up to MaxWorkers.
const drainHorizon = time.Millisecond

// eagerRows is how many queued rows always get workers of their own, as
// far as max allows. A claim of a few jobs is a trickle, not a backlog:
// starting them all at once costs a few wake-ups, while running them one
// after another on one worker made their results reach the completer in
// claim order, older keys first, which let one flood key win a flush over
// a late key again and again (TestKeyLimitIsFairAcrossKeys: a median of
// 24 flood starts beside the late key's 5, against 12 with a goroutine per
// job and with this).
const eagerRows = 8

// pool runs a producer's claimed jobs on at most max worker goroutines.
//
// A worker that finishes a job takes the next one from the queue without
// parking, so a busy producer starts a job with a lock and no goroutine
// switch. Idle workers are woken only while the busy ones would take longer
// than drainHorizon to drain the queue (from the mean run time), and last
// in, first out: a producer of short jobs runs them on a few warm workers
// instead of waking one of its MaxWorkers per job. Measured against a
// goroutine per job and against waking a worker per job, on noop jobs with
// 1,000 workers: creating, growing and ending a goroutine per job took
// about 1.2 µs of a job's 7 µs of client CPU, and waking a worker per job
// put every one of the 1,000 stacks to use, which each garbage collection
// then shrank and the next job grew again (copystack was a fifth of the
// CPU). See docs/design/claim-and-flush.md.
//
// A job's run time is only known once it ends, so a row waiting longer than
// drainHorizon while no worker took one from the queue (its workers are
// all in jobs longer than the mean) gets a worker of its own, as every
// queued row does then: no row waits behind a slow job while a worker is
// free for more than drainHorizon.
type pool struct {
	run     func(claimed)
	max     int
	meanRun func() time.Duration // 0 while unknown

	mu     sync.Mutex
	queue  []claimed // waiting jobs, from head
	head   int
	idle   []*poolWorker // parked workers, the most recent last
	live   int           // workers started and not yet exited
	closed bool
	// taken counts the rows workers took from the queue; the watchdog
	// compares it with its value when it was armed.
	taken    int64
	watchdog *time.Timer
	armed    bool
	armedAt  int64 // taken when the watchdog was armed
	wg       sync.WaitGroup
}

// claimed is a claimed attempt: its row and the context its handler will
// run under.
type claimed struct {
	row *drovertype.JobRow
	ctx *JobContext
}

// poolWorker is a parked worker's inbox: the next job to run, or closed
// when the pool closes.
type poolWorker struct {
	next chan claimed
}

func newPool(max int, meanRun func() time.Duration, run func(claimed)) *pool {
	return &pool{run: run, max: max, meanRun: meanRun}
}

// push queues rows and starts as many of them on workers as the queue
// needs (balance). It never blocks.
func (p *pool) push(rows []claimed) {
	p.mu.Lock()
	for _, row := range rows {
		p.enqueue(row)
	}
	if !p.closed {
		p.balance(false)
	}
	p.mu.Unlock()
}

// balance hands queued rows to idle or new workers while the busy ones
// would take longer than drainHorizon to drain the queue or no more than
// eagerRows wait, or, with all, while any row waits. When rows stay queued with workers to spare, it
// arms the watchdog. Called with mu held.
func (p *pool) balance(all bool) {
	mean := p.meanRun()
	for p.queued() > 0 && (len(p.idle) > 0 || p.live < p.max) {
		busy := p.live - len(p.idle)
		if !all && p.queued() > eagerRows && mean > 0 && busy > 0 && time.Duration(p.queued())*mean <= time.Duration(busy)*drainHorizon {
			p.arm()
			return
		}
		row, _ := p.dequeue()
		if n := len(p.idle); n > 0 {
			w := p.idle[n-1]
			p.idle[n-1] = nil
			p.idle = p.idle[:n-1]
			w.next <- row // buffered: the worker is parked on it
		} else {
			p.live++
			p.wg.Add(1)
			go p.work(row)
		}
	}
}

// queued is the number of rows waiting. Called with mu held.
func (p *pool) queued() int { return len(p.queue) - p.head }

// arm starts the watchdog unless it runs. Called with mu held.
func (p *pool) arm() {
	if p.armed {
		return
	}
	p.armed, p.armedAt = true, p.taken
	if p.watchdog == nil {
		p.watchdog = time.AfterFunc(drainHorizon, p.watch)
		return
	}
	p.watchdog.Reset(drainHorizon)
}

// watch runs drainHorizon after the watchdog was armed: if no worker took
// a row from the queue since, every queued row gets a worker (as far as
// max allows); otherwise the queue is draining and it balances again.
func (p *pool) watch() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = false
	if p.closed {
		return
	}
	p.balance(p.taken == p.armedAt)
}

// enqueue appends row to the queue. Called with mu held.
func (p *pool) enqueue(row claimed) {
	if p.head > 0 && 2*p.head >= len(p.queue) {
		n := copy(p.queue, p.queue[p.head:])
		clear(p.queue[n:])
		p.queue, p.head = p.queue[:n], 0
	}
	p.queue = append(p.queue, row)
}

// dequeue returns the oldest queued job, if any. Called with mu held.
func (p *pool) dequeue() (claimed, bool) {
	if p.head == len(p.queue) {
		return claimed{}, false
	}
	row := p.queue[p.head]
	p.queue[p.head] = claimed{}
	p.head++
	if p.head == len(p.queue) {
		p.queue, p.head = p.queue[:0], 0
	}
	return row, true
}

// work runs row, then queued rows while there are any, then parks until
// balance hands it another or the pool closes.
func (p *pool) work(row claimed) {
	defer p.wg.Done()
	// A job that ends its goroutine (runtime.Goexit) takes the worker
	// with it: the pool must not count it as live any more.
	inJob := false
	defer func() {
		if inJob {
			p.mu.Lock()
			p.live--
			p.mu.Unlock()
		}
	}()
	growStack()
	var w *poolWorker
	for {
		inJob = true
		p.run(row)
		inJob = false
		p.mu.Lock()
		if !p.closed {
			var ok bool
			if row, ok = p.dequeue(); ok {
				p.taken++
				p.mu.Unlock()
				continue
			}
		}
		if p.closed {
			p.live--
			p.mu.Unlock()
			return
		}
		if w == nil {
			w = &poolWorker{next: make(chan claimed, 1)}
		}
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		var ok bool
		if row, ok = <-w.next; !ok {
			return
		}
	}
}

// close stops the pool: idle workers exit, busy ones exit after their
// job, and no queued row is started any more. It returns the rows that
// were still queued, for the caller to hand back.
func (p *pool) close() []claimed {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.watchdog != nil {
		p.watchdog.Stop()
	}
	var left []claimed
	for row, ok := p.dequeue(); ok; row, ok = p.dequeue() {
		left = append(left, row)
	}
	for _, w := range p.idle {
		close(w.next)
		p.live--
	}
	p.idle = nil
	return left
}

// wait waits until every worker has exited.
func (p *pool) wait() { p.wg.Wait() }
