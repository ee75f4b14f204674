package producer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/driverrows"
	"github.com/droverhq/drover/internal/lease"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// claimStore is an in-memory store of one queue that serves JobClaim and
// logs every claim it is asked for and what it returned. The rest of droverdriver.Executor is never called by a
// producer's fetch loop.
type claimStore struct {
	droverdriver.Executor

	mu        sync.Mutex
	available map[int64]bool
	priority  map[int64]int // of the jobs added with a priority; 0 for the others
	next      int64         // the highest job ID handed out by add
	log       []claimCall
	// hold, when set, makes the next claim take its rows, report on
	// entered and wait for hold before it returns them: a claim whose
	// snapshot was taken before jobs committed, returning after they did.
	hold, entered chan struct{}
	// fail is how many of the next claims fail with errDown.
	fail int
}

var errDown = errors.New("store down")

type claimCall struct {
	max, got int
	after    bool // the claim started past a position
}

// add makes n more jobs available, numbered after the highest so far.
func (s *claimStore) add(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.next++
		s.available[s.next] = true
	}
}

// addFirst makes one more job available that sorts before every other
// (a higher priority), and returns its ID.
func (s *claimStore) addFirst() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.available[s.next] = true
	s.priority[s.next] = -1
	return s.next
}

func newClaimStore(jobs int) *claimStore {
	s := &claimStore{available: make(map[int64]bool, jobs), priority: map[int64]int{}}
	for id := range int64(jobs) {
		s.available[id+1] = true
	}
	s.next = int64(jobs)
	return s
}

func (s *claimStore) JobClaim(ctx context.Context, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	rows, err := s.take(p)
	s.mu.Lock()
	hold, entered := s.hold, s.entered
	s.hold = nil
	s.mu.Unlock()
	if hold != nil {
		entered <- struct{}{}
		<-hold
	}
	return rows, err
}

func (s *claimStore) take(p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 {
		s.fail--
		return nil, errDown
	}
	var rows []*drovertype.JobRow
	for id := range s.available {
		row := &drovertype.JobRow{ID: id, Queue: p.Queue, Attempt: 1, Priority: s.priority[id]}
		if p.After == nil || p.After.Compare(droverdriver.PositionOf(row)) < 0 {
			rows = append(rows, row)
		}
	}
	driverrows.SortClaimed(rows)
	rows = rows[:min(len(rows), p.Max)]
	for _, row := range rows {
		delete(s.available, row.ID)
	}
	s.log = append(s.log, claimCall{max: p.Max, got: len(rows), after: p.After != nil})
	return rows, nil
}

// TestBacklogRunsOnce runs a backlog through a producer whose capacity
// holds one claim at a time, and checks that every job ran exactly once and
// that no claim took more jobs than it asked for.
func TestBacklogRunsOnce(t *testing.T) {
	const jobs = 400
	store := newClaimStore(jobs)
	var mu sync.Mutex
	runs := make(map[int64]int)
	run := func(_ context.Context, row *drovertype.JobRow) droverdriver.Result {
		mu.Lock()
		defer mu.Unlock()
		runs[row.ID]++
		return droverdriver.Result{ID: row.ID, Attempt: row.Attempt, Outcome: droverdriver.OutcomeCompleted}
	}
	_, stop := startProducer(t, store, run, Config{Queue: "q", MaxWorkers: 10, ClaimMax: 10,
		PollInterval: 10 * time.Millisecond})
	waitfor.Cond(t, "every job to run", func() bool { mu.Lock(); defer mu.Unlock(); return len(runs) == jobs })
	stop()

	for id, n := range runs {
		if n != 1 {
			t.Fatalf("job %d ran %d times", id, n)
		}
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.available) != 0 {
		t.Fatalf("%d jobs never claimed", len(store.available))
	}
	for i, c := range store.log {
		if c.got > c.max {
			t.Fatalf("claim %d got %d jobs, over its max of %d", i, c.got, c.max)
		}
	}
}

