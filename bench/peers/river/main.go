// Command river-bench is a side-by-side peer benchmark: it runs the same
// burndown and latency scenarios as `drover bench` against River
// (github.com/riverqueue/river) and writes a report with the same JSON keys.
//
// It is NOT part of Drover: it has its own go.mod and is only used to measure
// a peer on the same machine, in the same run, as Drover.
//
// See ../README.md for how to build and run it and where its settings come
// from.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivermigrate"
)

// options holds the command line flags.
type options struct {
	databaseURL string
	scenario    string
	jobs        int
	rate        int
	duration    time.Duration
	jsonPath    string

	insertMethod      string // "fast" (InsertManyFast) or "many" (InsertMany)
	insertChunk       int
	insertConcurrency int // latency scenario: goroutines doing single inserts

	maxWorkers        int
	fetchCooldown     time.Duration
	fetchPollInterval time.Duration
	poolMaxConns      int

	sqliteSynchronous string
	settleAfterLoad   bool // burndown: vacuum, analyze and checkpoint after loading
	timeout           time.Duration
	verbose           bool
}

func parseFlags() *options {
	o := &options{}
	flag.StringVar(&o.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "postgres://... or sqlite:///path/to/file.db")
	flag.StringVar(&o.scenario, "scenario", "burndown", "burndown or latency")
	flag.IntVar(&o.jobs, "jobs", 200_000, "burndown: number of jobs to insert and then work")
	flag.IntVar(&o.rate, "rate", 1000, "latency: jobs inserted per second")
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "latency: how long to insert for")
	flag.StringVar(&o.jsonPath, "json", "", "write the JSON report to this file (it is always printed on stdout)")

	flag.StringVar(&o.insertMethod, "insert-method", "fast", "burndown: fast (InsertManyFast, COPY on Postgres) or many (InsertMany, what `river bench` uses)")
	flag.IntVar(&o.insertChunk, "insert-chunk", 5_000, "burndown: jobs per InsertMany/InsertManyFast call (`river bench` uses 5,000)")
	flag.IntVar(&o.insertConcurrency, "insert-concurrency", 4, "latency: goroutines issuing single-job inserts (each job is its own Insert call)")

	flag.IntVar(&o.maxWorkers, "max-workers", 2_000, "MaxWorkers of the default queue (`river bench`: 2,000)")
	flag.DurationVar(&o.fetchCooldown, "fetch-cooldown", 2*time.Millisecond, "client FetchCooldown (`river bench`: 2ms; River default 100ms)")
	flag.DurationVar(&o.fetchPollInterval, "fetch-poll-interval", 20*time.Millisecond, "client FetchPollInterval (`river bench`: 20ms; River default 1s)")
	flag.IntVar(&o.poolMaxConns, "pool-max-conns", 4, "Postgres: pgxpool MaxConns unless pool_max_conns is in the URL (`river bench` uses the pgxpool default, max(4, NumCPU) = 4 here)")

	flag.StringVar(&o.sqliteSynchronous, "sqlite-synchronous", "FULL", "SQLite: PRAGMA synchronous (FULL is SQLite's default and durable per commit; NORMAL is common with WAL)")
	flag.BoolVar(&o.settleAfterLoad, "settle-after-load", true, "burndown: VACUUM (ANALYZE) river_job and CHECKPOINT between loading the jobs and starting the client, as drover bench does (PostgreSQL; SQLite, like Drover's SQLite store, does nothing)")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "give up waiting for jobs to finish after this long")
	flag.BoolVar(&o.verbose, "v", false, "log River's info messages and progress")
	flag.Parse()
	return o
}

// latencyMS is the shared latency object of the report.
type latencyMS struct {
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
	Count int64   `json:"count"`
}

// report carries the keys shared with `drover bench` plus a few extras.
type report struct {
	Scenario         string    `json:"scenario"`
	System           string    `json:"system"`
	Driver           string    `json:"driver"`
	Settings         string    `json:"settings"`
	Jobs             int       `json:"jobs"`
	Seconds          float64   `json:"seconds"`
	JobsPerSec       float64   `json:"jobs_per_sec"`
	SteadyJobsPerSec float64   `json:"steady_jobs_per_sec"`
	SteadyNote       string    `json:"steady_note"`
	InsertPerSec     float64   `json:"insert_per_sec"`
	LatencyMS        latencyMS `json:"latency_ms"`
	Lost             int64     `json:"lost"`
	Duplicates       int64     `json:"duplicates"`
	InsertSeconds    float64   `json:"insert_seconds"`
	CompletedInDB    int64     `json:"completed_in_db"`
	NotCompletedInDB int64     `json:"not_completed_in_db"`
	StartLatencyMS   latencyMS `json:"start_latency_ms"`
	TargetRate       int       `json:"target_rate,omitempty"`
	Command          string    `json:"command"`
	Machine          string    `json:"machine"`
	GoVersion        string    `json:"go_version"`
	GOMAXPROCS       int       `json:"gomaxprocs"`
	StartedAt        string    `json:"started_at"`
}

