package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/bench/pgstore"
	"github.com/droverhq/drover/internal/app/bench/report"
	"github.com/droverhq/drover/internal/app/bench/stats"
	"github.com/droverhq/drover/internal/testkit/pgha"
)

// Faults that `drover bench chaos` can inject.
var faults = map[string]string{
	"kill-worker":        "SIGKILL one worker process; its jobs come back when their leases expire",
	"kill-worker-repeat": "SIGKILL a worker process and start a new one, three times during the fault window",
	"add-worker":         "start one more worker process; it must take its share",
	"sigterm":            "SIGTERM one worker process; it finishes or releases what it holds at once",
	"backend-kill":       "pg_terminate_backend on every client connection twice a second (PostgreSQL)",
	"pool-exhaust":       "another client holds all but 5 of max_connections for the fault window (PostgreSQL)",
	"idle-tx":            "a transaction held open elsewhere pins the MVCC horizon for the fault window (PostgreSQL)",
	"pg-restart":         "restart PostgreSQL (pg_ctl restart -m fast on --pg-data, the server must be local) (PostgreSQL)",
	"failover": "SIGKILL the primary's machine (keeper, server, backends) of a pg_auto_failover set the bench starts on loopback " +
		"(a monitor, a primary, a synchronous standby; needs pg_autoctl); everyone follows the multi-host URL to the standby",
}

// chaos runs a steady load on worker processes, injects a fault a third of
// the way through for a third of the run, drains, and checks from the store
// that no job was lost and that every extra run of a job is explained by
// an expired lease.
func (r *runner) chaos(ctx context.Context, fault string) (*report.Report, error) {
	pg, isPG := pgstore.Of(r.store.Driver)
	if !isPG && (fault == "backend-kill" || fault == "pool-exhaust" || fault == "idle-tx" || fault == "pg-restart") {
		return nil, usagef("--fault %s needs PostgreSQL", fault)
	}
	if fault == "failover" && r.opts.ha == nil {
		return nil, usagef("--fault failover runs on the pg_auto_failover set the bench starts for it")
	}
	if fault == "pg-restart" && r.opts.pgData == "" {
		return nil, usagef("--fault pg-restart needs --pg-data: the data directory of the local server to restart")
	}
	rep := r.newReport("chaos")
	k := cmp.Or(r.opts.fleetSize(), 2) // chaos needs worker processes to kill
	queue := r.queueName("chaos")
	f := r.procFleet(queue, k)
	if err := f.start(ctx); err != nil {
		return nil, err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = stopFleet(f)
		}
	}()

	faultAt, faultLen := r.opts.duration/3, r.opts.duration/3
	seen := &errorTally{counts: map[string]int{}}
	stopProducers := make(chan struct{})
	p := &producers{r: r, queue: queue, n: r.opts.producers, batch: r.opts.batch, rate: r.opts.rate, exact: true, tally: seen}
	base := f.counters()
	start := time.Now()
	prodDone := make(chan struct{})
	go func() { p.run(ctx, stopProducers); close(prodDone) }()
	injected := make(chan error, 1)
	var failover pgha.Failover // what the failover fault measured; read after injected
	go func() {
		injected <- r.inject(ctx, fault, f, pg, start, faultAt, faultLen, seen, &failover)
	}()

	m, err := r.watch(ctx, f, "chaos", base, time.Now(), 0, r.opts.duration, func(written int64) int64 { return p.inserted.Load() - written })
	close(stopProducers)
	<-prodDone
	if ierr := <-injected; err == nil && ierr != nil {
		err = fmt.Errorf("inject %s: %w", fault, ierr)
	}
	if err != nil {
		return nil, err
	}
	// Drain, watching the store rather than the workers' counters: a
	// killed worker's last results never reach the counters, and its jobs
	// wait for their leases to expire.
	if err := r.drainStore(ctx, queue, 3*r.opts.lease+time.Minute); err != nil {
		return nil, err
	}
	stopped = true
	if err := stopFleet(f); err != nil {
		return nil, err
	}
	v, err := r.verify(ctx, queue, &p.ids)
	if err != nil {
		return nil, err
	}
	pt := r.pointFrom(m, v, p.ids.n)
	fillFromPoint(rep, pt)
	rep.InsertPerSec = float64(p.ids.n) / m.seconds
	rep.Chaos = chaosFigures(fault, m.windows, faultAt, faultLen, v.unexplained, seen.snapshot())
	extra := []string{fmt.Sprintf("%d worker processes", k), fmt.Sprintf("lease %s", r.opts.lease),
		fmt.Sprintf("fault %s at %s for %s: %s", fault, faultAt, faultLen, faults[fault]),
		fmt.Sprintf("%d producers, batch %d, rate %.0f jobs/s", r.opts.producers, r.opts.batch, r.opts.rate)}
	if fault == "failover" {
		rep.Chaos.FailoverSeconds = failover.Writable.Seconds()
		extra = append(extra, fmt.Sprintf("pg_auto_failover set on loopback (fsync off: the fault kills processes, not the machine): %s failed over to %s",
			failover.From.Name, failover.To.Name))
	}
	rep.Settings = r.settings(extra...)
	if rep.Lost != 0 {
		return rep, fmt.Errorf("%w: %d jobs", errLost, rep.Lost)
	}
	if v.unexplained != 0 {
		return rep, fmt.Errorf("%d jobs ran more than once without an expired lease", v.unexplained)
	}
	return rep, nil
}

