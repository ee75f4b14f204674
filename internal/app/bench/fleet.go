package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/bench/stats"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// fleet is the set of workers a scenario measures: clients in this process
// or separate worker processes. Either way it reports cumulative counters
// so the scenario can cut windows.
type fleet interface {
	start(ctx context.Context) error
	// counters sums every worker's cumulative counters.
	counters() workerStats
	stop(ctx context.Context) error
	// pids are the worker processes' IDs, whose CPU counts as the
	// client's (none when the workers run in the bench process).
	pids() []int
}

// workerStats is what a worker reports: its client's counters plus the
// pickup latency its handlers saw.
type workerStats struct {
	drover.Stats
	// P99Ms is the 99th percentile of insert→start latency seen so far.
	P99Ms float64
	Ready bool
}

// workerStatsJSON is the line `drover worker --stats` prints: snake_case
// keys like every other --json, and every duration in milliseconds with
// the unit in its key, so that a reader never has to guess nanoseconds.
type workerStatsJSON struct {
	Claims         int64   `json:"claims"`
	ClaimedJobs    int64   `json:"claimed_jobs"`
	ClaimTimeMs    float64 `json:"claim_time_ms"`
	Ran            int64   `json:"ran"`
	RunTimeMs      float64 `json:"run_time_ms"`
	Completed      int64   `json:"completed"`
	Failed         int64   `json:"failed"`
	Rescued        int64   `json:"rescued"`
	Flushes        int64   `json:"flushes"`
	FlushedResults int64   `json:"flushed_results"`
	Written        int64   `json:"written"`
	FlushTimeMs    float64 `json:"flush_time_ms"`
	Held           int     `json:"held"`
	PickupP99Ms    float64 `json:"pickup_p99_ms"`
	Ready          bool    `json:"ready"`
}