const steadyNote = "steady_jobs_per_sec excludes the first 10% of completed jobs: (jobs - ceil(jobs/10)) / (time of last completion - time of the ceil(jobs/10)-th completion)"

// dbOps is what the benchmark needs from the database besides River itself.
type dbOps interface {
	Exec(ctx context.Context, sql string) error
	Count(ctx context.Context, sql string) (int64, error)
	// Settle brings the loaded job table to the state `drover bench` gives
	// its own before working a backlog (pgstore.Store.Settle in internal/app/bench/pgstore): vacuumed,
	// analysed and checkpointed. The peers are measured as their users run
	// them, on tables autovacuum has analysed, and alike with Drover; on
	// statistics of the empty table a peer measures our harness instead.
	Settle(ctx context.Context) error
	Close()
}

// BenchArgs are the args of the benchmark's noop job. InsertedAt is the
// UnixNano time taken right before the job's insert (latency scenario only).
type BenchArgs struct {
	Num        int   `json:"num"`
	InsertedAt int64 `json:"inserted_at,omitempty"`
}

const benchKind = "drover_peer_bench"

func (BenchArgs) Kind() string { return benchKind }

// BenchWorker does nothing but count executions per job (to detect
// duplicates) and, in the latency scenario, record insert→start latency.
type BenchWorker struct {
	river.WorkerDefaults[BenchArgs]
	seen     []uint32 // indexed by Num
	extraDup atomic.Int64
	startH   *syncHist
}

func (w *BenchWorker) Work(ctx context.Context, job *river.Job[BenchArgs]) error {
	if w.startH != nil && job.Args.InsertedAt != 0 {
		w.startH.record(time.Now().UnixNano() - job.Args.InsertedAt)
	}
	n := job.Args.Num
	if n >= 0 && n < len(w.seen) {
		if atomic.AddUint32(&w.seen[n], 1) > 1 {
			w.extraDup.Add(1)
		}
	}
	return nil
}

func (w *BenchWorker) duplicates() int64 { return w.extraDup.Load() }

// syncHist is a mutex-guarded HDR histogram of nanoseconds.
type syncHist struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}

func newSyncHist() *syncHist {
	// 1µs .. 10 minutes, 3 significant digits.
	return &syncHist{h: hdrhistogram.New(1_000, int64(10*time.Minute), 3)}
}

func (s *syncHist) record(ns int64) {
	if ns < 1_000 {
		ns = 1_000
	}
	s.mu.Lock()
	_ = s.h.RecordValue(ns)
	s.mu.Unlock()
}

func (s *syncHist) summary() latencyMS {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := func(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }
	return latencyMS{
		P50:   ms(s.h.ValueAtQuantile(50)),
		P95:   ms(s.h.ValueAtQuantile(95)),
		P99:   ms(s.h.ValueAtQuantile(99)),
		Max:   ms(s.h.Max()),
		Count: s.h.TotalCount(),
	}
}

func riverVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/riverqueue/river" {
				v := strings.TrimPrefix(d.Version, "v")
				if d.Replace != nil {
					v = strings.TrimPrefix(d.Replace.Version, "v")
				}
				return "river " + v
			}
		}
	}
	return "river (unknown version)"
}

func main() {
	o := parseFlags()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "river-bench:", err)
		os.Exit(1)
	}
}

