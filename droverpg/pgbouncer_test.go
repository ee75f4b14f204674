package droverpg_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/testdb"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestThroughPgBouncerTransactionPooling runs two clients through PgBouncer
// in transaction pooling mode, where a session's state (prepared
// statements, LISTEN) does not survive from one transaction to the next:
// with default_query_exec_mode=exec in the URL and PollOnly, every job runs
// exactly once. It needs the pgbouncer binary (CI installs it) and skips
// without it.
func TestThroughPgBouncerTransactionPooling(t *testing.T) {
	bin, err := exec.LookPath("pgbouncer")
	if err != nil {
		t.Skip("pgbouncer not installed (apt-get install pgbouncer); .ci/run installs it")
	}
	ctx := context.Background()
	schema := testdb.NewSchema(t)
	url := startPgBouncer(t, bin, testdb.URL(t)) + "&default_query_exec_mode=exec"

	var mu sync.Mutex
	runs := map[int]int{}
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[sleepArgs]) error {
		mu.Lock()
		runs[j.Args.Ms]++
		mu.Unlock()
		return nil
	}))
	newClient := func() *drover.Client[pgx.Tx] {
		cfg, err := pgxpool.ParseConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		cfg.MaxConns = 8
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		d, err := droverpg.New(pool, droverpg.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drover.Migrate(ctx, d); err != nil {
			t.Fatal(err)
		}
		c, err := drover.NewClient(d, &drover.Config{
			Queues:   map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 20}},
			Workers:  workers,
			PollOnly: true,
			Logger:   slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := newClient(), newClient()
	const jobs = 3000
	params := make([]drover.InsertManyParams, jobs)
	for i := range params {
		params[i] = drover.InsertManyParams{Args: sleepArgs{Ms: i}}
	}
	if _, err := a.InsertMany(ctx, params); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*drover.Client[pgx.Tx]{a, b} {
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Stop(context.Background()) })
	}
	var counts map[drovertype.JobState]int64
	if !waitfor.Within(60*time.Second, func() bool {
		var err error
		if counts, err = a.JobCountByState(ctx, ""); err != nil {
			t.Fatal(err)
		}
		return counts[drovertype.JobStateCompleted] == jobs
	}) {
		t.Fatalf("jobs not completed through PgBouncer: %v", counts)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range jobs {
		if runs[i] != 1 {
			t.Fatalf("job %d ran %d times, want once", i, runs[i])
		}
	}
}

// startPgBouncer starts PgBouncer in transaction pooling mode in front of
// the server dbURL names and returns a URL through it. PgBouncer refuses to
// run as root, so under root it runs as the postgres user, as the test
// cluster does.
func startPgBouncer(t *testing.T, bin, dbURL string) string {
	t.Helper()
	up, err := pgconn.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()

	// Not t.TempDir: its parent is private to this user, and PgBouncer may
	// run as another.
	dir, err := os.MkdirTemp("", "drover-pgbouncer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ini := fmt.Sprintf(`[databases]
%[1]s = host=%[2]s port=%[3]d dbname=%[1]s user=%[4]s
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %[5]d
unix_socket_dir =
auth_type = trust
auth_file = %[6]s
pool_mode = transaction
default_pool_size = 4
max_client_conn = 100
logfile = %[7]s
`, up.Database, up.Host, up.Port, up.User, port, filepath.Join(dir, "users.txt"), filepath.Join(dir, "pgbouncer.log"))
	if err := os.WriteFile(filepath.Join(dir, "pgbouncer.ini"), []byte(ini), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte(fmt.Sprintf("%q \"\"\n", up.User)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{bin, filepath.Join(dir, "pgbouncer.ini")}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		pg, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root and there is no postgres user to run pgbouncer as")
		}
		uid, _ := strconv.Atoi(pg.Uid)
		gid, _ := strconv.Atoi(pg.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	url := fmt.Sprintf("postgres://%s@127.0.0.1:%d/%s?sslmode=disable", up.User, port, up.Database)
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := pgx.Connect(context.Background(), url+"&default_query_exec_mode=simple_protocol")
		if err == nil {
			conn.Close(context.Background())
			return url
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "pgbouncer.log"))
			t.Fatalf("pgbouncer did not come up: %v\n%s%s", err, log, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
