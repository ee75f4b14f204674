package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary stand in for the drover binary: the scale
// scenario re-executes its own binary as `worker` processes.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		cmd := NewWorkerCommand(func() Env {
			return Env{DatabaseURL: os.Getenv("DATABASE_URL"), Schema: "drover", Logger: discardLogger(),
				Stdout: os.Stdout, Stderr: os.Stderr}
		})
		cmd.SetArgs(stripGlobal(os.Args[2:]))
		if err := cmd.Execute(); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// stripGlobal drops the CLI's global flags, which the bare worker command
// does not define.
func stripGlobal(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--schema", "--log-level":
			i++
			continue
		}
		out = append(out, args[i])
	}
	return out
}

func setup(t *testing.T) (func(args ...string) (map[string]any, string, error), string) {
	t.Helper()
	dir := t.TempDir()
	url := "sqlite://" + filepath.Join(dir, "bench.db")
	if u := os.Getenv("DROVER_BENCH_TEST_URL"); u != "" {
		url = u
	}
	runCmd := func(args ...string) (map[string]any, string, error) {
		var out bytes.Buffer
		jsonPath := filepath.Join(dir, "report.json")
		_ = os.Remove(jsonPath)
		cmd := NewCommand(func() Env {
			return Env{DatabaseURL: url, Schema: "drover", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				Stdout: &out, Stderr: &out}
		})
		cmd.SetArgs(append(args, "--json", jsonPath, "--markdown", "--plot", filepath.Join(dir, "plot.svg")))
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		err := cmd.ExecuteContext(context.Background())
		var rep map[string]any
		if b, rerr := os.ReadFile(jsonPath); rerr == nil {
			if jerr := json.Unmarshal(b, &rep); jerr != nil {
				t.Fatalf("report is not JSON: %v", jerr)
			}
		}
		return rep, out.String(), err
	}
	return runCmd, dir
}

func TestScenariosEndToEndOnSQLite(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		points int
	}{
		{"burndown", []string{"burndown", "--jobs", "3000", "--concurrency", "50"}, 0},
		{"steady", []string{"steady", "--duration", "2s", "--rate", "1000", "--batch", "10"}, 0},
		{"latency", []string{"latency", "--duration", "2s", "--rate", "200"}, 0},
		{"scale", []string{"scale", "--processes", "1,2", "--jobs", "2000", "--concurrency", "20"}, 2},
		{"streams", []string{"streams", "--streams", "1,2", "--duration", "2s", "--rate", "300"}, 2},
		{"keyed", []string{"keyed", "--jobs", "3000", "--keys", "30", "--concurrency", "50"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			runCmd, dir := setup(t)
			rep, out, err := runCmd(tc.args...)
			if err != nil {
				t.Fatalf("%s failed: %v\n%s", tc.name, err, out)
			}
			for _, key := range []string{"scenario", "driver", "jobs", "seconds", "jobs_per_sec", "steady_jobs_per_sec",
				"insert_per_sec", "latency_ms", "lost", "duplicates", "windows"} {
				if _, ok := rep[key]; !ok {
					t.Errorf("report lacks %q", key)
				}
			}
			if rep["scenario"] != tc.name || rep["driver"] != "sqlite" {
				t.Errorf("scenario/driver = %v/%v", rep["scenario"], rep["driver"])
			}
			if rep["lost"].(float64) != 0 {
				t.Errorf("lost = %v", rep["lost"])
			}
			if rep["jobs"].(float64) <= 0 || rep["jobs_per_sec"].(float64) <= 0 {
				t.Errorf("jobs = %v, jobs/s = %v", rep["jobs"], rep["jobs_per_sec"])
			}
			lat := rep["latency_ms"].(map[string]any)
			for _, k := range []string{"p50", "p95", "p99", "max"} {
				if _, ok := lat[k]; !ok {
					t.Errorf("latency_ms lacks %s", k)
				}
			}
			if tc.name == "keyed" && !strings.Contains(rep["settings"].(string), "verified from the store: at most 1 running per key, insert order kept") {
				t.Errorf("keyed settings = %q, want the order check", rep["settings"])
			}
			if tc.points > 0 {
				pts, _ := rep["points"].([]any)
				if len(pts) != tc.points {
					t.Fatalf("points = %d, want %d", len(pts), tc.points)
				}
				for _, p := range pts {
					pm := p.(map[string]any)
					if pm["jobs_per_sec"].(float64) <= 0 || pm["efficiency"] == nil {
						t.Errorf("point = %v", pm)
					}
				}
			}
			if !strings.Contains(out, "| ") || !strings.Contains(out, "drover bench") && !strings.Contains(out, tc.name) {
				t.Errorf("no markdown in output:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(dir, "plot.svg")); err != nil {
				t.Errorf("no plot: %v", err)
			}
		})
	}
}

func TestBadFlags(t *testing.T) {
	runCmd, _ := setup(t)
	cases := [][]string{
		{"burndown", "--jobs", "0"},
		{"scale", "--processes", "1,x"},
		{"steady", "--window", "1s"},
		{"latency", "--rate", "-1"},
		{"burndown", "--processes", "1,2"},
		{"keyed", "--keys", "0"},
		{"burndown", "--global-limit", "-1"},
		{"keyed", "--key-limit", "0"},
	}
	for _, args := range cases {
		if _, _, err := runCmd(args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestChaosLosesNothingOnSQLite(t *testing.T) {
	for _, fault := range []string{"kill-worker", "sigterm", "add-worker"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			runCmd, _ := setup(t)
			rep, out, err := runCmd("chaos", "--fault", fault, "--duration", "6s", "--rate", "300", "--work", "20ms", "--lease", "2s")
			if err != nil {
				t.Fatalf("chaos %s failed: %v\n%s", fault, err, out)
			}
			for _, key := range []string{"lost", "duplicates", "recovery_seconds", "jobs_per_sec_before",
				"jobs_per_sec_during", "jobs_per_sec_after", "unexplained_duplicates", "fault"} {
				if _, ok := rep[key]; !ok {
					t.Errorf("report lacks %q", key)
				}
			}
			if rep["lost"].(float64) != 0 || rep["unexplained_duplicates"].(float64) != 0 {
				t.Fatalf("lost = %v, unexplained duplicates = %v", rep["lost"], rep["unexplained_duplicates"])
			}
			if rep["jobs"].(float64) < 1000 {
				t.Fatalf("only %v jobs ran", rep["jobs"])
			}
		})
	}
	runCmd, _ := setup(t)
	if _, _, err := runCmd("chaos", "--fault", "nope", "--duration", "3s"); err == nil || !strings.Contains(err.Error(), `--fault "nope"`) {
		t.Fatalf("unknown fault: err = %v", err)
	}
	for _, fault := range []string{"backend-kill", "pool-exhaust", "idle-tx"} {
		if _, _, err := runCmd("chaos", "--fault", fault, "--duration", "3s"); err == nil || !strings.Contains(err.Error(), "needs PostgreSQL") {
			t.Fatalf("%s on SQLite: err = %v", fault, err)
		}
	}
}
