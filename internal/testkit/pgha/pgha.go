// Package pgha starts and controls a throwaway highly available
// PostgreSQL: a pg_auto_failover monitor and two data nodes, a primary and
// a synchronous standby, each run by its keeper (pg_autoctl), on loopback
// ports in a temporary directory. Tests and `drover bench chaos --fault
// failover` use it to kill the primary under load and measure how Drover
// follows the failover through a multi-host URL.
//
// pg_auto_failover decides and carries out the failover; this package only
// sets it up, kills, and watches. Its settings are those of a test rig:
// the monitor declares a node dead after about 3 s without news instead of
// 20 s, and waits 3 s instead of 30 s for a lost primary to drain, so that
// a failover takes seconds. docs/scaling.md explains the set-up an
// operator would run on real machines, and what those timeouts trade.
package pgha

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/internal/testkit/pgcluster"
	"github.com/droverhq/drover/internal/testkit/proctree"
)

// ErrNotInstalled is returned by Start when pg_autoctl is not on PATH.
var ErrNotInstalled = errors.New("pgha: pg_autoctl not found on PATH; install pg_auto_failover, " +
	"e.g. on Debian/Ubuntu: apt-get install -y postgresql-15-auto-failover pg-auto-failover-cli")

// Database is the database the data nodes serve and URL names.
const Database = pgcluster.Database

// user is the role clients connect as: initdb's bootstrap superuser.
const user = "postgres"

// monitorSettings make the monitor notice a dead primary within about
// three seconds (default 20 s) and promote the standby three seconds later
// (default 30 s: the time a primary that lost the monitor but not its
// clients gets to notice and stop taking writes). On a test rig nothing is
// partitioned, only killed, so the wait buys nothing. The monitor's
// shared_buffers is small for the reason of nodeSettings'.
var monitorSettings = map[string]string{
	"shared_buffers":                                   "128MB",
	"pgautofailover.health_check_period":               "1000",
	"pgautofailover.health_check_timeout":              "1000",
	"pgautofailover.health_check_max_retries":          "1",
	"pgautofailover.health_check_retry_delay":          "500",
	"pgautofailover.node_considered_unhealthy_timeout": "3000",
	"pgautofailover.primary_demote_timeout":            "3000",
	"pgautofailover.startup_grace_period":              "1000",
}

// nodeSettings are the data nodes' defaults: pg_autoctl sizes
// shared_buffers to a quarter of the machine's memory, too much for
// several throwaway servers on one machine.
var nodeSettings = map[string]string{
	"shared_buffers":  "128MB",
	"max_connections": "200",
}

// Options configures Start. The zero value is usable.
type Options struct {
	// Dir is the parent of the set's temporary directory; empty means the
	// system temporary directory.
	Dir string
	// Settings are extra server settings of both data nodes, such as
	// {"fsync": "off"}: a killed process loses nothing the kernel holds,
	// so a rig that kills processes, not machines, loses no data without
	// fsync.
	Settings map[string]string
	// Logf, if set, receives progress messages.
	Logf func(format string, args ...any)
	// UnhealthyAfter is how long the monitor waits for news of a node
	// before it counts the node out (node_considered_unhealthy_timeout);
	// zero means 3 s. A test that hangs a standby on purpose raises it:
	// a standby counted out cannot be promoted until it catches up again.
	UnhealthyAfter time.Duration
}

// Node is one PostgreSQL server of the set, with its keeper (or the
// monitor's).
type Node struct {
	Name string
	Port int
	dir  string // data directory
	log  string // the keeper's output

	mu     sync.Mutex
	keeper *exec.Cmd     // the running pg_autoctl; nil once it is gone
	exited chan struct{} // closed when keeper has exited and been reaped
}

// Set is a running pg_auto_failover formation: a monitor and two data
// nodes. Its methods are safe for concurrent use.
type Set struct {
	local   *pgcluster.Local
	autoctl string
	base    string
	env     []string
	logf    func(string, ...any)
	monitor *Node
	nodes   []*Node

	mu      sync.Mutex
	removed bool
}