// TestWakeReportsRoom checks what Wake reports to listeners: the free
// capacity of an idle producer, nothing once claimed jobs fill it, and
// nothing once it stops.
func TestWakeReportsRoom(t *testing.T) {
	const workers = 4
	store := newClaimStore(0)
	release := make(chan struct{})
	started := make(chan struct{}, 2*workers)
	run := func(_ context.Context, row *drovertype.JobRow) droverdriver.Result {
		started <- struct{}{}
		<-release
		return droverdriver.Result{ID: row.ID, Attempt: row.Attempt, Outcome: droverdriver.OutcomeCompleted}
	}
	p, stop := startProducer(t, store, run, Config{Queue: "q", MaxWorkers: workers, PollInterval: time.Hour})
	waitfor.Cond(t, "the first, empty claim", func() bool { store.mu.Lock(); defer store.mu.Unlock(); return len(store.log) > 0 })
	// No job has run yet, so nothing is buffered beyond the workers.
	if room := p.Wake(); room != workers {
		t.Fatalf("idle producer reports room %d, want %d", room, workers)
	}

	store.add(20)
	p.Wake()
	for range workers {
		<-started
	}
	waitfor.Cond(t, "every slot taken", func() bool { return p.inflight.Load() == workers })
	if room := p.Wake(); room != 0 {
		t.Fatalf("producer with every slot taken reports room %d, want 0", room)
	}

	close(release)
	stop()
	if room := p.Wake(); room != 0 {
		t.Fatalf("stopped producer reports room %d, want 0", room)
	}
}

// TestWakeDuringShortClaim checks that a wake-up arriving while a claim
// runs is not lost when that claim, which looked before the announced jobs
// committed, comes back short: the producer claims again at once instead
// of waiting for its poll (an hour here).
func TestWakeDuringShortClaim(t *testing.T) {
	store := newClaimStore(0)
	ran := make(chan int64, 10)
	run := func(_ context.Context, row *drovertype.JobRow) droverdriver.Result {
		ran <- row.ID
		return droverdriver.Result{ID: row.ID, Attempt: row.Attempt, Outcome: droverdriver.OutcomeCompleted}
	}
	p, _ := startProducer(t, store, run, Config{Queue: "q", MaxWorkers: 4, PollInterval: time.Hour})
	waitfor.Cond(t, "the first, empty claim", func() bool { store.mu.Lock(); defer store.mu.Unlock(); return len(store.log) > 0 })

	hold, entered := make(chan struct{}), make(chan struct{}, 1)
	store.mu.Lock()
	store.hold, store.entered = hold, entered
	store.mu.Unlock()
	p.Wake()
	<-entered // the claim has looked: nothing there yet
	store.add(3)
	p.Wake()
	waitfor.Cond(t, "the fetch loop to take the wake-up", func() bool { return len(p.wake) == 0 })
	close(hold) // the claim comes back empty

	got := map[int64]bool{}
	timeout := time.After(10 * time.Second)
	for len(got) < 3 {
		select {
		case id := <-ran:
			got[id] = true
		case <-timeout:
			t.Fatalf("ran %v of jobs 1-3: the wake-up during the short claim was lost", got)
		}
	}
}

