package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/jobjson"
	"github.com/droverhq/drover/internal/app/storeurl"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// commandTimeout bounds every in-process command, so that a store that
// hangs fails the test that ran into it instead of the whole binary.
const commandTimeout = 2 * time.Minute

// fixture is one store for a test: a fresh PostgreSQL schema or a fresh
// SQLite file, with the global flags that point the CLI at it.
type fixture struct {
	kind   string
	url    string
	schema string
	// env is the whole environment the CLI sees, so that the DATABASE_URL
	// of whoever runs the tests never leaks in.
	env map[string]string
}

// setup gives the test a fresh, unmigrated PostgreSQL schema.
func setup(t *testing.T) *fixture {
	t.Helper()
	return &fixture{kind: storeurl.Postgres, url: testdb.URL(t), schema: testdb.NewSchema(t)}
}

// setupSQLite gives the test a SQLite file of its own, not yet created.
func setupSQLite(t *testing.T) *fixture {
	t.Helper()
	return &fixture{kind: storeurl.SQLite, url: "sqlite://" + filepath.Join(t.TempDir(), "drover.db"), schema: "drover"}
}

// backends are the stores that tests about behaviour common to both run on.
var backends = []struct {
	name  string
	setup func(t *testing.T) *fixture
}{
	{"postgres", setup},
	{"sqlite", setupSQLite},
}

// result is what one run of the CLI did.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return "exit " + strconv.Itoa(r.code) + "\nstdout:\n" + r.stdout + "stderr:\n" + r.stderr
}

// runCLI runs the command tree in-process with a hermetic environment.
func runCLI(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := execute(ctx, args, &stdout, &stderr, func(k string) string { return env[k] })
	if ctx.Err() != nil {
		t.Fatalf("drover %s: did not finish within %s\n%s", strings.Join(args, " "), commandTimeout, stderr.String())
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// run runs the CLI on the fixture's store; flags in args come after the
// fixture's, so a test can override them. A --database-url in args
// replaces the fixture's: given twice, the flag names the shards of a
// fleet.
func (f *fixture) run(t *testing.T, args ...string) result {
	t.Helper()
	full := []string{"--schema", f.schema}
	if !slices.Contains(args, "--database-url") {
		full = append(full, "--database-url", f.url)
	}
	return runCLI(t, f.env, append(full, args...)...)
}

// mustRun runs the CLI and fails the test unless it succeeds.
func (f *fixture) mustRun(t *testing.T, args ...string) string {
	t.Helper()
	r := f.run(t, args...)
	if r.code != exitOK {
		t.Fatalf("drover %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// migrated migrates the fixture's store and returns the fixture.
func (f *fixture) migrated(t *testing.T) *fixture {
	t.Helper()
	f.mustRun(t, "migrate")
	return f
}

// testClient is what the tests call of a client on the fixture's store:
// the interface the CLI and the server share.
type testClient = storeClient

// open opens the fixture's store directly, to check what the CLI stored
// without trusting the CLI to read it back.
func (f *fixture) open(t *testing.T) (*storeurl.Store, testClient) {
	t.Helper()
	ctx := context.Background()
	target, err := storeurl.Parse(f.url, "url")
	if err != nil {
		t.Fatal(err)
	}
	st, err := storeurl.Open(ctx, target, storeurl.Options{Schema: f.schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	client, err := storeurl.NewClient[testClient](st, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st, client
}

// countJobs counts every job in the store, 0 when it is not migrated.
func (f *fixture) countJobs(t *testing.T) int64 {
	t.Helper()
	ctx := context.Background()
	st, client := f.open(t)
	version, _, err := drover.MigrationStatus(ctx, st.Driver)
	if err != nil {
		t.Fatal(err)
	}
	if version == 0 {
		return 0
	}
	counts, err := client.JobCountByState(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}

// getJob reads a job straight from the store.
func (f *fixture) getJob(t *testing.T, id int64) *drovertype.JobRow {
	t.Helper()
	_, client := f.open(t)
	j, err := client.JobGet(context.Background(), id)
	if err != nil {
		t.Fatalf("get job %d: %v", id, err)
	}
	return j
}

// enqueue runs `drover enqueue` and returns the ids it printed.
func (f *fixture) enqueue(t *testing.T, args ...string) []int64 {
	t.Helper()
	out := f.mustRun(t, append([]string{"enqueue"}, args...)...)
	var ids []int64
	for _, line := range strings.Fields(out) {
		id, err := strconv.ParseInt(line, 10, 64)
		if err != nil {
			t.Fatalf("enqueue printed %q, want one id per line", out)
		}
		ids = append(ids, id)
	}
	return ids
}

// getJSON runs `drover jobs get ID --json` and decodes it.
func (f *fixture) getJSON(t *testing.T, id int64) jobjson.Job {
	t.Helper()
	var j jobjson.Job
	decodeJSON(t, f.mustRun(t, "jobs", "get", strconv.FormatInt(id, 10), "--json"), &j)
	return j
}

func decodeJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
}

// sameJSON compares two JSON documents by value, since a store may
// normalise whitespace and key order.
func sameJSON(t *testing.T, got, want []byte) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("decode %q: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("decode %q: %v", want, err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return bytes.Equal(gb, wb)
}