// Start initialises and starts a monitor, a primary and its synchronous
// standby, and returns once the monitor reports them primary and
// secondary. On failure it removes everything it made; the error carries
// the tail of the failing keeper's log.
func Start(ctx context.Context, opts Options) (*Set, error) {
	autoctl, err := exec.LookPath("pg_autoctl")
	if err != nil {
		return nil, ErrNotInstalled
	}
	local, err := pgcluster.FindLocal()
	if err != nil {
		return nil, err
	}
	base, err := local.MakeDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	s := &Set{local: local, autoctl: autoctl, base: base, logf: opts.Logf}
	if s.logf == nil {
		s.logf = func(string, ...any) {}
	}
	if err := s.start(ctx, opts); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

func (s *Set) start(ctx context.Context, opts Options) error {
	// pg_autoctl keeps its configuration, state and PID files under the
	// XDG directories: ours, so that nothing outlives the set.
	for _, d := range []string{"config", "share", "run"} {
		if err := s.local.Mkdir(filepath.Join(s.base, d)); err != nil {
			return err
		}
	}
	s.env = []string{
		"XDG_CONFIG_HOME=" + filepath.Join(s.base, "config"),
		"XDG_DATA_HOME=" + filepath.Join(s.base, "share"),
		"XDG_RUNTIME_DIR=" + filepath.Join(s.base, "run"),
	}
	used := map[int]bool{}
	newNode := func(name string) (*Node, error) {
		// The kernel may hand out a port it just released again.
		port := 0
		for port == 0 || used[port] {
			var err error
			if port, err = pgcluster.FreePort(); err != nil {
				return nil, err
			}
		}
		used[port] = true
		return &Node{Name: name, Port: port, dir: filepath.Join(s.base, name), log: filepath.Join(s.base, name+".log")}, nil
	}
	var err error
	if s.monitor, err = newNode("monitor"); err != nil {
		return err
	}
	for _, name := range []string{"node1", "node2"} {
		n, err := newNode(name)
		if err != nil {
			return err
		}
		s.nodes = append(s.nodes, n)
	}

	// The monitor.
	monitor := maps.Clone(monitorSettings)
	if opts.UnhealthyAfter > 0 {
		monitor["pgautofailover.node_considered_unhealthy_timeout"] = strconv.FormatInt(opts.UnhealthyAfter.Milliseconds(), 10)
	}
	if err := s.initdb(ctx, s.monitor, monitor); err != nil {
		return err
	}
	if err := s.autoctlRun(ctx, "create", "monitor", "--pgdata", s.monitor.dir, "--pgport", strconv.Itoa(s.monitor.Port),
		"--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl", "--pgctl", s.local.Bin("pg_ctl")); err != nil {
		return err
	}
	// pg_autoctl runs the monitor's server on every address; loopback is
	// enough and exposes nothing.
	if err := s.autoctlRun(ctx, "config", "set", "--pgdata", s.monitor.dir, "postgresql.listen_addresses", "127.0.0.1"); err != nil {
		return err
	}
	if err := s.startKeeper(s.monitor, "run", "--pgdata", s.monitor.dir); err != nil {
		return err
	}
	if err := s.waitFor(ctx, func() string { return "the monitor to accept connections" }, func(ctx context.Context) (bool, error) {
		_, err := s.states(ctx)
		return err == nil, nil
	}); err != nil {
		return err
	}

	// The primary, from a data directory made here (initdb without fsync
	// takes a second, pg_autoctl's takes several), then the standby,
	// which pg_autoctl copies from it with pg_basebackup.
	node1, node2 := s.nodes[0], s.nodes[1]
	all := maps.Clone(nodeSettings)
	maps.Copy(all, opts.Settings)
	if err := s.initdb(ctx, node1, all); err != nil {
		return err
	}
	if err := s.createNode(node1); err != nil {
		return err
	}
	if err := s.waitStates(ctx, map[string]string{node1.Name: "single"}); err != nil {
		return err
	}
	// pg_basebackup starts with a spread checkpoint, which would write
	// what initdb and pg_autoctl dirtied over minutes; an immediate one
	// leaves it nothing to write.
	if err := s.checkpoint(ctx, node1); err != nil {
		return err
	}
	if err := s.createNode(node2); err != nil {
		return err
	}
	if err := s.waitStable(ctx); err != nil {
		return err
	}
	s.logf("pgha: ready at %s (monitor %s)", s.URL(), s.MonitorURL())
	return nil
}

// initdb makes n's data directory with settings in postgresql.auto.conf,
// which PostgreSQL reads after the files pg_autoctl writes, so that they
// win over its defaults, and which pg_basebackup copies to a standby.
func (s *Set) initdb(ctx context.Context, n *Node, settings map[string]string) error {
	out, err := s.local.Run(ctx, s.base, s.local.Bin("initdb"), "-D", n.dir, "-A", "trust", "-U", user,
		"--no-sync", "-E", "UTF8", "--locale=C")
	if err != nil {
		return fmt.Errorf("pgha: initdb %s: %w\n%s", n.Name, err, out)
	}
	conf := "\n# Written by internal/testkit/pgha.\n"
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		conf += fmt.Sprintf("%s = '%s'\n", k, strings.ReplaceAll(settings[k], "'", "''"))
	}
	path := filepath.Join(n.dir, "postgresql.auto.conf")
	old, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	return s.local.WriteFile(path, append(old, conf...))
}