// TestShortPositionalClaimLooksFromTheHead makes a slow claim start a
// span of claims past the producer's position, then adds a job that sorts
// before that position, and checks that it runs: the positional claim that
// finds nothing past the position is followed at once by one from the
// head, rather than by a wait for a wake-up that does not come (the poll
// is an hour here).
func TestShortPositionalClaimLooksFromTheHead(t *testing.T) {
	store := newClaimStore(3)
	hold, entered := make(chan struct{}), make(chan struct{}, 1)
	store.hold, store.entered = hold, entered
	ran := make(chan int64, 10)
	run := func(_ context.Context, row *drovertype.JobRow) droverdriver.Result {
		ran <- row.ID
		return droverdriver.Result{ID: row.ID, Attempt: row.Attempt, Outcome: droverdriver.OutcomeCompleted}
	}
	p, _ := startProducer(t, store, run, Config{Queue: "q", MaxWorkers: 4, PollInterval: time.Hour})
	<-entered
	time.Sleep(2 * slowClaim) // the store is slow: the claim starts a span
	close(hold)
	for range 3 {
		<-ran
	}
	first := store.addFirst()
	p.Wake()
	select {
	case id := <-ran:
		if id != first {
			t.Fatalf("ran job %d, want %d", id, first)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("job %d, which sorts before the position, did not run", first)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if n := len(store.log); n < 3 {
		t.Fatalf("%d claims, want the slow one, one past its position and one from the head", n)
	}
}

// TestFromHeadNeverClaimsPastAPosition checks a producer on a store whose
// claim index keeps no entries of claimed rows (Config.FromHead, SQLite):
// a slow claim (here the store holds it, as SQLite's writer holds the
// claims of a client's other queues) must not start claims past a
// position, which there only add a claim from the head at the end of
// each span.
func TestFromHeadNeverClaimsPastAPosition(t *testing.T) {
	store := newClaimStore(3)
	hold, entered := make(chan struct{}), make(chan struct{}, 1)
	store.hold, store.entered = hold, entered
	ran := make(chan int64, 10)
	run := func(_ context.Context, row *drovertype.JobRow) droverdriver.Result {
		ran <- row.ID
		return droverdriver.Result{ID: row.ID, Attempt: row.Attempt, Outcome: droverdriver.OutcomeCompleted}
	}
	p, _ := startProducer(t, store, run, Config{Queue: "q", MaxWorkers: 4, PollInterval: time.Hour, FromHead: true})
	<-entered
	time.Sleep(2 * slowClaim) // the store is slow: without FromHead, the claim starts a span
	close(hold)
	for range 3 {
		<-ran
	}
	store.add(2)
	p.Wake()
	for range 2 {
		<-ran
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	for i, c := range store.log {
		if c.after {
			t.Errorf("claim %d of %v started past a position", i, store.log)
		}
	}
}

// TestBufferFollowsRunTime checks the local buffer against handler run
// times: short jobs get the whole prefetch (ClaimMax, or MaxWorkers if
// that is more), jobs that run longer than prefetchHorizon
// get a buffer of what the workers start within it, and the claims of such
// a producer never hold more than that.
func TestBufferFollowsRunTime(t *testing.T) {
	const workers = 4
	tests := []struct {
		name         string
		run          time.Duration
		claimMax     int
		jobs         int
		limit, lowAt int64
	}{
		{"short jobs buffer a full claim", 0, 0, 2000, workers + ClaimMaxDefault, ClaimMaxDefault / 2},
		{"short jobs buffer at least MaxWorkers", 0, 2, 200, 2 * workers, 2},
		{"slow jobs buffer what starts within the horizon", 3 * prefetchHorizon, 0, 2 * workers, workers + 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := newClaimStore(tc.jobs)
			var mu sync.Mutex
			ran, held := 0, int64(0)
			run := func(_ context.Context, row *drovertype.JobRow) droverdriver.Result {
				time.Sleep(tc.run)
				mu.Lock()
				ran++
				mu.Unlock()
				return droverdriver.Result{ID: row.ID, Attempt: row.Attempt, Outcome: droverdriver.OutcomeCompleted}
			}
			var p *Producer
			p, stop := startProducer(t, store, run, Config{Queue: "q", MaxWorkers: workers, ClaimMax: tc.claimMax,
				PollInterval: 10 * time.Millisecond})
			waitfor.Cond(t, "every job to run", func() bool {
				mu.Lock()
				defer mu.Unlock()
				if h := p.inflight.Load(); ran > workers && h > held {
					held = h // what it holds once its run times are known
				}
				return ran == tc.jobs
			})
			stop()
			if limit, lowAt := p.capacity(); limit != tc.limit || lowAt != tc.lowAt {
				t.Fatalf("capacity %d, claims from %d free; want %d and %d", limit, lowAt, tc.limit, tc.lowAt)
			}
			if held > tc.limit {
				t.Fatalf("held %d jobs at once, more than the capacity %d", held, tc.limit)
			}
		})
	}
}

// startProducer runs a producer on store until the returned stop is
// called (or the test ends).
func startProducer(t *testing.T, store *claimStore, run Runner, cfg Config) (*Producer, func()) {
	t.Helper()
	cfg.Owner, cfg.Lease = "o", time.Minute
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	p := New(store, lease.NewTracker(), func(droverdriver.Result) {}, run, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		p.Run(ctx)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-stopped
		})
	}
	t.Cleanup(stop)
	return p, stop
}

// TestClaimOutageLogsOnce fails the first claims of a producer and checks
// that the outage is logged once when it begins and once when claims work
// again, not once per failed claim.
func TestClaimOutageLogsOnce(t *testing.T) {
	const failures = 3
	store := newClaimStore(5)
	store.fail = failures
	var mu sync.Mutex
	var logs bytes.Buffer
	ran := 0
	run := func(_ context.Context, row *drovertype.JobRow) droverdriver.Result {
		mu.Lock()
		defer mu.Unlock()
		ran++
		return droverdriver.Result{ID: row.ID, Attempt: row.Attempt, Outcome: droverdriver.OutcomeCompleted}
	}
	_, stop := startProducer(t, store, run, Config{Queue: "q", MaxWorkers: 10, PollInterval: time.Hour,
		Logger: slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &logs}, nil))})
	waitfor.Cond(t, "every job to run", func() bool { mu.Lock(); defer mu.Unlock(); return ran == 5 })
	stop()

	mu.Lock()
	defer mu.Unlock()
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `msg="claiming jobs failed; retrying" queue=q error="store down"`) ||
		!strings.Contains(lines[1], `msg="claiming jobs works again" queue=q`) || !strings.Contains(lines[1], "failures=3") {
		t.Errorf("logged:\n%s\nwant one line for the first failure and one for the recovery after 3", logs.String())
	}
}

// lockedWriter serialises writes to w under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
