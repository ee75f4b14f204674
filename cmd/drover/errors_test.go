package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// checkFailure asserts that a run failed with code and printed exactly one
// error line, want, plus the usage hint when the code says usage.
func checkFailure(t *testing.T, r result, code int, want string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit code %d, want %d\n%s", r.code, code, r)
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing", r.stdout)
	}
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if lines[0] != want {
		t.Errorf("error line:\n got %q\nwant %q", lines[0], want)
	}
	wantLines := 1
	if code == exitUsage {
		wantLines = 2
		if len(lines) > 1 && !strings.HasPrefix(lines[1], "Run 'drover") {
			t.Errorf("hint = %q, want Run 'drover … --help' for usage.", lines[1])
		}
	}
	if len(lines) != wantLines {
		t.Errorf("stderr has %d lines, want %d:\n%s", len(lines), wantLines, r.stderr)
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"args not JSON", []string{"enqueue", "k", `{"a":1,}`}, exitUsage,
			"drover: args: invalid JSON at offset 7: invalid character '}' looking for beginning of object key string"},
		{"args nested too deep", []string{"enqueue", "k", strings.Repeat("[", 100) + strings.Repeat("]", 100)}, exitUsage,
			"drover: args: nested deeper than 64 levels"},
		{"unknown chaos fault", []string{"bench", "chaos", "--fault", "unplug"}, exitUsage,
			`drover: --fault "unplug": must be one of add-worker, backend-kill, failover, idle-tx, kill-worker, kill-worker-repeat, pg-restart, pool-exhaust, sigterm`},
		{"args not JSON at all", []string{"enqueue", "k", `hello`}, exitUsage,
			"drover: args: invalid JSON at offset 1: invalid character 'h' looking for beginning of value"},
		{"metadata not JSON", []string{"enqueue", "k", `{}`, "--metadata", `{"a"}`}, exitUsage,
			"drover: --metadata: invalid JSON at offset 4: invalid character '}' after object key"},
		{"metadata not an object", []string{"enqueue", "k", `{}`, "--metadata", `[1]`}, exitUsage,
			"drover: --metadata: must be a JSON object"},
		{"args not an object", []string{"enqueue", "k", `[1]`}, exitUsage,
			"drover: args: must be a JSON object"},
		{"callback args not an object", []string{"enqueue", "k", `{}`, "--batch", "--callback", "cb", "--callback-args", `7`}, exitUsage,
			"drover: --callback-args: must be a JSON object"},
		{"bad port", []string{"--database-url", "postgres://h:54x32/db", "enqueue", "k", `{}`}, exitUsage,
			`drover: --database-url: invalid port "54x32"`},
		{"unknown scheme", []string{"--database-url", "mysql://h/db", "jobs", "list"}, exitUsage,
			`drover: --database-url: unsupported scheme "mysql" (use postgres://… or sqlite:///path)`},
		{"bad schema", []string{"--schema", "Bad-Schema", "enqueue", "k", `{}`}, exitUsage,
			`drover: --schema: schema "Bad-Schema" is invalid: use 1-48 lowercase letters, digits and underscores, not starting with a digit`},
		{"priority out of range", []string{"enqueue", "k", `{}`, "--priority", "99999"}, exitUsage,
			"drover: --priority 99999: must be between -32768 and 32767"},
		{"priority not a number", []string{"enqueue", "k", `{}`, "--priority", "abc"}, exitUsage,
			`drover: invalid argument "abc" for "--priority" flag: strconv.ParseInt: parsing "abc": invalid syntax`},
		{"bad at", []string{"enqueue", "k", `{}`, "--at", "tomorrow"}, exitUsage,
			`drover: --at "tomorrow": use an RFC 3339 time (2025-01-02T15:04:05Z) or a duration from now (10m, 1h30m)`},
		{"zero count", []string{"enqueue", "k", `{}`, "--count", "0"}, exitUsage,
			"drover: --count 0: must be between 1 and 100000"},
		{"negative max attempts", []string{"enqueue", "k", `{}`, "--max-attempts", "-1"}, exitUsage,
			"drover: --max-attempts -1: must be at least 1"},
		{"zero max attempts", []string{"enqueue", "k", `{}`, "--max-attempts", "0"}, exitUsage,
			"drover: --max-attempts 0: must be at least 1"},
		{"bad queue", []string{"enqueue", "k", `{}`, "--queue", "no spaces"}, exitUsage,
			`drover: --queue: queue "no spaces": use 1-128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit`},
		{"bad kind", []string{"enqueue", "bad kind!", `{}`}, exitUsage,
			`drover: kind "bad kind!": use 1-255 letters, digits, '_', '.', ':', '/' or '-', starting with a letter or digit`},
		{"empty tag", []string{"enqueue", "k", `{}`, "--tags", "a,,b"}, exitUsage,
			`drover: tag "": must be 1-255 characters without commas`},
		{"unknown flag", []string{"enqueue", "k", `{}`, "--frobnicate"}, exitUsage,
			"drover: unknown flag: --frobnicate"},
		{"missing json", []string{"enqueue", "k"}, exitUsage,
			"drover: enqueue: missing argument JSON"},
		{"missing kind and json", []string{"enqueue"}, exitUsage,
			"drover: enqueue: missing arguments KIND and JSON"},
		{"too many args", []string{"enqueue", "k", `{}`, "extra"}, exitUsage,
			"drover: enqueue: too many arguments: want KIND JSON, got 3"},
		{"unknown command", []string{"enqeue", "k", `{}`}, exitUsage,
			`drover: unknown command "enqeue" for "drover" (did you mean enqueue?)`},
		{"unknown jobs command", []string{"jobs", "remove", "1"}, exitUsage,
			`drover: unknown command "remove" for "drover jobs"`},
		{"bad log level", []string{"--log-level", "loud", "jobs", "list"}, exitUsage,
			`drover: --log-level "loud": use debug, info, warn or error`},
		{"id not a number", []string{"jobs", "get", "abc"}, exitUsage,
			`drover: job ID "abc": must be a positive integer`},
		{"id zero", []string{"jobs", "cancel", "0"}, exitUsage,
			`drover: job ID "0": must be a positive integer`},
		{"missing id", []string{"jobs", "retry"}, exitUsage,
			"drover: retry: missing argument ID, or a filter (--queue, --state, --kind) for every job that matches it"},
		{"bad state", []string{"jobs", "list", "--state", "done"}, exitUsage,
			`drover: --state "done": use pending, blocked, scheduled, available, retryable, running, completed, cancelled, discarded`},
		{"limit zero", []string{"jobs", "list", "--limit", "0"}, exitUsage,
			"drover: --limit 0: must be between 1 and 10000"},
		{"migrate takes no args", []string{"migrate", "now"}, exitUsage,
			`drover: migrate: takes no arguments, got ["now"]`},
		{"get missing job", []string{"jobs", "get", "999999"}, exitFailure,
			"drover: job 999999: job not found"},
		{"retry missing job", []string{"jobs", "retry", "999999"}, exitFailure,
			"drover: job 999999: job not found"},
		{"cancel missing job", []string{"jobs", "cancel", "999999"}, exitFailure,
			"drover: job 999999: job not found"},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			f.enqueue(t, "existing", `{}`)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					before := f.countJobs(t)
					checkFailure(t, f.run(t, tt.args...), tt.code, tt.want)
					if after := f.countJobs(t); after != before {
						t.Errorf("store went from %d to %d jobs", before, after)
					}
				})
			}
		})
	}
}

