// Package pgcluster starts and controls a throwaway PostgreSQL cluster.
//
// It exists so that tests, benchmark helpers and chaos tests can get a real
// server without depending on a shared, long-lived database: every Cluster
// lives in its own temporary directory, listens only on loopback and is
// removed again by Stop. The server binaries (initdb, pg_ctl) must be
// installed locally; nothing is downloaded.
package pgcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/internal/testkit/cgroup"
)

// Database is the name of the database that Start creates and URL points at.
const Database = "drover"

// superuser is the bootstrap role created by initdb. It matches the OS user
// the server runs as when we are root, which keeps the URLs predictable.
const superuser = "postgres"

// installHint tells a developer exactly what to do when the server binaries
// are missing, because "executable file not found" alone is not actionable.
const installHint = "install PostgreSQL 15 server binaries, e.g. on Debian/Ubuntu: " +
	"apt-get install -y postgresql-15 (binaries land in /usr/lib/postgresql/15/bin, " +
	"which pgcluster searches even when it is not on PATH)"

// Options configures Start. The zero value is usable.
type Options struct {
	// Dir is the parent directory in which the cluster's own temporary
	// directory is created. Empty means the system temporary directory.
	Dir string
	// Port is the TCP port on 127.0.0.1 to listen on. Zero picks a free one.
	Port int
	// Settings are extra postgresql.conf settings applied on top of the
	// defaults, for example {"fsync": "off"}.
	Settings map[string]string
	// Logf, if set, receives progress messages. It is useful for verbose
	// test output; nil discards them.
	Logf func(format string, args ...any)
	// CPU, if set, is the control group the server runs in: every start
	// moves the postmaster and what it has forked into it, and the
	// backends it forks later are born there, so the whole server is held
	// to the group's CPU share. The group stays the caller's, who removes
	// it after Stop.
	CPU *cgroup.CPU
}

// Cluster is a running (or stopped) throwaway PostgreSQL cluster. Its
// methods are safe for concurrent use.
type Cluster struct {
	baseDir string // temporary directory owned by the cluster, removed by Stop
	dataDir string
	logFile string
	port    int
	local   *Local
	cpu     *cgroup.CPU // the group the server runs in; nil for none
	logf    func(string, ...any)

	mu      sync.Mutex
	running bool
	removed bool
}

// Default server settings. max_connections is generous because tests run
// many pools in parallel; shared_buffers is small enough for CI machines.
var defaultSettings = map[string]string{
	"max_connections": "300",
	"shared_buffers":  "128MB",
}

// maxSocketPath is the longest unix socket path the kernel accepts
// (sizeof(sockaddr_un.sun_path) minus the terminating NUL on Linux).
const maxSocketPath = 107

// Start initialises a new cluster in a fresh temporary directory, starts the
// server on 127.0.0.1 and creates the database named by Database. On failure
// everything it created is removed again and the error includes the tail of
// the server log when there is one.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	local, err := FindLocal()
	if err != nil {
		return nil, err
	}
	baseDir, err := local.MakeDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		baseDir: baseDir,
		dataDir: filepath.Join(baseDir, "data"),
		logFile: filepath.Join(baseDir, "postgres.log"),
		local:   local,
		cpu:     opts.CPU,
		logf:    logf,
	}
	if err := c.bootstrap(ctx, opts); err != nil {
		c.cleanupAfterFailedStart()
		return nil, err
	}
	return c, nil
}

// bootstrap runs initdb, writes the configuration, starts the server and creates
// the application database.
func (c *Cluster) bootstrap(ctx context.Context, opts Options) error {
	initdb := c.local.Bin("initdb")
	c.logf("pgcluster: initdb in %s (%s)", c.dataDir, initdb)
	// --locale=C makes the cluster independent of whatever locales happen to
	// be installed and gives byte-order collation, which tests can rely on.
	if out, err := c.run(ctx, initdb,
		"-D", c.dataDir, "-A", "trust", "-U", superuser,
		"--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		return fmt.Errorf("pgcluster: initdb failed: %w\n%s", err, out)
	}

	// A port picked by FreePort can be taken by someone else before the
	// server binds it, so an automatically chosen port gets a few retries.
	attempts := 1
	if opts.Port == 0 {
		attempts = 3
	}
	var err error
	for i := range attempts {
		c.port = opts.Port
		if c.port == 0 {
			if c.port, err = FreePort(); err != nil {
				return err
			}
		}
		if err = c.writeConfig(opts.Settings); err != nil {
			return err
		}
		// Start each attempt with an empty log so that the error check
		// below and the log tail only see this attempt's messages.
		if err = os.Remove(c.logFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("pgcluster: %w", err)
		}
		err = c.StartServer(ctx)
		if err == nil || !strings.Contains(err.Error(), "Address already in use") || i == attempts-1 {
			break
		}
		c.logf("pgcluster: port %d was taken, retrying with another one", c.port)
	}
	if err != nil {
		return err
	}

	if err := c.createDatabase(ctx); err != nil {
		return fmt.Errorf("%w%s", err, c.logTail())
	}
	c.logf("pgcluster: ready at %s", c.URL())
	return nil
}

