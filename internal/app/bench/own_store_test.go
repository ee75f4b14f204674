package bench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/testkit/testdb"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// syncBuffer is the bench's output, read by the test while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// benchAsUser runs `drover bench` as a user who named neither a schema nor
// (with url "") a store.
func benchAsUser(ctx context.Context, url string, out io.Writer, args ...string) error {
	cmd := NewCommand(func() Env {
		return Env{DatabaseURL: url, Schema: "drover", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Stdout: out, Stderr: out}
	})
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true // as under the CLI's root
	cmd.SetOut(out)
	cmd.SetErr(out)
	return cmd.ExecuteContext(ctx)
}

var small = []string{"burndown", "--jobs", "300", "--concurrency", "20", "--floor=false"}

// TestBenchOwnFileOnSQLite: with no store named, the bench writes to
// ./drover-bench.db, never ./drover.db, says so first, and removes it at
// the end unless --keep.
func TestBenchOwnFileOnSQLite(t *testing.T) {
	t.Chdir(t.TempDir())
	var out syncBuffer
	if err := benchAsUser(context.Background(), "", &out, small...); err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	if first != "bench: writing to the SQLite file ./drover-bench.db (tables drover_bench_*); removed when the bench ends (--keep keeps it)" {
		t.Errorf("first line = %q", first)
	}
	for _, name := range []string{"drover-bench.db", "drover-bench.db-wal", "drover.db"} {
		if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is left behind (stat: %v)", name, err)
		}
	}

	out = syncBuffer{}
	if err := benchAsUser(context.Background(), "", &out, append(small, "--keep")...); err != nil {
		t.Fatalf("bench --keep: %v\n%s", err, out.String())
	}
	if _, err := os.Stat("drover-bench.db"); err != nil {
		t.Fatalf("--keep removed the bench's file: %v", err)
	}
}

// TestBenchInterruptedCleansUp: Ctrl-C (the command's context cancelled)
// in the middle of a run still removes the bench's file.
func TestBenchInterruptedCleansUp(t *testing.T) {
	t.Chdir(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- benchAsUser(ctx, "", &out, "steady", "--duration", "1m", "--rate", "200", "--floor=false")
	}()
	waitfor.Cond(t, "a progress line", func() bool { return strings.Contains(out.String(), "rate ") })
	if _, err := os.Stat("drover-bench.db"); err != nil {
		t.Fatalf("the bench's file does not exist while it runs: %v", err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatalf("an interrupted bench succeeded:\n%s", out.String())
	}
	if _, err := os.Stat("drover-bench.db"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("drover-bench.db is left behind after the interrupt (stat: %v)\n%s", err, out.String())
	}
}

// TestBenchOwnSchemaOnPostgres: on the application's database the bench
// works in the schema drover_bench, not the default drover, and drops it.
func TestBenchOwnSchemaOnPostgres(t *testing.T) {
	url := testdb.URL(t)
	var out syncBuffer
	if err := benchAsUser(context.Background(), url, &out, small...); err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	if !strings.HasPrefix(out.String(), `bench: writing to the schema "drover_bench" of postgres://`) {
		t.Errorf("output does not start by saying where it writes:\n%s", out.String())
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var schemas []string
	rows, _ := conn.Query(context.Background(), "SELECT nspname FROM pg_namespace WHERE nspname IN ('drover', 'drover_bench')")
	schemas, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(schemas) != 0 {
		t.Fatalf("schemas left behind: %v (%v)", schemas, err)
	}
}

// TestBenchChecksOutputFirst: an unwritable --json path fails at once,
// before the bench creates or measures anything.
func TestBenchChecksOutputFirst(t *testing.T) {
	t.Chdir(t.TempDir())
	var out syncBuffer
	err := benchAsUser(context.Background(), "", &out, "burndown", "--json", "no/such/dir/report.json")
	if err == nil || !errors.Is(err, drover.ErrInvalid) ||
		!strings.Contains(err.Error(), "--json no/such/dir/report.json: directory no/such/dir does not exist") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat("drover-bench.db"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the bench created its store before checking --json (stat: %v)", err)
	}
	if out.String() != "" {
		t.Fatalf("the bench printed before checking --json:\n%s", out.String())
	}
}