func TestSchemaNotMigrated(t *testing.T) {
	f := setup(t)
	want := fmt.Sprintf("drover: schema %q is at version 0 (latest %d), run: drover migrate", f.schema, latestVersion(t))
	for _, args := range [][]string{
		{"enqueue", "k", `{}`},
		{"jobs", "list"},
		{"jobs", "get", "1"},
		{"jobs", "retry", "1"},
		{"jobs", "cancel", "1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			checkFailure(t, f.run(t, args...), exitFailure, want)
		})
	}
	// None of them migrated behind the user's back.
	if out := f.mustRun(t, "migrate", "--status"); !strings.Contains(out, fmt.Sprintf("version 0 of %d", latestVersion(t))) {
		t.Fatalf("after failed commands: %s", out)
	}
}

// closedPort returns a TCP port on 127.0.0.1 that nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func TestDatabaseDown(t *testing.T) {
	const password = "s3cret-Pa55w0rd"
	port := closedPort(t)
	url := fmt.Sprintf("postgres://drover:%s@127.0.0.1:%d/drover?sslmode=disable&connect_timeout=5", password, port)
	wantPrefix := fmt.Sprintf("drover: cannot connect to PostgreSQL at 127.0.0.1:%d (is the database up?): ", port)
	sources := []struct {
		name string
		env  map[string]string
		flag []string
	}{
		{"flag", nil, []string{"--database-url", url}},
		{"environment", map[string]string{envDatabaseURL: url}, nil},
	}
	commands := [][]string{
		{"migrate"},
		{"migrate", "--status"},
		{"enqueue", "k", `{}`},
		{"jobs", "list"},
		{"jobs", "get", "1"},
		{"jobs", "cancel", "1"},
	}
	for _, src := range sources {
		for _, args := range commands {
			t.Run(src.name+"/"+strings.Join(args, " "), func(t *testing.T) {
				r := runCLI(t, src.env, append(src.flag, args...)...)
				if r.code != exitFailure {
					t.Errorf("exit code %d, want %d\n%s", r.code, exitFailure, r)
				}
				if !strings.HasPrefix(r.stderr, wantPrefix) || strings.Count(r.stderr, "\n") != 1 {
					t.Errorf("stderr = %q, want one line starting %q", r.stderr, wantPrefix)
				}
				if strings.Contains(r.stdout+r.stderr, password) {
					t.Errorf("output shows the password:\n%s", r)
				}
			})
		}
	}
}