func ms(d time.Duration) float64     { return float64(d) / float64(time.Millisecond) }
func fromMs(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

func (w workerStats) MarshalJSON() ([]byte, error) {
	return json.Marshal(workerStatsJSON{
		Claims: w.Claims, ClaimedJobs: w.ClaimedJobs, ClaimTimeMs: ms(w.ClaimTime),
		Ran: w.Ran, RunTimeMs: ms(w.RunTime), Completed: w.Completed, Failed: w.Failed, Rescued: w.Rescued,
		Flushes: w.Flushes, FlushedResults: w.FlushedResults, Written: w.Written, FlushTimeMs: ms(w.FlushTime),
		Held: w.Held, PickupP99Ms: w.P99Ms, Ready: w.Ready,
	})
}

func (w *workerStats) UnmarshalJSON(b []byte) error {
	var j workerStatsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*w = workerStats{
		Stats: drover.Stats{Claims: j.Claims, ClaimedJobs: j.ClaimedJobs, ClaimTime: fromMs(j.ClaimTimeMs),
			Ran: j.Ran, RunTime: fromMs(j.RunTimeMs), Completed: j.Completed, Failed: j.Failed, Rescued: j.Rescued,
			Flushes: j.Flushes, FlushedResults: j.FlushedResults, Written: j.Written, FlushTime: fromMs(j.FlushTimeMs),
			Held: j.Held},
		P99Ms: j.PickupP99Ms, Ready: j.Ready,
	}
	return nil
}

func (w workerStats) toCounters(backlog int64) stats.Counters {
	return stats.Counters{
		Jobs:          w.Written,
		ClaimNanos:    int64(w.ClaimTime),
		ClaimCount:    w.Claims,
		CompleteNanos: int64(w.FlushTime),
		CompleteCount: w.Flushes,
		HandlerNanos:  int64(w.RunTime),
		HandlerCount:  w.Ran,
		Backlog:       backlog,
	}
}

func add(a, b workerStats) workerStats {
	a.Claims += b.Claims
	a.ClaimedJobs += b.ClaimedJobs
	a.ClaimTime += b.ClaimTime
	a.Ran += b.Ran
	a.RunTime += b.RunTime
	a.Completed += b.Completed
	a.Failed += b.Failed
	a.Rescued += b.Rescued
	a.Flushes += b.Flushes
	a.FlushedResults += b.FlushedResults
	a.FlushTime += b.FlushTime
	a.Written += b.Written
	a.Held += b.Held
	a.P99Ms = max(a.P99Ms, b.P99Ms)
	return a
}

// workerConfig is the configuration of one worker client.
type workerConfig struct {
	Queue       string
	Concurrency int
	ClaimMax    int
	Lease       time.Duration
	PollOnly    bool
	// GlobalLimit caps the queue's running jobs across the fleet
	// (QueueConfig.GlobalMaxWorkers; 0: none).
	GlobalLimit int
	// DeleteCompleted deletes jobs as they complete (Config.DeleteCompleted).
	DeleteCompleted bool
	// Queues, above 1, serves that many queues named after Queue
	// (spreadQueues), Concurrency shared out among them.
	Queues int
}

func (w workerConfig) clientConfig(s *storeurl.Store) *drover.Config {
	names := spreadQueues(w.Queue, w.Queues)
	queues := make(map[string]drover.QueueConfig, len(names))
	for _, name := range names {
		queues[name] = drover.QueueConfig{MaxWorkers: max(1, w.Concurrency/len(names)), ClaimMax: w.ClaimMax, GlobalMaxWorkers: w.GlobalLimit}
	}
	return &drover.Config{
		Queues:          queues,
		Workers:         Workers(),
		LeaseDuration:   w.Lease,
		PollOnly:        w.PollOnly,
		DeleteCompleted: w.DeleteCompleted,
		Logger:          discardLogger(),
	}
}

// localFleet runs n clients in this process, sharing one store.
type localFleet struct {
	store *storeurl.Store
	cfg   workerConfig
	n     int
	// types, when set, makes client i a worker of type i % types
	// (routing: the bench's routed jobs).
	types   int
	clients []workerClient
}

func (f *localFleet) start(ctx context.Context) error {
	for i := range f.n {
		cfg := f.cfg.clientConfig(f.store)
		if f.types > 0 {
			cfg.Worker = drover.WorkerConfig{Type: assignType(i, f.types)}
		}
		c, err := storeurl.NewClient[workerClient](f.store, cfg)
		if err != nil {
			return err
		}
		if err := c.Start(ctx); err != nil {
			return err
		}
		f.clients = append(f.clients, c)
	}
	return nil
}

func (f *localFleet) counters() workerStats {
	var sum workerStats
	for _, c := range f.clients {
		sum = add(sum, workerStats{Stats: c.Stats()})
	}
	sum.P99Ms = pickup.Load().Snapshot().P99
	sum.Ready = true
	return sum
}

func (f *localFleet) pids() []int { return nil }

func (f *localFleet) stop(ctx context.Context) error {
	var errs []error
	for _, c := range f.clients {
		errs = append(errs, c.Stop(ctx))
	}
	return errors.Join(errs...)
}

// procFleet runs n `drover worker` processes: the bench binary re-executes
// itself, so what is measured is exactly what a user deploys.
type procFleet struct {
	env   Env
	cfg   workerConfig
	n     int
	extra []string // extra arguments, e.g. to run in a network namespace

	mu    sync.Mutex
	procs []*workerProc
}

type workerProc struct {
	cmd    *exec.Cmd
	last   workerStats
	exited chan struct{}
	err    error
	// killed marks a process the bench killed on purpose (chaos), whose
	// exit status is expected.
	killed bool
}

func (f *procFleet) start(ctx context.Context) error {
	for range f.n {
		if err := f.spawn(); err != nil {
			return err
		}
	}
	return f.waitReady(ctx)
}

// spawn starts one more worker process.
func (f *procFleet) spawn() error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary to start workers: %w", err)
	}
	args := append([]string{}, f.extra...)
	args = append(args, self, "worker",
		"--schema", f.env.Schema,
		"--queue", f.cfg.Queue,
		"--concurrency", strconv.Itoa(f.cfg.Concurrency),
		"--claim-max", strconv.Itoa(f.cfg.ClaimMax),
		"--global-limit", strconv.Itoa(f.cfg.GlobalLimit),
		"--delete-completed="+strconv.FormatBool(f.cfg.DeleteCompleted),
		"--lease", f.cfg.Lease.String(),
		"--stats", "250ms",
		"--log-level", "error",
	)
	cmd := exec.Command(args[0], args[1:]...)
	// The URL travels in the environment, not argv, so that ps never
	// shows a password. Both names are set: DROVER_DATABASE_URL, inherited
	// from the user's environment, would otherwise win over DATABASE_URL
	// and point the workers at another store than the bench's.
	cmd.Env = append(os.Environ(), "DATABASE_URL="+f.env.DatabaseURL, "DROVER_DATABASE_URL="+f.env.DatabaseURL)
	cmd.Stderr = f.env.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start worker process: %w", err)
	}
	p := &workerProc{cmd: cmd, exited: make(chan struct{})}
	f.mu.Lock()
	f.procs = append(f.procs, p)
	f.mu.Unlock()
	go f.read(p, out)
	return nil
}