// cleanupAfterFailedStart tears down whatever a failed Start left behind.
// It uses a fresh context because the caller's may be what failed.
func (c *Cluster) cleanupAfterFailedStart() {
	if _, err := os.Stat(filepath.Join(c.dataDir, "postmaster.pid")); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = c.run(ctx, c.local.Bin("pg_ctl"), "-D", c.dataDir, "-m", "immediate", "-w", "stop")
	}
	_ = os.RemoveAll(c.baseDir)
}

// URL returns the connection string for the application database.
func (c *Cluster) URL() string { return c.url(Database) }

// AdminURL returns the connection string for the maintenance database
// "postgres", for operations such as creating or dropping databases.
func (c *Cluster) AdminURL() string { return c.url("postgres") }

func (c *Cluster) url(db string) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", superuser, c.port, db)
}

// Port returns the TCP port the server listens on.
func (c *Cluster) Port() int { return c.port }

// DataDir returns the cluster's data directory.
func (c *Cluster) DataDir() string { return c.dataDir }

// Stop shuts the server down with a fast shutdown and removes the cluster's
// temporary directory. It is safe to call more than once; later calls are
// no-ops. The directory is removed even when the shutdown fails, so that a
// broken server does not leave gigabytes behind in /tmp.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.removed {
		return nil
	}
	var stopErr error
	if c.running {
		stopErr = c.stopLocked()
	}
	c.removed = true
	if err := os.RemoveAll(c.baseDir); err != nil {
		return errors.Join(stopErr, fmt.Errorf("pgcluster: removing %s: %w", c.baseDir, err))
	}
	return stopErr
}

// Restart stops the server with a fast shutdown and starts it again on the
// same port, returning once it accepts connections. Existing connections are
// terminated, which is the point for chaos tests.
func (c *Cluster) Restart(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.removed {
		return errors.New("pgcluster: cluster already stopped and removed")
	}
	if c.running {
		if err := c.stopLocked(); err != nil {
			return err
		}
	}
	return c.startLocked(ctx)
}

// StopServer shuts the server down (fast mode) but keeps the data directory,
// so that StartServer can bring the same cluster back after a period of
// downtime. Stopping a server that is not running is a no-op.
func (c *Cluster) StopServer() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return nil
	}
	return c.stopLocked()
}

// StartServer starts a stopped server on its original port and waits until
// it accepts connections. Starting a running server is a no-op.
func (c *Cluster) StartServer(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.removed {
		return errors.New("pgcluster: cluster already stopped and removed")
	}
	if c.running {
		return nil
	}
	return c.startLocked(ctx)
}

func (c *Cluster) stopLocked() error {
	// Stopping must not be cut short by a caller's expiring context: a half
	// stopped server is worse than a slow stop, so use our own deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c.logf("pgcluster: stopping server on port %d", c.port)
	out, err := c.run(ctx, c.local.Bin("pg_ctl"), "-D", c.dataDir, "-m", "fast", "-w", "-t", "60", "stop")
	if err != nil {
		// A fast shutdown can hang behind a stuck checkpoint; an immediate
		// one cannot, and leaving an orphaned server running is worse than
		// crash recovery on the next start.
		if _, err2 := c.run(ctx, c.local.Bin("pg_ctl"), "-D", c.dataDir, "-m", "immediate", "-w", "stop"); err2 == nil {
			c.running = false
		}
		return fmt.Errorf("pgcluster: pg_ctl stop failed: %w\n%s%s", err, out, c.logTail())
	}
	c.running = false
	return nil
}