// createNode registers n with the monitor and runs its keeper: the first
// node becomes the primary, the second its standby.
func (s *Set) createNode(n *Node) error {
	return s.startKeeper(n, "create", "postgres", "--pgdata", n.dir, "--pgport", strconv.Itoa(n.Port),
		"--hostname", "127.0.0.1", "--listen", "127.0.0.1", "--name", n.Name, "--dbname", Database,
		"--monitor", s.monitorURL("autoctl_node", "pg_auto_failover"), "--auth", "trust", "--no-ssl",
		"--pgctl", s.local.Bin("pg_ctl"), "--run")
}

// checkpoint runs an immediate checkpoint on n.
func (s *Set) checkpoint(ctx context.Context, n *Node) error {
	conn, err := pgx.Connect(ctx, s.NodeURL(n))
	if err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("pgha: checkpoint on %s: %w", n.Name, err)
	}
	return nil
}

// autoctlRun runs a pg_autoctl command to its end.
func (s *Set) autoctlRun(ctx context.Context, args ...string) error {
	cmd := s.local.Command(ctx, s.base, s.autoctl, args...)
	cmd.Env = append(cmd.Env, s.env...)
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgha: pg_autoctl %s: %w\n%s", strings.Join(args[:2], " "), err, tail(string(out)))
	}
	return nil
}

// startKeeper starts pg_autoctl for n in the background, writing to n's
// log, in a process group of its own: a Ctrl-C at the terminal reaches the
// bench, whose clean-up stops the keepers in order, not the keepers.
func (s *Set) startKeeper(n *Node, args ...string) error {
	log, err := os.OpenFile(n.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("pgha: %w", err)
	}
	defer log.Close() // the child holds its own descriptor
	cmd := s.local.Command(context.Background(), s.base, s.autoctl, args...)
	cmd.Env = append(cmd.Env, s.env...)
	cmd.Stdout, cmd.Stderr = log, log
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgha: starting pg_autoctl for %s: %w", n.Name, err)
	}
	exited := make(chan struct{})
	n.mu.Lock()
	n.keeper, n.exited = cmd, exited
	n.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		n.mu.Lock()
		if n.keeper == cmd {
			n.keeper = nil
		}
		n.mu.Unlock()
		close(exited)
	}()
	return nil
}

// connectTimeout bounds each host's connection attempt in URL. Without it
// a client's first host, hung rather than dead (a stalled machine, a
// partition: the kernel still accepts the connection, nobody answers),
// would take the whole of the caller's deadline, and the second host would
// never be tried.
const connectTimeout = 2 * time.Second

// URL is the multi-host URL of the data nodes: a client tries them in
// turn, each for at most connectTimeout, and keeps the one that takes
// writes, the primary.
func (s *Set) URL() string {
	hosts := make([]string, len(s.nodes))
	for i, n := range s.nodes {
		hosts[i] = "127.0.0.1:" + strconv.Itoa(n.Port)
	}
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable&target_session_attrs=read-write&connect_timeout=%d",
		user, strings.Join(hosts, ","), Database, connectTimeout/time.Second)
}

// NodeURL is the URL of one node alone.
func (s *Set) NodeURL(n *Node) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", user, n.Port, Database)
}

// MonitorURL is the URL of the monitor's database, where pg_auto_failover
// keeps the formation's state and events.
func (s *Set) MonitorURL() string { return s.monitorURL(user, "pg_auto_failover") }

func (s *Set) monitorURL(role, db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", role, s.monitor.Port, db)
}

// states reads each data node's reported and assigned state from the
// monitor, as "reported/assigned" by node name.
func (s *Set) states(ctx context.Context) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.MonitorURL())
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, "SELECT nodename, reportedstate::text || '/' || goalstate::text FROM pgautofailover.node")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	var name, state string
	_, err = pgx.ForEachRow(rows, []any{&name, &state}, func() error { out[name] = state; return nil })
	return out, err
}

// waitStates waits until the monitor reports each named node in the
// given state, reported and assigned alike.
func (s *Set) waitStates(ctx context.Context, want map[string]string) error {
	var last map[string]string
	return s.waitFor(ctx, func() string { return fmt.Sprintf("states %v (last %v)", want, last) }, func(ctx context.Context) (bool, error) {
		got, err := s.states(ctx)
		if err != nil {
			return false, nil // the monitor may be busy; ask again
		}
		last = got
		for name, state := range want {
			if got[name] != state+"/"+state {
				return false, nil
			}
		}
		return true, nil
	})
}