// waitReady waits until every live worker has started its client, so
// start-up is not billed to the queue.
func (f *procFleet) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ready, live := 0, 0
		f.mu.Lock()
		for _, p := range f.procs {
			select {
			case <-p.exited:
				if !p.killed {
					f.mu.Unlock()
					return fmt.Errorf("worker process exited during start-up: %v", p.err)
				}
				continue
			default:
			}
			live++
			if p.last.Ready {
				ready++
			}
		}
		f.mu.Unlock()
		if ready == live {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d worker processes started within 30s", ready, live)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// signalOne sends sig to the oldest live worker process and reports its
// pid. SIGKILL marks the process as killed on purpose.
func (f *procFleet) signalOne(sig syscall.Signal) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.procs {
		select {
		case <-p.exited:
			continue
		default:
		}
		if p.killed {
			continue
		}
		p.killed = true // SIGTERM exits 0, SIGKILL does not: both are expected
		return p.cmd.Process.Pid, p.cmd.Process.Signal(sig)
	}
	return 0, errors.New("no live worker process to signal")
}

func (f *procFleet) read(p *workerProc, out io.Reader) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var ws workerStats
		if json.Unmarshal(sc.Bytes(), &ws) == nil {
			f.mu.Lock()
			p.last = ws
			f.mu.Unlock()
		}
	}
	p.err = p.cmd.Wait()
	close(p.exited)
}

func (f *procFleet) pids() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	pids := make([]int, len(f.procs))
	for i, p := range f.procs {
		pids[i] = p.cmd.Process.Pid
	}
	return pids
}

func (f *procFleet) counters() workerStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	var sum workerStats
	for _, p := range f.procs {
		sum = add(sum, p.last)
	}
	return sum
}

// fleetStopTimeout bounds a fleet's graceful stop: the workers' own stop
// timeout (10 s) for running jobs plus room to write their results.
const fleetStopTimeout = time.Minute

// stopFleet stops f within fleetStopTimeout from now. The deadline must
// start at the stop, not with the run: a run longer than it would otherwise
// kill its workers instead of stopping them.
func stopFleet(f fleet) error {
	ctx, cancel := context.WithTimeout(context.Background(), fleetStopTimeout)
	defer cancel()
	return f.stop(ctx)
}

// stop sends SIGTERM, which makes each worker stop gracefully (release
// what it holds, write every result, print final counters).
func (f *procFleet) stop(ctx context.Context) error {
	f.mu.Lock()
	procs := f.procs
	f.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	var errs []error
	for _, p := range procs {
		select {
		case <-p.exited:
			if p.err != nil && !p.killed {
				errs = append(errs, fmt.Errorf("worker %d: %w", p.cmd.Process.Pid, p.err))
			}
		case <-ctx.Done():
			_ = p.cmd.Process.Kill()
			errs = append(errs, fmt.Errorf("worker %d did not stop in time; killed", p.cmd.Process.Pid))
		}
	}
	return errors.Join(errs...)
}
