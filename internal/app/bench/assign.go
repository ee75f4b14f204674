package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/bench/stats"
	"github.com/droverhq/drover/internal/app/jobjson"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// `drover bench assign`: the shape of issue 25's seed (a job orchestrator
// whose typed executors ask any of 1-9 server replicas for one job at a
// time). --jobs jobs routed over --types worker types are assigned to
// --workers workers, each of one type, that ask for one job at a time and
// report it done at once, through R replicas for each R of --replicas:
// `drover serve` processes on the one store (workers over HTTP), and R
// clients in this process (workers calling Remote.Claim, the Go library's
// path). Assign latency is request to job in hand. Each point runs twice:
// routed jobs, and the same jobs, plain, in a queue in strict order, whose
// start order is checked from the store afterwards.

// assignClient is what the assign scenario calls of a drover.Client.
type assignClient interface {
	InsertMany(ctx context.Context, jobs []drover.InsertManyParams) ([]int64, error)
	JobList(ctx context.Context, p drover.JobListParams) ([]*drovertype.JobRow, error)
	JobCountByState(ctx context.Context, queue string) (map[drovertype.JobState]int64, error)
	QueueSetStrictOrder(ctx context.Context, name string, maxRunning int) (*drovertype.QueueSettings, error)
	Remote() *drover.Remote
}

// Modes of the assign scenario: how workers reach the replicas.
const (
	assignHTTP = "http"
	assignGo   = "go"
)

type assignOptions struct {
	jobs, types, workers int
	replicas             []int
	modes                []string
	// strictMax is the strict queue's max running; 0 is --workers, so that
	// strict order orders the starts without capping the workers.
	strictMax int
	noStrict  bool
	waitMS    int
	lease     time.Duration
}

// AssignReport is the JSON of `drover bench assign`.
type AssignReport struct {
	Scenario string `json:"scenario"`
	Driver   string `json:"driver"`
	Command  string `json:"command"`
	Settings string `json:"settings"`
	Jobs     int    `json:"jobs"`
	// Lost, Misrouted and Inversions sum the points': jobs not completed
	// once a run ended, jobs a worker got that its type does not match,
	// and strict-order jobs that started before one ahead of them.
	Lost       int64         `json:"lost"`
	Misrouted  int64         `json:"misrouted"`
	Inversions int64         `json:"inversions"`
	Points     []AssignPoint `json:"points"`
}

// AssignPoint is one replica count of one mode.
type AssignPoint struct {
	Mode          string            `json:"mode"`
	Replicas      int               `json:"replicas"`
	Workers       int               `json:"workers"`
	AssignsPerSec float64           `json:"assigns_per_sec"`
	LatencyMs     stats.Percentiles `json:"latency_ms"`
	Lost          int64             `json:"lost"`
	Misrouted     int64             `json:"misrouted"`
	// Strict is the same run in a queue in strict order.
	Strict *AssignStrict `json:"strict,omitempty"`
}

// AssignStrict is a point's strict-order run.
type AssignStrict struct {
	MaxRunning    int               `json:"max_running"`
	AssignsPerSec float64           `json:"assigns_per_sec"`
	LatencyMs     stats.Percentiles `json:"latency_ms"`
	Inversions    int64             `json:"inversions"`
	Lost          int64             `json:"lost"`
}