func run(o *options) error {
	if o.databaseURL == "" {
		return errors.New("--database-url is required (postgres://... or sqlite:///path/file.db)")
	}
	if o.scenario != "burndown" && o.scenario != "latency" {
		return fmt.Errorf("--scenario must be burndown or latency, not %q", o.scenario)
	}
	if o.insertMethod != "fast" && o.insertMethod != "many" {
		return fmt.Errorf("--insert-method must be fast or many, not %q", o.insertMethod)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	switch {
	case strings.HasPrefix(o.databaseURL, "postgres://"), strings.HasPrefix(o.databaseURL, "postgresql://"):
		return runPostgres(ctx, o, logger)
	case strings.HasPrefix(o.databaseURL, "sqlite://"):
		return runSQLite(ctx, o, logger)
	default:
		return fmt.Errorf("unsupported --database-url %q: want postgres://, postgresql:// or sqlite://", o.databaseURL)
	}
}

// bench runs one scenario against an already opened driver. driverSettings
// describes the database side of the configuration (pool, pragmas).
//
// insertDriver, when not nil, is used by the latency scenario for a separate
// insert-only client (its own connection pool), so that the inserting side
// does not compete with the working client for the working client's pool: the
// usual deployment, where jobs are inserted by other processes than the
// workers. When nil, the working client inserts.
func bench[TTx any](ctx context.Context, o *options, logger *slog.Logger, driverName, driverSettings string, driver riverdriver.Driver[TTx], insertDriver riverdriver.Driver[TTx], db dbOps, resetSQL, latencySeedSQL []string) error {
	startedAt := time.Now()

	// 1. Migrate River's schema.
	migrator, err := rivermigrate.New(driver, &rivermigrate.Config{Logger: logger})
	if err != nil {
		return fmt.Errorf("rivermigrate.New: %w", err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}

	// 2. Start from an empty job table, like `river bench` does.
	for _, q := range resetSQL {
		if err := db.Exec(ctx, q); err != nil {
			return fmt.Errorf("reset (%s): %w", q, err)
		}
	}
	if o.scenario == "latency" {
		for _, q := range latencySeedSQL {
			if err := db.Exec(ctx, q); err != nil {
				return fmt.Errorf("seed (%s): %w", q, err)
			}
		}
	}

	maxJobs := o.jobs
	if o.scenario == "latency" {
		maxJobs = int(float64(o.rate)*o.duration.Seconds()*1.05) + 1_000
	}
	worker := &BenchWorker{seen: make([]uint32, maxJobs)}
	var completeH *syncHist
	if o.scenario == "latency" {
		worker.startH = newSyncHist()
		completeH = newSyncHist()
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, worker)

	client, err := river.NewClient(driver, &river.Config{
		FetchCooldown:     o.fetchCooldown,
		FetchPollInterval: o.fetchPollInterval,
		Logger:            logger,
		Queues: map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: o.maxWorkers},
		},
		Workers: workers,
	})
	if err != nil {
		return fmt.Errorf("river.NewClient: %w", err)
	}

	// Completion is tracked with River's event subscription (emitted after the
	// completer has persisted the job's state), like `river bench` does.
	events, cancelSub := client.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: maxJobs + 10_000,
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled},
	})
	defer cancelSub()

	completionTimes := make([]int64, 0, maxJobs) // UnixNano of each completion event
	var (
		finished      atomic.Int64
		failed        atomic.Int64
		lastEventNano atomic.Int64
		eventsMu      sync.Mutex
		eventsDone    = make(chan struct{})
		target        atomic.Int64 // number of jobs to wait for; 0 = not known yet
	)
	target.Store(math.MaxInt64)
	allDone := make(chan struct{})
	go func() {
		defer close(eventsDone)
		var closed bool
		for ev := range events {
			now := time.Now().UnixNano()
			if ev.Kind != river.EventKindJobCompleted {
				failed.Add(1)
				logger.Error("job did not complete", "kind", ev.Kind, "id", ev.Job.ID, "errors", ev.Job.Errors)
			} else if completeH != nil {
				var a BenchArgs
				if err := json.Unmarshal(ev.Job.EncodedArgs, &a); err == nil && a.InsertedAt != 0 {
					completeH.record(now - a.InsertedAt)
				}
			}
			eventsMu.Lock()
			completionTimes = append(completionTimes, now)
			eventsMu.Unlock()
			lastEventNano.Store(now)
			if finished.Add(1) >= target.Load() && !closed {
				closed = true
				close(allDone)
			}
		}
	}()

	rep := &report{
		Scenario:   o.scenario,
		System:     riverVersion(),
		Driver:     driverName,
		SteadyNote: steadyNote,
		Command:    commandLine(),
		Machine:    machine(),
		GoVersion:  runtime.Version(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		StartedAt:  startedAt.UTC().Format(time.RFC3339),
	}

	var (
		inserted   int
		insertSecs float64
		workStart  time.Time
	)

	switch o.scenario {
	case "burndown":
		// 3a. Insert all jobs first, in chunks, with the client not started.
		params := make([]river.InsertManyParams, 0, o.insertChunk)
		t0 := time.Now()
		for inserted < o.jobs {
			params = params[:0]
			for i := 0; i < o.insertChunk && inserted+i < o.jobs; i++ {
				params = append(params, river.InsertManyParams{Args: BenchArgs{Num: inserted + i}})
			}
			var err error
			if o.insertMethod == "fast" {
				_, err = client.InsertManyFast(ctx, params)
			} else {
				_, err = client.InsertMany(ctx, params)
			}
			if err != nil {
				return fmt.Errorf("insert: %w", err)
			}
			inserted += len(params)
		}
		insertSecs = time.Since(t0).Seconds()
		if o.verbose {
			logger.Info("inserted", "jobs", inserted, "seconds", insertSecs)
		}
		// Outside the measured interval, as in drover bench.
		if o.settleAfterLoad {
			if err := db.Settle(ctx); err != nil {
				return fmt.Errorf("settle after load: %w", err)
			}
		}
		target.Store(int64(inserted))

		// 3b. Work them all.
		workStart = time.Now()
		if err := client.Start(ctx); err != nil {
			return fmt.Errorf("client.Start: %w", err)
		}

	case "latency":
		workStart = time.Now()
		if err := client.Start(ctx); err != nil {
			return fmt.Errorf("client.Start: %w", err)
		}
		// Give the client a moment to start its producer and listener.
		time.Sleep(500 * time.Millisecond)

		total := int(float64(o.rate) * o.duration.Seconds())
		if total > maxJobs {
			total = maxJobs
		}
		interval := time.Duration(float64(time.Second) / float64(o.rate))
		inserter := client
		if insertDriver != nil {
			inserter, err = river.NewClient(insertDriver, &river.Config{Logger: logger})
			if err != nil {
				return fmt.Errorf("river.NewClient (insert-only): %w", err)
			}
		}
		nums := make(chan int)
		var wg sync.WaitGroup
		var insertErr atomic.Value
		var nInserted atomic.Int64
		for g := 0; g < o.insertConcurrency; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range nums {
					args := BenchArgs{Num: n, InsertedAt: time.Now().UnixNano()}
					if _, err := inserter.Insert(ctx, args, nil); err != nil {
						insertErr.Store(err)
						continue
					}
					nInserted.Add(1)
				}
			}()
		}
		t0 := time.Now()
		workStart = t0
	pace:
		for i := 0; i < total; i++ {
			due := t0.Add(time.Duration(i) * interval)
			if d := time.Until(due); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					break pace
				}
			}
			select {
			case nums <- i:
			case <-ctx.Done():
				break pace
			}
		}
		close(nums)
		wg.Wait()
		insertSecs = time.Since(t0).Seconds()
		inserted = int(nInserted.Load())
		if v := insertErr.Load(); v != nil {
			logger.Error("some inserts failed", "err", v)
		}
		target.Store(int64(inserted))
		rep.TargetRate = o.rate
	}

	// 4. Wait until every inserted job has been reported finished.
	progress := time.NewTicker(2 * time.Second)
	defer progress.Stop()
	deadline := time.After(o.timeout)
	var lastFinished int64
