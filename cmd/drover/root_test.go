package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/app/jobjson"
)

func TestEmbeddedDefault(t *testing.T) {
	t.Chdir(t.TempDir())
	r := runCLI(t, nil, "enqueue", "hello", `{"n":1}`)
	if r.code != exitOK || r.stdout != "1\n" {
		t.Fatalf("first enqueue on a fresh machine:\n%s", r)
	}
	const notice = "no --database-url or DATABASE_URL: using the embedded store ./drover.db\n"
	if !strings.HasPrefix(r.stderr, notice) {
		t.Errorf("stderr = %q, want it to start with %q", r.stderr, notice)
	}
	if _, err := os.Stat("drover.db"); err != nil {
		t.Fatalf("the embedded store was not created: %v", err)
	}
	// The second command finds the job, and says once more where it looks.
	r = runCLI(t, nil, "jobs", "list", "--json")
	var jobs []jobjson.Job
	decodeJSON(t, r.stdout, &jobs)
	if r.code != exitOK || len(jobs) != 1 || jobs[0].Kind != "hello" || r.stderr != notice {
		t.Fatalf("jobs list on the embedded store:\n%s", r)
	}
}

func TestEnvironmentDefaults(t *testing.T) {
	f := setup(t).migrated(t)
	other := setup(t)
	down := fmt.Sprintf("postgres://u@127.0.0.1:%d/db?connect_timeout=5", closedPort(t))
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		wantSchema string
	}{
		{"both from the environment",
			map[string]string{envDatabaseURL: f.url, "DROVER_SCHEMA": f.schema}, nil, f.schema},
		{"flags win over the environment",
			map[string]string{envDatabaseURL: down, "DROVER_SCHEMA": "nope"},
			[]string{"--database-url", f.url, "--schema", other.schema}, other.schema},
		{"an empty flag means the embedded store, not the environment's",
			map[string]string{envDatabaseURL: down}, []string{"--database-url", "", "--schema", "drover"}, "drover"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			r := runCLI(t, tt.env, append(tt.args, "migrate", "--status", "--json")...)
			var status struct {
				Schema string `json:"schema"`
			}
			if r.code != exitOK {
				t.Fatalf("migrate --status:\n%s", r)
			}
			decodeJSON(t, r.stdout, &status)
			if status.Schema != tt.wantSchema {
				t.Errorf("schema = %q, want %q", status.Schema, tt.wantSchema)
			}
		})
	}
}

func TestBenchEnv(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		want      string // DatabaseURL
		schema    string
		infoLevel bool
		// schemaSet: --schema on the command line, which alone moves the
		// bench out of its own schema.
		schemaSet bool
	}{
		{"defaults", nil, []string{"worker"}, "", "drover", true, false},
		{"environment", map[string]string{envDatabaseURL: "postgres://h/db", "DROVER_SCHEMA": "s"}, []string{"bench", "burndown"},
			"postgres://h/db", "s", false, false},
		{"flags", map[string]string{envDatabaseURL: "postgres://h/db"},
			[]string{"worker", "--database-url", "sqlite:///tmp/x.db", "--schema", "t", "--log-level", "error"},
			"sqlite:///tmp/x.db", "t", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			c := &cli{stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return tt.env[k] }}
			root := c.newRootCommand()
			cmd, rest, err := root.Find(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Fatal(err)
			}
			if err := c.prepare(cmd); err != nil {
				t.Fatal(err)
			}
			e := c.benchEnv()
			if e.DatabaseURL != tt.want || e.Schema != tt.schema || e.SchemaSet != tt.schemaSet || e.Stdout != &stdout || e.Stderr != &stderr {
				t.Errorf("env = %+v, want url %q schema %q and the run's writers", e, tt.want, tt.schema)
			}
			if got := e.Logger.Enabled(context.Background(), slog.LevelInfo); got != tt.infoLevel {
				t.Errorf("info logging enabled = %v, want %v", got, tt.infoLevel)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"version"}, &stdout, &stderr, func(string) string { return "" }); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{`(?m)^drover\s+\S`, `(?m)^module\s+github.com/droverhq/drover$`,
		`(?m)^revision\s+\S`, `(?m)^go\s+` + regexp.QuoteMeta(runtime.Version()) + `$`} {
		if !regexp.MustCompile(want).MatchString(stdout.String()) {
			t.Errorf("version output lacks %q:\n%s", want, stdout.String())
		}
	}
	r := runCLI(t, nil, "version", "--json")
	var v versionInfo
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.Go != runtime.Version() || v.Version == "" {
		t.Fatalf("version --json = %q (%v)", r.stdout, err)
	}
}

func TestHelp(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "Available Commands:"},
		{[]string{"--help"}, "Available Commands:"},
		{[]string{"jobs"}, "drover jobs [command]"},
		{[]string{"enqueue", "--help"}, "drover enqueue KIND JSON [flags]"},
		{[]string{"bench", "--help"}, "drover bench"},
		{[]string{"worker", "--help"}, "drover worker"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runCLI(t, nil, tt.args...)
			if r.code != exitOK || !strings.Contains(r.stdout, tt.want) || r.stderr != "" {
				t.Errorf("want exit 0 and %q in stdout:\n%s", tt.want, r)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"first\nsecond\n", "first; second"},
		{"a\n\n  b  \r\n", "a; b"},
		{"unknown command \"x\" for \"drover\"\n\nDid you mean this?\n\tenqueue\n\tjobs\n",
			`unknown command "x" for "drover" (did you mean enqueue or jobs?)`},
	}
	for _, tt := range tests {
		if got := oneLine(tt.in); got != tt.want {
			t.Errorf("oneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct {
		url, msg, want string
	}{
		{"postgres://u:pw1234@h/db", "failed for u:pw1234@h", "failed for u:xxxxx@h"},
		{"postgres://u:p%40ss@h/db", "password p@ss and p%40ss", "password xxxxx and xxxxx"},
		{"postgres://u:pw1234@h:54x32/db", `port ":54x32" pw1234`, `port ":54x32" xxxxx`},
		{"postgres://u@h/db", "nothing to hide", "nothing to hide"},
		{"", "host=h password=abc123 user=u", "host=h password=xxxxx user=u"},
		{"", "host=h password='a b\\'c' user=u", "host=h password=xxxxx user=u"},
		{"postgres://u@h/db?password=qs-secret&sslmode=disable", "dial u@h?password=qs-secret failed", "dial u@h?password=xxxxx failed"},
		{"postgres://u@h/db?sslpassword=k3y%21", "key k3y! or k3y%21", "key xxxxx or xxxxx"},
	}
	for _, tt := range tests {
		c := &cli{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }, flagURL: urlList{tt.url}}
		if got := c.redact(tt.msg); got != tt.want {
			t.Errorf("redact(%q) with URL %q = %q, want %q", tt.msg, tt.url, got, tt.want)
		}
	}
}