func newAssignCommand(env func() Env) *cobra.Command {
	o := assignOptions{jobs: 10_000, types: 4, workers: 16, waitMS: 200, lease: 30 * time.Second,
		replicas: []int{1, 3, 5, 7, 9}, modes: []string{assignHTTP, assignGo}}
	var replicas, modes, jsonPath, cpuProfile string
	var keep bool
	cmd := &cobra.Command{
		Use:   "assign",
		Short: "Assign --jobs routed jobs to typed workers asking one at a time through 1-9 replicas; routed and strict order",
		Long: `assign measures what issue 25's seed calls an assign: a worker of some type
asks a server replica for one job it may run, and gets it. --jobs jobs are
spread over --types worker types; --workers workers (of the types in turn)
ask one job at a time and report it done at once. For each R of --replicas,
the workers go through R 'drover serve' processes on the one store over HTTP
(mode http), and through R clients in this process calling Remote.Claim
(mode go). Latency is from the claim request to the job in hand. Each point
runs twice: the jobs routed by type, then the same jobs plain in a queue in
strict order (at most --strict-max-running running, default --workers), whose
start order is checked from the store: inversions must be 0. A job not
completed at the end is lost, and fails the run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if o.replicas, err = parseInts("--replicas", replicas, 1); err != nil {
				return err
			}
			o.modes = nil
			for _, m := range strings.Split(modes, ",") {
				switch m = strings.TrimSpace(m); m {
				case assignHTTP, assignGo:
					o.modes = append(o.modes, m)
				default:
					return usagef("--modes: %q is not http or go", m)
				}
			}
			switch {
			case o.jobs < 1 || o.types < 1 || o.workers < 1 || len(o.replicas) == 0 || len(o.modes) == 0:
				return usagef("--jobs, --types, --workers, --replicas and --modes must be positive")
			case o.workers < o.types:
				return usagef("--workers %d: at least one per type (--types %d)", o.workers, o.types)
			case o.strictMax < 0:
				return usagef("--strict-max-running %d: must not be negative", o.strictMax)
			case o.waitMS < 0 || o.waitMS > 60_000:
				return usagef("--wait-ms %d: must be between 0 and 60000", o.waitMS)
			}
			if err := checkOutputPaths([2]string{"--json", jsonPath}, [2]string{"--cpuprofile", cpuProfile}); err != nil {
				return err
			}
			stop, err := startProfiles(cpuProfile, "", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer stop()
			return runAssign(cmd.Context(), env(), o, jsonPath, keep)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.jobs, "jobs", o.jobs, "jobs assigned per run")
	f.IntVar(&o.types, "types", o.types, "worker types the jobs are routed to, in turn")
	f.IntVar(&o.workers, "workers", o.workers, "workers asking for one job at a time, of the types in turn")
	f.StringVar(&replicas, "replicas", "1,3,5,7,9", "replica counts, a list")
	f.StringVar(&modes, "modes", "http,go", "http (drover serve processes, workers over HTTP), go (clients in this process), or both")
	f.IntVar(&o.strictMax, "strict-max-running", 0, "strict-order run: the queue's max running (0: --workers)")
	f.BoolVar(&o.noStrict, "no-strict", false, "skip the strict-order runs")
	f.IntVar(&o.waitMS, "wait-ms", o.waitMS, "HTTP claims long-poll this long when they find nothing")
	f.StringVar(&jsonPath, "json", "", "write the machine-readable report to this file")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the bench process to this file (go tool pprof)")
	f.BoolVar(&keep, "keep", false, "keep the bench's own schema (or ./"+benchFile+") after the run")
	return cmd
}

func runAssign(ctx context.Context, env Env, o assignOptions, jsonPath string, keep bool) error {
	bt, err := resolveTarget(&env)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stderr, bt.describe(keep))
	store, err := storeurl.Open(ctx, bt.Target, storeurl.Options{Schema: env.Schema, AutoMigrate: true,
		Logf: func(f string, a ...any) { fmt.Fprintf(env.Stderr, f+"\n", a...) }})
	if err != nil {
		return err
	}
	defer bt.cleanup(ctx, store, keep, env.Stderr)
	client, err := storeurl.NewClient[assignClient](store, &drover.Config{Logger: discardLogger()})
	if err != nil {
		return err
	}
	if o.strictMax == 0 {
		o.strictMax = o.workers
	}
	rep := &AssignReport{Scenario: "assign", Driver: store.Driver.Name(), Command: commandLine(bt.Target), Jobs: o.jobs,
		Settings: fmt.Sprintf("%d jobs over %d worker types, %d workers asking one job at a time (HTTP long poll %d ms), strict order: at most %d running",
			o.jobs, o.types, o.workers, o.waitMS, o.strictMax)}
	for _, mode := range o.modes {
		for _, r := range o.replicas {
			pt, err := assignPoint(ctx, env, store, client, o, mode, r)
			if err != nil {
				return fmt.Errorf("assign, %s mode, %d replicas: %w", mode, r, err)
			}
			line := fmt.Sprintf("%s, %d replicas: %.0f assigns/s, p50 %.2f ms p95 %.2f ms p99 %.2f ms, lost %d, misrouted %d",
				mode, r, pt.AssignsPerSec, pt.LatencyMs.P50, pt.LatencyMs.P95, pt.LatencyMs.P99, pt.Lost, pt.Misrouted)
			if s := pt.Strict; s != nil {
				line += fmt.Sprintf("; strict: %.0f assigns/s, p50 %.2f ms p95 %.2f ms p99 %.2f ms, inversions %d, lost %d",
					s.AssignsPerSec, s.LatencyMs.P50, s.LatencyMs.P95, s.LatencyMs.P99, s.Inversions, s.Lost)
				rep.Inversions += s.Inversions
				rep.Lost += s.Lost
			}
			fmt.Fprintln(env.Stdout, line)
			rep.Lost += pt.Lost
			rep.Misrouted += pt.Misrouted
			rep.Points = append(rep.Points, pt)
		}
	}
	if jsonPath != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if rep.Lost > 0 || rep.Misrouted > 0 || rep.Inversions > 0 {
		return fmt.Errorf("assign: %d jobs lost, %d misrouted, %d strict-order inversions", rep.Lost, rep.Misrouted, rep.Inversions)
	}
	return nil
}

// assignPoint runs one mode with r replicas: the routed run, then the
// strict-order run, on replicas started once for both.
func assignPoint(ctx context.Context, env Env, store *storeurl.Store, client assignClient, o assignOptions, mode string, r int) (AssignPoint, error) {
	pt := AssignPoint{Mode: mode, Replicas: r, Workers: o.workers}
	var reps assignReplicas
	var err error
	if mode == assignHTTP {
		reps, err = startServeReplicas(ctx, env, r, o)
	} else {
		reps, err = openGoReplicas(ctx, store.Target, env.Schema, r, o.workers)
	}
	if err != nil {
		return pt, err
	}
	defer reps.close()
	id := make([]byte, 3)
	_, _ = rand.Read(id)
	prefix := fmt.Sprintf("assign-%s-%s-r%d", hex.EncodeToString(id), mode, r)

	run, err := assignRun(ctx, client, reps, o, prefix+"-routed", false)
	if err != nil {
		return pt, err
	}
	pt.AssignsPerSec, pt.LatencyMs, pt.Lost, pt.Misrouted = run.rate, run.latency, run.lost, run.misrouted
	if o.noStrict {
		return pt, nil
	}
	if run, err = assignRun(ctx, client, reps, o, prefix+"-strict", true); err != nil {
		return pt, err
	}
	pt.Strict = &AssignStrict{MaxRunning: o.strictMax, AssignsPerSec: run.rate, LatencyMs: run.latency, Inversions: run.inversions, Lost: run.lost}
	return pt, nil
}

// assignResult is what one run measured and checked.
type assignResult struct {
	rate                        float64
	latency                     stats.Percentiles
	lost, misrouted, inversions int64
}

// assignArgs are the args of a bench job: its number and the worker type
// it is for, which the worker checks against its own.
type assignArgs struct {
	N    int    `json:"n"`
	Type string `json:"type"`
}

func assignType(i, types int) string { return "type-" + strconv.Itoa(i%types) }

// assignRun inserts the jobs into queue (routed by type, or plain in
// strict order), lets the workers assign them all through reps, and checks
// the store: every job completed and, in strict order, started in order.
func assignRun(ctx context.Context, client assignClient, reps assignReplicas, o assignOptions, queue string, strict bool) (assignResult, error) {
	var res assignResult
	if strict {
		if _, err := client.QueueSetStrictOrder(ctx, queue, o.strictMax); err != nil {
			return res, err
		}
	}
	const chunk = 5000
	for start := 0; start < o.jobs; start += chunk {
		batch := make([]drover.InsertManyParams, 0, min(chunk, o.jobs-start))
		for i := start; i < min(start+chunk, o.jobs); i++ {
			a := assignArgs{N: i, Type: assignType(i, o.types)}
			opts := &drover.InsertOpts{Queue: queue, MaxAttempts: 3}
			if !strict {
				opts.WorkerType = a.Type
			}
			raw, _ := json.Marshal(a) // a struct of an int and a string
			batch = append(batch, drover.InsertManyParams{Args: drover.RawArgs{KindName: "bench.assign", JSON: raw}, Opts: opts})
		}
		if _, err := client.InsertMany(ctx, batch); err != nil {
			return res, err
		}
	}
	lat := stats.NewLatency()
	var done, misrouted atomic.Int64
	var first, last atomic.Int64 // unix nanos of the first and last assign
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, o.workers)
	for w := range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			me := assignWorker{name: fmt.Sprintf("%s-w%d", queue, w), typ: assignType(w, o.types), replica: w % reps.count()}
			for done.Load() < int64(o.jobs) {
				start := time.Now()
				job, err := reps.claim(runCtx, queue, me)
				if err != nil {
					if runCtx.Err() == nil {
						errs <- err
						cancel()
					}
					return
				}
				if job == nil {
					continue
				}
				now := time.Now()
				lat.Record(now.Sub(start))
				first.CompareAndSwap(0, start.UnixNano())
				last.Store(now.UnixNano())
				if !strict && job.typ != me.typ {
					misrouted.Add(1)
				}
				if err := reps.finish(runCtx, me, job); err != nil {
					if runCtx.Err() == nil {
						errs <- err
						cancel()
					}
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return res, err
	}
	res.latency = lat.Snapshot()
	if span := time.Duration(last.Load() - first.Load()); span > 0 {
		res.rate = float64(o.jobs) / span.Seconds()
	}
	res.misrouted = misrouted.Load()
	counts, err := client.JobCountByState(ctx, queue)
	if err != nil {
		return res, err
	}
	res.lost = int64(o.jobs) - counts[drovertype.JobStateCompleted]
	if strict {
		if res.inversions, err = strictInversions(ctx, client, queue); err != nil {
			return res, err
		}
	}
	return res, nil
}

// strictInversions reads the completed jobs of queue from the store and
// counts those that started before a job ahead of them in claim order
// (priority, run_at, id).
func strictInversions(ctx context.Context, client assignClient, queue string) (int64, error) {
	var jobs []*drovertype.JobRow
	var after int64
	for {
		page, err := client.JobList(ctx, drover.JobListParams{Queue: queue, States: []drovertype.JobState{drovertype.JobStateCompleted},
			After: after, Limit: 10_000})
		if err != nil {
			return 0, err
		}
		jobs = append(jobs, page...)
		if len(page) < 10_000 {
			break
		}
		after = page[len(page)-1].ID
	}
	slices.SortFunc(jobs, func(a, b *drovertype.JobRow) int {
		if a.Priority != b.Priority {
			return a.Priority - b.Priority
		}
		if c := a.RunAt.Compare(b.RunAt); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
	var n int64
	for i := 1; i < len(jobs); i++ {
		if jobs[i].AttemptedAt != nil && jobs[i-1].AttemptedAt != nil && jobs[i].AttemptedAt.Before(*jobs[i-1].AttemptedAt) {
			n++
		}
	}
	return n, nil
}

// assignWorker is one worker of a run.
type assignWorker struct {
	name, typ string
	replica   int
}

// assignedJob is a job in a worker's hand.
type assignedJob struct {
	id      int64
	attempt int
	token   string
	typ     string
}

// assignReplicas are the replicas workers claim through.
type assignReplicas interface {
	count() int
	// claim asks replica w.replica for one job of queue for worker w; nil
	// when it found none.
	claim(ctx context.Context, queue string, w assignWorker) (*assignedJob, error)
	finish(ctx context.Context, w assignWorker, j *assignedJob) error
	close()
}

// goReplicas are clients in this process, each on a store of its own
// (its own pool or connections), whose Remote the workers call.
type goReplicas struct {
	stores  []*storeurl.Store
	remotes []*drover.Remote
}

// Each has a pool of as many connections as there are workers, as each
// serve replica has (startServeReplicas): the seed's replicas had 100.
func openGoReplicas(ctx context.Context, target storeurl.Target, schema string, r, workers int) (*goReplicas, error) {
	g := &goReplicas{}
	for range r {
		st, err := storeurl.Open(ctx, target, storeurl.Options{Schema: schema, MaxConns: workers})
		if err != nil {
			g.close()
			return nil, err
		}
		g.stores = append(g.stores, st)
		c, err := storeurl.NewClient[assignClient](st, &drover.Config{Logger: discardLogger()})
		if err != nil {
			g.close()
			return nil, err
		}
		g.remotes = append(g.remotes, c.Remote())
	}
	return g, nil
}

func (g *goReplicas) count() int { return len(g.remotes) }

func (g *goReplicas) claim(ctx context.Context, queue string, w assignWorker) (*assignedJob, error) {
	jobs, err := g.remotes[w.replica].Claim(ctx, drover.ClaimParams{Queue: queue, Max: 1, Owner: w.name, Lease: 30 * time.Second,
		WorkerType: w.typ})
	if err != nil || len(jobs) == 0 {
		if err == nil {
			// Nothing now: the run's last jobs are in other workers'
			// hands. A Go claim does not long-poll.
			time.Sleep(time.Millisecond)
		}
		return nil, err
	}
	var a assignArgs
	if err := json.Unmarshal(jobs[0].EncodedArgs, &a); err != nil {
		return nil, err
	}
	return &assignedJob{id: jobs[0].ID, attempt: jobs[0].Attempt, token: jobs[0].LeaseToken.String(), typ: a.Type}, nil
}

func (g *goReplicas) finish(ctx context.Context, w assignWorker, j *assignedJob) error {
	tok, err := drovertype.ParseLeaseToken(j.token)
	if err != nil {
		return err
	}
	rep, err := g.remotes[w.replica].Finish(ctx, []drover.AttemptResult{{ID: j.id, Attempt: j.attempt, LeaseToken: tok,
		Outcome: drover.AttemptCompleted}})
	if err == nil && len(rep.Accepted) != 1 {
		err = fmt.Errorf("job %d: result rejected", j.id)
	}
	return err
}

func (g *goReplicas) close() {
	for _, st := range g.stores {
		st.Close()
	}
}

// serveReplicas are `drover serve` processes on the bench's store: the
// bench binary runs itself as `drover serve`, with a tokens file of one
// work token, and workers call them over HTTP.
type serveReplicas struct {
	procs   []*exec.Cmd
	urls    []string
	secret  string
	http    *http.Client
	waitMS  int
	leaseMS int64
	dir     string
}

func startServeReplicas(ctx context.Context, env Env, r int, o assignOptions) (*serveReplicas, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own binary to start drover serve: %w", err)
	}
	dir, err := os.MkdirTemp("", "drover-assign-")
	if err != nil {
		return nil, err
	}
	s := &serveReplicas{dir: dir, waitMS: o.waitMS, leaseMS: o.lease.Milliseconds(),
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.workers}}}
	secret, tok, err := server.NewToken("bench-assign", []server.Scope{server.ScopeWork})
	if err != nil {
		s.close()
		return nil, err
	}
	s.secret = secret
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(tok.Line()+"\n"), 0o600); err != nil {
		s.close()
		return nil, err
	}
	url := env.DatabaseURL
	if bt, err := storeurl.Parse(url, "--database-url"); err == nil && bt.Kind == storeurl.Postgres {
		// As many connections as workers, as the Go replicas have: pgx's
		// default (4 on this machine) would queue the workers' claims.
		url = withQuery(url, "pool_max_conns", strconv.Itoa(o.workers))
	}
	for range r {
		cmd := exec.Command(self, "serve", "--listen", "127.0.0.1:0", "--tokens", tokens, "--schema", env.Schema,
			"--log-level", "error", "--max-connections", strconv.Itoa(4*o.workers))
		// The URL travels in the environment, as for worker processes.
		cmd.Env = append(os.Environ(), "DATABASE_URL="+url, "DROVER_DATABASE_URL="+url)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			s.close()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			s.close()
			return nil, fmt.Errorf("start drover serve: %w", err)
		}
		s.procs = append(s.procs, cmd)
		url, err := serveAddress(stderr, env.Stderr)
		if err != nil {
			s.close()
			return nil, err
		}
		s.urls = append(s.urls, url)
	}
	for _, u := range s.urls {
		if err := waitReady(ctx, s.http, u); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// withQuery adds key=value to the query of url.
func withQuery(url, key, value string) string {
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + key + "=" + value
}

// serveAddress reads a starting `drover serve`'s stderr until it says
// where it serves, and copies what follows to w.
func serveAddress(stderr io.Reader, w io.Writer) (string, error) {
	sc := bufio.NewScanner(stderr)
	const prefix = "drover: serving on "
	for sc.Scan() {
		line := sc.Text()
		if url, ok := strings.CutPrefix(line, prefix); ok {
			go func() { _, _ = io.Copy(w, stderr) }()
			return strings.TrimSpace(url), nil
		}
		fmt.Fprintln(w, line)
	}
	return "", errors.New("drover serve exited before it served")
}

// waitReady waits until a replica's /readyz answers 200.
func waitReady(ctx context.Context, c *http.Client, url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequestWithContext(ctx, "GET", url+"/readyz", nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("drover serve at %s not ready within 30s: %v", url, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (s *serveReplicas) count() int { return len(s.urls) }

func (s *serveReplicas) claim(ctx context.Context, queue string, w assignWorker) (*assignedJob, error) {
	var out struct {
		Jobs []jobjson.Job `json:"jobs"`
	}
	err := s.post(ctx, s.urls[w.replica]+"/v1/claim", map[string]any{"queue": queue, "worker": w.name, "worker_type": w.typ,
		"max": 1, "lease_ms": s.leaseMS, "wait_ms": s.waitMS}, &out)
	if err != nil || len(out.Jobs) == 0 {
		return nil, err
	}
	var a assignArgs
	if err := json.Unmarshal(out.Jobs[0].Args, &a); err != nil {
		return nil, err
	}
	j := out.Jobs[0]
	return &assignedJob{id: j.ID, attempt: j.Attempt, token: j.LeaseToken, typ: a.Type}, nil
}

func (s *serveReplicas) finish(ctx context.Context, w assignWorker, j *assignedJob) error {
	var out struct {
		Accepted []int64 `json:"accepted"`
	}
	err := s.post(ctx, s.urls[w.replica]+"/v1/finish", map[string]any{"results": []any{map[string]any{
		"id": j.id, "attempt": j.attempt, "lease_token": j.token, "outcome": "completed"}}}, &out)
	if err == nil && len(out.Accepted) != 1 {
		err = fmt.Errorf("job %d: result rejected", j.id)
	}
	return err
}

func (s *serveReplicas) post(ctx context.Context, url string, body, out any) error {
	return postJSON(ctx, s.http, url, s.secret, body, out)
}

// close stops the replicas gracefully (SIGTERM: they release what they
// hold and stop their clients) and removes the tokens file.
func (s *serveReplicas) close() {
	for _, p := range s.procs {
		_ = p.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range s.procs {
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = p.Process.Kill()
			<-done
		}
	}
	os.RemoveAll(s.dir)
}