wait:
	for finished.Load() < int64(inserted) {
		select {
		case <-allDone:
			break wait
		case <-ctx.Done():
			break wait
		case <-deadline:
			logger.Error("timed out waiting for jobs", "finished", finished.Load(), "inserted", inserted)
			break wait
		case <-progress.C:
			f := finished.Load()
			if o.verbose {
				fmt.Fprintf(os.Stderr, "river-bench: %d/%d finished (%.0f jobs/s over the last 2s)\n", f, inserted, float64(f-lastFinished)/2)
			}
			lastFinished = f
		}
	}
	var seconds float64
	if ln := lastEventNano.Load(); ln != 0 {
		seconds = float64(ln-workStart.UnixNano()) / 1e9
	}

	// 5. Stop the client (flushes the completer), then check the database.
	stopCtx, cancelStop := context.WithTimeout(context.Background(), 60*time.Second)
	if err := client.Stop(stopCtx); err != nil {
		logger.Error("client.Stop", "err", err)
	}
	cancelStop()
	cancelSub()
	<-eventsDone

	countCtx, cancelCount := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancelCount()
	completedInDB, err := db.Count(countCtx, "SELECT count(*) FROM river_job WHERE kind = '"+benchKind+"' AND state = 'completed'")
	if err != nil {
		return fmt.Errorf("count completed: %w", err)
	}
	notCompleted, err := db.Count(countCtx, "SELECT count(*) FROM river_job WHERE kind = '"+benchKind+"' AND state <> 'completed'")
	if err != nil {
		return fmt.Errorf("count not completed: %w", err)
	}

	rep.Jobs = inserted
	rep.Seconds = round3(seconds)
	if seconds > 0 {
		rep.JobsPerSec = round1(float64(inserted) / seconds)
	}
	rep.SteadyJobsPerSec = round1(steadyRate(completionTimes, inserted))
	rep.InsertSeconds = round3(insertSecs)
	if insertSecs > 0 {
		rep.InsertPerSec = round1(float64(inserted) / insertSecs)
	}
	rep.Lost = int64(inserted) - completedInDB
	rep.Duplicates = worker.duplicates()
	rep.CompletedInDB = completedInDB
	rep.NotCompletedInDB = notCompleted
	if o.scenario == "latency" {
		rep.LatencyMS = completeH.summary()
		s := worker.startH.summary()
		rep.StartLatencyMS = s
	}

	insertDesc := fmt.Sprintf("InsertManyFast in chunks of %d", o.insertChunk)
	if o.insertMethod == "many" {
		insertDesc = fmt.Sprintf("InsertMany in chunks of %d", o.insertChunk)
	}
	if o.scenario == "burndown" && driverName == "postgres" {
		if o.settleAfterLoad {
			insertDesc += "; river_job VACUUM (ANALYZE)d and CHECKPOINT after loading, before the client starts (as drover bench does)"
		} else {
			insertDesc += "; river_job NOT analysed after loading (--settle-after-load=false)"
		}
	}
	if o.scenario == "latency" {
		who := "the working client"
		if insertDriver != nil {
			who = fmt.Sprintf("a separate insert-only client with its own pool of %d conns", o.insertConcurrency)
		}
		insertDesc = fmt.Sprintf("one Insert per job at %d/s for %s from %d goroutines through %s; latency_ms = insert→completed (completion event, after River's batch completer persisted it), start_latency_ms = insert→worker start", o.rate, o.duration, o.insertConcurrency, who)
	}
	rep.Settings = fmt.Sprintf("River `river bench` throughput settings: default queue MaxWorkers=%d, FetchCooldown=%s, FetchPollInterval=%s; %s; noop worker; %s; steady rate excludes the first 10%% of completions",
		o.maxWorkers, o.fetchCooldown, o.fetchPollInterval, driverSettings, insertDesc)

	out, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	if o.jsonPath != "" {
		if err := os.WriteFile(o.jsonPath, append(out, '\n'), 0o644); err != nil {
			return err
		}
	}
	if rep.Lost != 0 || failed.Load() != 0 {
		return fmt.Errorf("%d job(s) lost, %d failed", rep.Lost, failed.Load())
	}
	return nil
}