func faultNames() string {
	names := make([]string, 0, len(faults))
	for n := range faults {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// inject carries out the fault on its schedule.
func (r *runner) inject(ctx context.Context, fault string, f *procFleet, pg *pgstore.Store,
	start time.Time, at, length time.Duration, seen *errorTally, failover *pgha.Failover) error {
	sleepUntil := func(t time.Time) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(time.Until(t)):
			return true
		}
	}
	if !sleepUntil(start.Add(at)) {
		return nil
	}
	fmt.Fprintf(r.out, "chaos      injecting %s at %.1fs\n", fault, time.Since(start).Seconds())
	switch fault {
	case "kill-worker":
		_, err := f.signalOne(syscall.SIGKILL)
		return err
	case "sigterm":
		_, err := f.signalOne(syscall.SIGTERM)
		return err
	case "add-worker":
		if err := f.spawn(); err != nil {
			return err
		}
		return f.waitReady(ctx)
	case "kill-worker-repeat":
		for i := range 3 {
			if i > 0 && !sleepUntil(start.Add(at+time.Duration(i)*length/3)) {
				return nil
			}
			if _, err := f.signalOne(syscall.SIGKILL); err != nil {
				return err
			}
			if err := f.spawn(); err != nil {
				return err
			}
		}
		return nil
	case "pool-exhaust":
		var max int
		if err := r.maxConnections(ctx, &max); err != nil {
			return err
		}
		release, held, err := pg.HoldConnections(ctx, max)
		if err != nil {
			return err
		}
		fmt.Fprintf(r.out, "chaos      holding %d connections\n", held)
		sleepUntil(start.Add(at + length))
		release()
		return nil
	case "failover":
		fo, err := r.opts.ha.FailPrimary(ctx)
		if err != nil {
			return err
		}
		*failover = fo
		fmt.Fprintf(r.out, "chaos      killed %s; %s took writes %.1fs later\n", fo.From.Name, fo.To.Name, fo.Writable.Seconds())
		return nil
	case "pg-restart":
		if err := pgCtl(ctx, r.opts.pgData, "restart", "-m", "fast", "-w", "-t", "60"); err != nil {
			return fmt.Errorf("pg_ctl: %w", err)
		}
		fmt.Fprintf(r.out, "chaos      PostgreSQL restarted at %.1fs\n", time.Since(start).Seconds())
		return nil
	case "idle-tx":
		release, err := pg.HoldSnapshot(ctx)
		if err != nil {
			return err
		}
		sleepUntil(start.Add(at + length))
		release()
		return nil
	case "backend-kill":
		end := start.Add(at + length)
		for time.Now().Before(end) {
			if _, err := pg.TerminateBackends(ctx); err != nil {
				seen.add(err)
			}
			if !sleepUntil(time.Now().Add(500 * time.Millisecond)) {
				return nil
			}
		}
		return nil
	}
	return nil
}

// startHASet starts the pg_auto_failover set whose primary the failover
// fault kills, and points env, and so the bench's store and its worker
// processes, at the set's multi-host URL. The bench starts the set itself:
// killing a primary's machine takes its processes, which a URL to someone
// else's set does not give.
func startHASet(ctx context.Context, env *Env) (*pgha.Set, error) {
	if env.DatabaseURL != "" {
		return nil, usagef("--fault failover starts its own pg_auto_failover set on this machine (a monitor, a primary and a synchronous standby on loopback): leave --database-url and DATABASE_URL out")
	}
	fmt.Fprintln(env.Stderr, "bench: starting a pg_auto_failover set (a monitor, a primary, a synchronous standby) on loopback")
	set, err := pgha.Start(ctx, pgha.Options{Settings: map[string]string{"fsync": "off"}})
	if err != nil {
		return nil, err
	}
	env.DatabaseURL = set.URL()
	return set, nil
}

