package producer

import (
	"context"
	"sync"
	"time"
)

// JobContext is the context a handler runs under. It is cancelled, with a
// cause, through the Tracker (a cancel request, a lost lease, the client
// stopping) or by its producer's deadlines when its timeout passes.
//
// It costs one cancelCtx and a slot in the producer's deadline heap: no
// timer and no registration on a parent context of its own. A
// context.WithTimeout per job measured 1 µs of a noop job's 7 µs of client
// CPU: a timer, a second context, and the first context's Done channel and
// children map, both made only to link the two. It is made when its
// attempt is claimed, so that the Tracker knows how to interrupt it from
// the start, and its timeout's cause is part of it, so that a timeout
// costs no allocation of its own.
//
// Its inner context is a real cancelCtx, so that context.Cause reports why
// the handler was interrupted and contexts derived from it hang on it as on
// any other. Err reports context.DeadlineExceeded once the timeout passed,
// as a context.WithTimeout would; a context derived from it sees
// context.Canceled then, with the same cause.
type JobContext struct {
	context.Context // the cancelCtx
	cancel          context.CancelCauseFunc
	deadlines       *deadlines
	start           time.Time
	deadline        time.Time
	// timedOut is the cause the context is cancelled with once its
	// timeout passes; its Timeout is 0 while it has none.
	timedOut TimeoutError
	index    int // in deadlines.heap; -1 outside it
}

// TimeoutError is the cause of a handler's context whose timeout passed.
type TimeoutError struct {
	Timeout time.Duration
}

func (e *TimeoutError) Error() string {
	return "job timed out after " + e.Timeout.String()
}

// newJobContexts returns the contexts of n claimed attempts, each to be
// started with begin. They are allocated together, one allocation per
// claim rather than one per attempt; a context its handler keeps after
// the attempt ended keeps the others of its claim from being collected
// until it lets go, a few hundred bytes each.
func newJobContexts(n int, d *deadlines) []JobContext {
	cs := make([]JobContext, n)
	for i := range cs {
		cs[i].init(d)
	}
	return cs
}

// init makes c the context of a claimed attempt, to be started with
// begin.
func (c *JobContext) init(d *deadlines) {
	c.Context, c.cancel = context.WithCancelCause(context.Background())
	c.deadlines, c.index = d, -1
}

// Standalone returns the context of an attempt run outside any producer
// (Client.WorkJob and Drain run one at a time in the caller's goroutine),
// started now, with a deadline heap of its own to time it out and
// cancelled when parent is, and the func that ends it: done releases the
// attempt and stops its timer. A producer's attempts do not hang on a
// parent (their Tracker cancels them); one attempt at a time can afford it.
func Standalone(parent context.Context) (jc *JobContext, done func()) {
	d := &deadlines{}
	jc = &JobContext{}
	jc.init(d)
	jc.begin(time.Now())
	stop := context.AfterFunc(parent, func() { jc.cancel(context.Cause(parent)) })
	return jc, func() {
		stop()
		jc.Release()
		d.stop()
	}
}

// begin marks the start of the attempt, from which its timeout runs.
func (c *JobContext) begin(start time.Time) { c.start = start }

// SetTimeout cancels the context with a *TimeoutError once timeout (> 0)
// has passed since the attempt started. It is called once, before the
// handler runs.
func (c *JobContext) SetTimeout(timeout time.Duration) {
	c.deadline, c.timedOut.Timeout = c.start.Add(timeout), timeout
	c.deadlines.add(c)
}

// Deadline implements context.Context.
func (c *JobContext) Deadline() (time.Time, bool) {
	if c.timedOut.Timeout > 0 {
		return c.deadline, true
	}
	return c.Context.Deadline()
}

// Err implements context.Context: DeadlineExceeded when the timeout ended
// the context, whatever else tried to cancel it afterwards.
func (c *JobContext) Err() error {
	err := c.Context.Err()
	if err != nil && c.timedOut.Timeout > 0 && context.Cause(c.Context) == error(&c.timedOut) {
		return context.DeadlineExceeded
	}
	return err
}

// Release ends the attempt: the context leaves the deadline heap and is
// cancelled, so that contexts derived from it end too.
func (c *JobContext) Release() {
	if c.timedOut.Timeout > 0 {
		c.deadlines.remove(c)
	}
	c.cancel(nil)
}

// deadlines cancels the contexts of one producer's attempts whose timeouts
// pass: a heap of them by deadline, and one timer for the earliest. A
// producer's attempts mostly share one timeout and start in order, so a
// new one usually stays at the bottom of the heap and the timer is not
// touched; when the earliest attempt ends first, the timer fires for
// nothing once and is set for the next.
type deadlines struct {
	mu    sync.Mutex
	heap  []*JobContext
	timer *time.Timer
	at    time.Time // when the timer fires; zero when it is not set
}

func (d *deadlines) add(c *JobContext) {
	d.mu.Lock()
	c.index = len(d.heap)
	d.heap = append(d.heap, c)
	d.up(c.index)
	if c.index == 0 && (d.at.IsZero() || c.deadline.Before(d.at)) {
		d.arm(c.deadline)
	}
	d.mu.Unlock()
}

func (d *deadlines) remove(c *JobContext) {
	d.mu.Lock()
	if i := c.index; i >= 0 {
		last := len(d.heap) - 1
		if i != last {
			d.swap(i, last)
		}
		d.heap[last] = nil
		d.heap = d.heap[:last]
		if i != last {
			d.down(i)
			d.up(i)
		}
		c.index = -1
	}
	d.mu.Unlock()
}

// arm sets the timer for at. Called with mu held.
func (d *deadlines) arm(at time.Time) {
	d.at = at
	wait := time.Until(at)
	if d.timer == nil {
		d.timer = time.AfterFunc(wait, d.expire)
		return
	}
	d.timer.Reset(wait)
}

// expire cancels every context whose deadline has passed and sets the
// timer for the next one.
func (d *deadlines) expire() {
	var due []*JobContext
	d.mu.Lock()
	now := time.Now()
	d.at = time.Time{}
	for len(d.heap) > 0 && !d.heap[0].deadline.After(now) {
		c := d.heap[0]
		last := len(d.heap) - 1
		d.swap(0, last)
		d.heap[last] = nil
		d.heap = d.heap[:last]
		d.down(0)
		c.index = -1
		due = append(due, c)
	}
	if len(d.heap) > 0 {
		d.arm(d.heap[0].deadline)
	}
	d.mu.Unlock()
	for _, c := range due {
		c.cancel(&c.timedOut)
	}
}

// stop stops the timer; contexts still in the heap are not cancelled.
func (d *deadlines) stop() {
	d.mu.Lock()
	if d.timer != nil {
		d.timer.Stop()
	}
	d.at = time.Time{}
	d.mu.Unlock()
}

func (d *deadlines) swap(i, j int) {
	d.heap[i], d.heap[j] = d.heap[j], d.heap[i]
	d.heap[i].index, d.heap[j].index = i, j
}

func (d *deadlines) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !d.heap[i].deadline.Before(d.heap[parent].deadline) {
			return
		}
		d.swap(i, parent)
		i = parent
	}
}

func (d *deadlines) down(i int) {
	n := len(d.heap)
	for {
		least := i
		if l := 2*i + 1; l < n && d.heap[l].deadline.Before(d.heap[least].deadline) {
			least = l
		}
		if r := 2*i + 2; r < n && d.heap[r].deadline.Before(d.heap[least].deadline) {
			least = r
		}
		if least == i {
			return
		}
		d.swap(i, least)
		i = least
	}
}
