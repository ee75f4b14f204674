package producer

import (
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// poolRecorder is the run function of a pool under test: it counts the
// runs of each row and the most rows running at once, and holds the rows
// whose ID is in hold until release is closed.
type poolRecorder struct {
	mu            sync.Mutex
	runs          map[int64]int
	running, most int
	hold          map[int64]bool
	release       chan struct{}
}

func newPoolRecorder(hold ...int64) *poolRecorder {
	r := &poolRecorder{runs: map[int64]int{}, hold: map[int64]bool{}, release: make(chan struct{})}
	for _, id := range hold {
		r.hold[id] = true
	}
	return r
}

func (r *poolRecorder) run(c claimed) {
	row := c.row
	r.mu.Lock()
	r.runs[row.ID]++
	r.running++
	r.most = max(r.most, r.running)
	held := r.hold[row.ID]
	r.mu.Unlock()
	if held {
		<-r.release
	} else {
		time.Sleep(time.Duration(row.ID%3) * 100 * time.Microsecond)
	}
	r.mu.Lock()
	r.running--
	r.mu.Unlock()
}

func (r *poolRecorder) ran(id int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[id] > 0
}

func rowsFrom(first, n int64) []claimed {
	rows := make([]claimed, n)
	for i := range rows {
		rows[i] = claimed{row: &drovertype.JobRow{ID: first + int64(i)}}
	}
	return rows
}

func fixedMean(d time.Duration) func() time.Duration { return func() time.Duration { return d } }

// TestPoolRunsEveryRowOnce pushes batches of rows into pools of every
// kind of mean run time and checks that each row ran exactly once and
// that no more than max ran at once.
func TestPoolRunsEveryRowOnce(t *testing.T) {
	t.Parallel()
	for _, mean := range []time.Duration{0, time.Microsecond, 10 * time.Millisecond} {
		t.Run(mean.String(), func(t *testing.T) {
			t.Parallel()
			const max, batches, batch = 8, 20, 25
			r := newPoolRecorder()
			p := newPool(max, fixedMean(mean), r.run)
			for b := range int64(batches) {
				p.push(rowsFrom(b*batch+1, batch))
			}
			waitfor.Cond(t, "every row to run", func() bool {
				r.mu.Lock()
				defer r.mu.Unlock()
				return len(r.runs) == batches*batch
			})
			if left := p.close(); len(left) != 0 {
				t.Fatalf("close returned %d rows after all ran", len(left))
			}
			p.wait()
			for id, n := range r.runs {
				if n != 1 {
					t.Errorf("row %d ran %d times", id, n)
				}
			}
			if r.most > max {
				t.Errorf("%d rows ran at once, more than max %d", r.most, max)
			}
		})
	}
}

// TestPoolQueuedRowsPassASlowJob holds the first job of a pool whose mean
// run time says one worker drains its queue, and checks that more rows
// than eagerRows queued behind it still start: the watchdog gives them
// workers of their own, since no worker took one from the queue.
func TestPoolQueuedRowsPassASlowJob(t *testing.T) {
	t.Parallel()
	const queued = 3 * eagerRows
	r := newPoolRecorder(1)
	p := newPool(4*eagerRows, fixedMean(time.Microsecond), r.run)
	p.push(rowsFrom(1, 1))
	waitfor.Cond(t, "the slow job to start", func() bool { return r.ran(1) })
	p.push(rowsFrom(2, queued))
	waitfor.Cond(t, "the rows queued behind the slow job to run", func() bool {
		for id := int64(2); id <= 1+queued; id++ {
			if !r.ran(id) {
				return false
			}
		}
		return true
	})
	close(r.release)
	p.close()
	p.wait()
}

// TestPoolSmallPushRunsAtOnce pushes a few jobs into a pool whose mean
// run time says one worker would drain them, and checks that they all run
// at once, as a goroutine each would.
func TestPoolSmallPushRunsAtOnce(t *testing.T) {
	t.Parallel()
	r := newPoolRecorder(1, 2, 3, 4)
	p := newPool(eagerRows, fixedMean(time.Microsecond), r.run)
	p.push(rowsFrom(1, 1))
	waitfor.Cond(t, "the first job to start", func() bool { return r.ran(1) })
	p.push(rowsFrom(2, 3))
	waitfor.Cond(t, "every job to start", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.running == 4
	})
	close(r.release)
	p.close()
	p.wait()
}

// TestPoolSlowJobsRunAtOnce pushes as many slow jobs as the pool has
// workers and checks that they all run at once.
func TestPoolSlowJobsRunAtOnce(t *testing.T) {
	t.Parallel()
	const max = 6
	r := newPoolRecorder(1, 2, 3, 4, 5, 6)
	p := newPool(max, fixedMean(time.Second), r.run)
	p.push(rowsFrom(1, max))
	waitfor.Cond(t, "every slow job to start", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.running == max
	})
	close(r.release)
	p.close()
	p.wait()
}

// TestPoolCloseReturnsQueuedRows fills a pool of one worker and checks
// that close hands back the rows still queued, runs none of them, and
// that wait returns once the running job has.
func TestPoolCloseReturnsQueuedRows(t *testing.T) {
	t.Parallel()
	r := newPoolRecorder(1)
	p := newPool(1, fixedMean(0), r.run)
	p.push(rowsFrom(1, 4))
	waitfor.Cond(t, "the first job to start", func() bool { return r.ran(1) })
	left := p.close()
	if len(left) != 3 || left[0].row.ID != 2 || left[1].row.ID != 3 || left[2].row.ID != 4 {
		t.Fatalf("close returned %d rows (%v), want rows 2, 3 and 4 in order", len(left), left)
	}
	done := make(chan struct{})
	go func() { p.wait(); close(done) }()
	select {
	case <-done:
		t.Fatal("wait returned while a job ran")
	case <-time.After(20 * time.Millisecond):
	}
	close(r.release)
	<-done
	for id := int64(2); id <= 4; id++ {
		if r.ran(id) {
			t.Errorf("row %d ran after close", id)
		}
	}
}