// steadyRate is the completion rate after the first 10% of completions.
func steadyRate(times []int64, jobs int) float64 {
	if len(times) < 2 || jobs <= 0 {
		return 0
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	skip := (jobs + 9) / 10
	if skip >= len(times) {
		return 0
	}
	span := float64(times[len(times)-1]-times[skip-1]) / 1e9
	if span <= 0 {
		return 0
	}
	return float64(len(times)-skip) / span
}

// commandLine is the command that reproduces the run, shell-quoted.
func commandLine() string {
	parts := make([]string, len(os.Args))
	for i, a := range os.Args {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\*?[]{}()<>|&;#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts[i] = a
	}
	return strings.Join(parts, " ")
}

// machine describes the machine the way `drover bench` does: OS/arch, CPUs
// and model, memory, Go version.
func machine() string {
	var model string
	var memKB uint64
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.Join(strings.Fields(v), " ")
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				fmt.Sscanf(strings.TrimSpace(rest), "%d", &memKB)
				break
			}
		}
	}
	cpu := fmt.Sprintf("%d CPUs", runtime.NumCPU())
	if model != "" {
		cpu += " (" + model + ")"
	}
	parts := []string{runtime.GOOS + "/" + runtime.GOARCH, cpu}
	if memKB > 0 {
		parts = append(parts, fmt.Sprintf("%.0f GiB RAM", float64(memKB)/(1<<20)))
	}
	return strings.Join(append(parts, runtime.Version()), ", ")
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }
func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