func (c *Cluster) startLocked(ctx context.Context) error {
	c.logf("pgcluster: starting server on port %d", c.port)
	out, err := c.run(ctx, c.local.Bin("pg_ctl"), "-D", c.dataDir, "-l", c.logFile, "-w", "-t", "60", "start")
	if err != nil {
		return fmt.Errorf("pgcluster: pg_ctl start failed: %w\n%s%s", err, out, c.logTail())
	}
	c.running = true
	if c.cpu != nil {
		if err := c.enterGroup(); err != nil {
			return err
		}
	}
	// pg_ctl -w only knows that the postmaster reported ready; make sure a
	// TCP client can actually get in before we hand the cluster back.
	if err := c.waitReady(ctx); err != nil {
		return fmt.Errorf("%w%s", err, c.logTail())
	}
	return nil
}

// enterGroup moves the running server into its CPU group: the postmaster,
// whose PID heads postmaster.pid, and the processes it has already forked.
func (c *Cluster) enterGroup() error {
	pid, err := PostmasterPID(c.dataDir)
	if err != nil {
		return err
	}
	if err := c.cpu.AddTree(pid); err != nil {
		return fmt.Errorf("pgcluster: moving the server into %s: %w", c.cpu.Dir(), err)
	}
	c.logf("pgcluster: server (postmaster %d) held to %g CPU in %s", pid, c.cpu.Share(), c.cpu.Dir())
	return nil
}

// waitReady polls until a connection to the maintenance database succeeds.
func (c *Cluster) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	delay := 10 * time.Millisecond
	for {
		conn, err := pgx.Connect(ctx, c.AdminURL())
		if err == nil {
			return conn.Close(context.WithoutCancel(ctx))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgcluster: server on port %d does not accept connections: %w", c.port, err)
		case <-time.After(delay):
		}
		delay = min(delay*2, 500*time.Millisecond)
	}
}

func (c *Cluster) createDatabase(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, c.AdminURL())
	if err != nil {
		return fmt.Errorf("pgcluster: connecting to postgres database: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{Database}.Sanitize()); err != nil {
		return fmt.Errorf("pgcluster: creating database %s: %w", Database, err)
	}
	return nil
}

// writeConfig writes our settings into a separate file included from
// postgresql.conf. Keeping them apart from initdb's defaults makes it easy to
// rewrite them (for a port retry) and to see at a glance what was changed.
func (c *Cluster) writeConfig(extra map[string]string) error {
	settings := map[string]string{
		"listen_addresses": "127.0.0.1",
		"port":             strconv.Itoa(c.port),
		// Only needed so that local tools like psql -h <dir> work; TCP is
		// what clients use. Disable it if the path would be too long.
		"unix_socket_directories": "",
	}
	if len(filepath.Join(c.baseDir, ".s.PGSQL."+strconv.Itoa(c.port))) <= maxSocketPath {
		settings["unix_socket_directories"] = c.baseDir
	}
	for k, v := range defaultSettings {
		settings[k] = v
	}
	for k, v := range extra {
		settings[k] = v
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# Written by internal/testkit/pgcluster; overrides postgresql.conf.\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s = '%s'\n", k, strings.ReplaceAll(settings[k], "'", "''"))
	}
	const name = "drover.conf"
	if err := c.writeDataFile(name, []byte(b.String())); err != nil {
		return err
	}

	confPath := filepath.Join(c.dataDir, "postgresql.conf")
	conf, err := os.ReadFile(confPath)
	if err != nil {
		return fmt.Errorf("pgcluster: reading postgresql.conf: %w", err)
	}
	include := "include = '" + name + "'\n"
	if !bytes.Contains(conf, []byte(include)) {
		conf = append(conf, "\n"+include...)
		if err := c.writeDataFile("postgresql.conf", conf); err != nil {
			return err
		}
	}
	return nil
}

// writeDataFile writes a file into the data directory, owned by the server
// user, with the 0600 permissions PostgreSQL expects for its files.
func (c *Cluster) writeDataFile(name string, data []byte) error {
	return c.local.WriteFile(filepath.Join(c.dataDir, name), data)
}

// logTail returns the last lines of the server log, formatted for appending
// to an error, or "" when there is no log yet.
func (c *Cluster) logTail() string {
	const maxBytes = 4096
	f, err := os.Open(c.logFile)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxBytes {
		_, _ = f.Seek(-maxBytes, io.SeekEnd)
	}
	data, _ := io.ReadAll(f)
	text := strings.TrimSpace(string(data))
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return "\nserver log (" + c.logFile + ", tail):\n" + strings.Join(lines, "\n")
}

// run executes a PostgreSQL tool, as the server user when we are root,
// from the cluster's own directory, and returns its combined output for
// error messages.
func (c *Cluster) run(ctx context.Context, bin string, args ...string) ([]byte, error) {
	return c.local.Run(ctx, c.baseDir, bin, args...)
}