// chaosFigures splits the windows around the fault.
func chaosFigures(fault string, ws []stats.Window, at, length time.Duration, unexplained int64, errs map[string]int) *report.Chaos {
	c := &report.Chaos{Fault: fault, FaultAtSec: at.Seconds(), FaultSeconds: length.Seconds(),
		RecoverySeconds: -1, UnexplainedDuplicates: unexplained, Errors: errs}
	var before, during, after []stats.Window
	for _, w := range ws {
		switch mid := w.StartSec + w.Seconds/2; {
		case mid < at.Seconds():
			before = append(before, w)
		case mid < (at + length).Seconds():
			during = append(during, w)
		default:
			after = append(after, w)
		}
	}
	c.JobsPerSecBefore, c.JobsPerSecDuring, c.JobsPerSecAfter = rateOf(before), rateOf(during), rateOf(after)
	for _, w := range append(during, after...) {
		if c.JobsPerSecBefore > 0 && w.Rate >= 0.9*c.JobsPerSecBefore {
			c.RecoverySeconds = max(0, w.StartSec+w.Seconds-at.Seconds())
			break
		}
	}
	return c
}

func rateOf(ws []stats.Window) float64 {
	var jobs int64
	var secs float64
	for _, w := range ws {
		jobs += w.Jobs
		secs += w.Seconds
	}
	if secs == 0 {
		return 0
	}
	return float64(jobs) / secs
}

// errorTally counts the errors users saw, by message.
type errorTally struct {
	mu     sync.Mutex
	counts map[string]int
}

func (t *errorTally) add(err error) {
	msg := err.Error()
	if len(msg) > 160 {
		msg = msg[:160]
	}
	t.mu.Lock()
	t.counts[msg]++
	t.mu.Unlock()
}

func (t *errorTally) snapshot() map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int, len(t.counts))
	for k, v := range t.counts {
		out[k] = v
	}
	return out
}

// leaseErrors counts the attempts of a job that ended with an expired
// lease: the only reason a job may legitimately run twice.
func leaseErrors(j *drovertype.JobRow) int {
	n := 0
	for _, e := range j.Errors {
		if strings.HasPrefix(e.Error, "lease expired") {
			n++
		}
	}
	return n
}

// drainStore waits until no job of queue waits or runs, by the store.
func (r *runner) drainStore(ctx context.Context, queue string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		counts, err := r.inserts.JobCountByState(ctx, queue)
		if err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		left := int64(0)
		for s, n := range counts {
			if !s.Finished() {
				left += n
			}
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("drain: %d jobs still waiting or running after %s", left, limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// maxConnections reads how many connections to hold for pool-exhaust:
// all the server accepts but 5, so that the store stays reachable for the
// clients that already hold connections and barely for anyone else.
func (r *runner) maxConnections(ctx context.Context, n *int) error {
	q, ok := pgstore.Of(r.store.Driver)
	if !ok {
		return errors.New("store cannot report max_connections")
	}
	m, err := q.MaxConnections(ctx)
	if err != nil {
		return err
	}
	*n = max(0, m-5)
	return nil
}

// pgCtl runs pg_ctl on a local data directory, as the directory's owner
// when this process is root (PostgreSQL refuses to run as root).
func pgCtl(ctx context.Context, dataDir string, args ...string) error {
	bin, err := exec.LookPath("pg_ctl")
	if err != nil {
		matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
		if len(matches) == 0 {
			return errors.New("pg_ctl not found on PATH or in /usr/lib/postgresql/*/bin")
		}
		bin = matches[len(matches)-1]
	}
	argv := append([]string{bin, "-D", dataDir}, args...)
	if os.Geteuid() == 0 {
		info, err := os.Stat(dataDir)
		if err != nil {
			return err
		}
		owner, err := user.LookupId(strconv.Itoa(int(info.Sys().(*syscall.Stat_t).Uid)))
		if err != nil {
			return err
		}
		argv = append([]string{"runuser", "-u", owner.Username, "--"}, argv...)
	}
	// The restarted server inherits pg_ctl's output: capturing it through
	// a pipe would wait for the server to exit. Send it to the null device
	// and read only pg_ctl's exit status.
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	return nil
}