// waitStable waits until one data node is primary and the other its
// secondary, both as reported and as assigned: from then on the primary
// replicates synchronously, and a commit it acknowledges is on both.
func (s *Set) waitStable(ctx context.Context) error {
	var last map[string]string
	return s.waitFor(ctx, func() string { return fmt.Sprintf("a primary and a secondary (last %v)", last) }, func(ctx context.Context) (bool, error) {
		got, err := s.states(ctx)
		if err != nil {
			return false, nil
		}
		last = got
		var states []string
		for _, n := range s.nodes {
			states = append(states, got[n.Name])
		}
		slices.Sort(states)
		return slices.Equal(states, []string{"primary/primary", "secondary/secondary"}), nil
	})
}

// Primary returns the node the monitor has assigned the primary's role
// (wait_primary, a primary without a standby, included), whether or not
// its keeper has reported it in that state yet.
func (s *Set) Primary(ctx context.Context) (*Node, error) {
	got, err := s.states(ctx)
	if err != nil {
		return nil, fmt.Errorf("pgha: asking the monitor: %w", err)
	}
	for _, n := range s.nodes {
		_, assigned, _ := strings.Cut(got[n.Name], "/")
		switch assigned {
		case "primary", "wait_primary", "single":
			return n, nil
		}
	}
	return nil, fmt.Errorf("pgha: no primary: %v", got)
}