func TestPasswordNeverShown(t *testing.T) {
	const password = "hunter2-secret"
	tests := []struct {
		name string
		url  string
		code int
	}{
		{"bad port", "postgres://u:" + password + "@h:54x32/db", exitUsage},
		{"port out of range", "postgres://u:" + password + "@h:99999/db", exitUsage},
		{"bad option", "postgres://u:" + password + "@h/db?sslmode=bogus", exitUsage},
		{"no scheme", "u:" + password + "@h/db", exitUsage},
		{"keyword form", "host=h user=u password=" + password, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []result{
				runCLI(t, nil, "--database-url", tt.url, "jobs", "list"),
				runCLI(t, map[string]string{envDatabaseURL: tt.url}, "jobs", "list"),
			} {
				if r.code != tt.code {
					t.Errorf("exit code %d, want %d\n%s", r.code, tt.code, r)
				}
				if strings.Contains(r.stdout+r.stderr, password) {
					t.Errorf("output shows the password:\n%s", r)
				}
			}
		})
	}
}

// TestSourceNamedInErrors checks that a bad value is blamed on where it
// came from, so that a user who never typed --database-url is pointed at
// their environment.
func TestSourceNamedInErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"url flag", nil, []string{"--database-url", "mysql://h/db", "jobs", "list"},
			`drover: --database-url: unsupported scheme "mysql" (use postgres://… or sqlite:///path)`},
		{"url environment", map[string]string{envDatabaseURL: "mysql://h/db"}, []string{"jobs", "list"},
			`drover: DATABASE_URL: unsupported scheme "mysql" (use postgres://… or sqlite:///path)`},
		{"schema flag", nil, []string{"--schema", "1x", "jobs", "list"},
			`drover: --schema: schema "1x" is invalid: use 1-48 lowercase letters, digits and underscores, not starting with a digit`},
		{"schema environment", map[string]string{"DROVER_SCHEMA": "1x"}, []string{"jobs", "list"},
			`drover: DROVER_SCHEMA: schema "1x" is invalid: use 1-48 lowercase letters, digits and underscores, not starting with a digit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkFailure(t, runCLI(t, tt.env, tt.args...), exitUsage, tt.want)
		})
	}
}

// TestArgsFromStdin reads args with JSON "-": args of a size no command line
// can carry are stored intact, and args over the limit are refused with the
// limit named and nothing stored.
func TestArgsFromStdin(t *testing.T) {
	f := backends[0].setup(t).migrated(t)
	withStdin := func(t *testing.T, data string) {
		t.Helper()
		file := filepath.Join(t.TempDir(), "stdin")
		if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		in, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		old := os.Stdin
		os.Stdin = in
		t.Cleanup(func() { os.Stdin = old; in.Close() })
	}

	big := `{"blob":"` + strings.Repeat("x", 512<<10) + `"}`
	withStdin(t, big)
	id := strings.TrimSpace(f.mustRun(t, "enqueue", "k", "-"))
	_, client := f.open(t)
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatalf("enqueue printed %q, want an id", id)
	}
	row, err := client.JobGet(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	var stored struct{ Blob string }
	if err := json.Unmarshal(row.EncodedArgs, &stored); err != nil || len(stored.Blob) != 512<<10 {
		t.Errorf("stored args hold a blob of %d bytes (%v), want %d", len(stored.Blob), err, 512<<10)
	}

	before := f.countJobs(t)
	withStdin(t, `{"blob":"`+strings.Repeat("x", 2<<20)+`"}`)
	checkFailure(t, f.run(t, "enqueue", "k", "-"), exitUsage, "drover: args: standard input holds more than the limit of 1048576 bytes")
	if after := f.countJobs(t); after != before {
		t.Errorf("store went from %d to %d jobs", before, after)
	}
}

// TestSQLiteDirectoryMissing names the missing directory instead of
// SQLite's "unable to open database file".
func TestSQLiteDirectoryMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	r := runCLI(t, nil, "--database-url", "sqlite://"+dir+"/jobs.db", "jobs", "list")
	checkFailure(t, r, exitFailure, fmt.Sprintf(
		"drover: open sqlite store %s/jobs.db: directory %s does not exist (create it, or point --database-url elsewhere)", dir, dir))
}

// TestServeAddressInUse: a port another process holds is a failure of the
// moment, not a mistake in the command line: exit 1, no usage hint.
func TestServeAddressInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	f := setupSQLite(t)
	checkFailure(t, f.run(t, "--log-level", "error", "serve", "--listen", addr), exitFailure,
		"drover: cannot listen on "+addr+": address already in use")
}