// Standby returns the data node that is not the primary.
func (s *Set) Standby(ctx context.Context) (*Node, error) {
	p, err := s.Primary(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range s.nodes {
		if n != p {
			return n, nil
		}
	}
	panic("pgha: a set has two data nodes")
}

// Kill sends SIGKILL to every process of node n at once (see
// proctree.Kill): its keeper, its server and every backend, as the death
// of its machine would. Killing the primary's server alone would race the
// keeper, which restarts it in place, against the monitor, which fails
// over as soon as the keeper reports it down; a dead machine has one
// outcome.
func (s *Set) Kill(n *Node) error {
	n.mu.Lock()
	k := n.keeper
	n.mu.Unlock()
	if k == nil {
		return fmt.Errorf("pgha: %s has no running keeper", n.Name)
	}
	pids, err := proctree.Kill(k.Process.Pid)
	if err != nil {
		return err
	}
	s.logf("pgha: killed %s (%d processes)", n.Name, len(pids))
	return nil
}

// Pause stops every process of node n (SIGSTOP), as a machine that hangs
// would: its server neither answers nor replicates. resume continues them.
func (s *Set) Pause(n *Node) (resume func() error, err error) {
	n.mu.Lock()
	k := n.keeper
	n.mu.Unlock()
	if k == nil {
		return nil, fmt.Errorf("pgha: %s has no running keeper", n.Name)
	}
	pids, err := proctree.Stop(k.Process.Pid)
	cont := func() error {
		var errs []error
		for _, p := range pids {
			if err := syscall.Kill(p, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	if err != nil {
		return nil, errors.Join(err, cont())
	}
	s.logf("pgha: paused %s (%d processes)", n.Name, len(pids))
	return cont, nil
}

// Failover is what one failover took.
type Failover struct {
	From, To *Node
	// Killed is when the primary's machine had been killed (every process
	// stopped, then killed), and Writable how
	// long from then until a new connection through URL committed a write
	// on the new primary: detection, promotion and reconnection, as a
	// client sees them.
	Killed   time.Time
	Writable time.Duration
}

// FailPrimary kills the primary's machine (Kill) and returns once URL
// takes writes again on the other node, or an error if ctx ends first.
func (s *Set) FailPrimary(ctx context.Context) (Failover, error) {
	from, err := s.Primary(ctx)
	if err != nil {
		return Failover{}, err
	}
	f := Failover{From: from}
	if err := s.Kill(from); err != nil {
		return f, err
	}
	f.Killed = time.Now()
	port, err := s.WaitWritable(ctx, from)
	if err != nil {
		return f, err
	}
	f.Writable = time.Since(f.Killed)
	for _, n := range s.nodes {
		if n.Port == port {
			f.To = n
		}
	}
	s.logf("pgha: failover %s -> %s: writable after %s", from.Name, f.To.Name, f.Writable.Round(time.Millisecond))
	if events, err := s.events(ctx, 8); err == nil {
		s.logf("pgha: the monitor's last events:\n%s", strings.Join(events, "\n"))
	}
	return f, nil
}

// WaitWritable waits until a new connection through URL commits a write
// on a node other than not, and returns that node's port.
func (s *Set) WaitWritable(ctx context.Context, not *Node) (int, error) {
	var port int
	var last error
	err := s.waitFor(ctx, func() string {
		return fmt.Sprintf("a primary other than %s to take writes (last error: %v)", not.Name, last)
	}, func(ctx context.Context) (bool, error) {
		// Each attempt bounded: a commit on a primary still waiting for
		// its lost standby would otherwise hang the wait.
		ctx, cancel := context.WithTimeout(ctx, time.Duration(len(s.nodes)+1)*connectTimeout)
		defer cancel()
		conn, err := pgx.Connect(ctx, s.URL())
		if err != nil {
			last = err
			return false, nil
		}
		defer conn.Close(context.WithoutCancel(ctx))
		// txid_current() assigns a transaction ID, so the statement
		// commits a transaction, as a write does.
		err = conn.QueryRow(ctx, "SELECT inet_server_port(), txid_current()").Scan(&port, new(int64))
		last = err
		return err == nil && port != not.Port, nil
	})
	return port, err
}

// events returns the monitor's last n events, oldest first, as lines: what
// it decided, when, and why.
func (s *Set) events(ctx context.Context, n int) ([]string, error) {
	conn, err := pgx.Connect(ctx, s.MonitorURL())
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, `SELECT to_char(eventtime, 'HH24:MI:SS.MS') || ' ' || nodename || ' ' ||
		reportedstate || '/' || goalstate || ': ' || description
		FROM (SELECT * FROM pgautofailover.event ORDER BY eventid DESC LIMIT $1) e ORDER BY eventid`, n)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// waitFor polls cond until it holds, for up to two minutes, or until ctx
// ends. what says what it waits for, in the error; it is called when the
// wait fails, so it may tell what cond saw last.
func (s *Set) waitFor(ctx context.Context, what func() string, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		ok, err := cond(ctx)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgha: waiting for %s: %w%s", what(), ctx.Err(), s.logTails())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logTails returns the end of every keeper's log, for errors.
func (s *Set) logTails() string {
	var b strings.Builder
	for _, n := range append([]*Node{s.monitor}, s.nodes...) {
		if n == nil {
			continue
		}
		data, err := os.ReadFile(n.log)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "\n%s (%s):\n%s", n.Name, n.log, tail(string(data)))
	}
	return b.String()
}

// tail returns the last lines of a log.
func tail(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	return strings.Join(lines[max(0, len(lines)-15):], "\n")
}

// Stop stops the keepers (standby, primary, then the monitor), each of
// which stops its server, and removes the set's directory. It is safe to
// call more than once.
func (s *Set) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return nil
	}
	var errs []error
	nodes := slices.Clone(s.nodes)
	slices.Reverse(nodes)
	for _, n := range append(nodes, s.monitor) {
		if n != nil {
			errs = append(errs, s.stopNode(n))
		}
	}
	s.removed = true
	if err := os.RemoveAll(s.base); err != nil {
		errs = append(errs, fmt.Errorf("pgha: removing %s: %w", s.base, err))
	}
	return errors.Join(errs...)
}

// stopNode stops n's keeper with SIGTERM, which stops its server (fast
// shutdown), and kills what is left if that takes more than a minute.
func (s *Set) stopNode(n *Node) error {
	n.mu.Lock()
	k, exited := n.keeper, n.exited
	n.mu.Unlock()
	if k != nil {
		// A paused node must run to stop.
		if pids, err := proctree.Tree(k.Process.Pid); err == nil {
			for _, p := range pids {
				_ = syscall.Kill(p, syscall.SIGCONT)
			}
		}
		_ = k.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(time.Minute):
			_, _ = proctree.Kill(k.Process.Pid)
			<-exited
		}
	}
	// A server whose keeper was killed alone, or that outlived it, is
	// stopped here: nothing of the set may outlive Stop.
	if pid, err := pgcluster.PostmasterPID(n.dir); err == nil && syscall.Kill(pid, 0) == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// A server killed with its keeper may linger as a zombie, which
		// pg_ctl finds not running.
		out, err := s.local.Run(ctx, s.base, s.local.Bin("pg_ctl"), "-D", n.dir, "-m", "immediate", "-w", "stop")
		if err != nil && !strings.Contains(string(out), "No server running") {
			return fmt.Errorf("pgha: stopping %s: %w\n%s", n.Name, err, out)
		}
	}
	return nil
}
