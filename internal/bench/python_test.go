package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pythonWithSDK returns a Python that can import the SDK ($DROVER_BENCH_PYTHON,
// else python3), or skips the test saying what to install.
func pythonWithSDK(t *testing.T) string {
	t.Helper()
	python := pythonFrom("")
	if err := checkPython(context.Background(), python); err != nil {
		t.Skipf("no Python with the SDK (%v); to run this test: python3 -m venv /tmp/venv && "+
			"/tmp/venv/bin/pip install ./sdk/python && %s=/tmp/venv/bin/python go test ./internal/bench", err, pythonEnv)
	}
	return python
}

// TestViaPython burns down a small backlog with a Python SDK worker
// process and checks from the store that every job ran once.
func TestViaPython(t *testing.T) {
	python := pythonWithSDK(t)
	cases := []struct {
		name string
		args []string
	}{
		{"noop", []string{"burndown", "--jobs", "500", "--concurrency", "20", "--floor=false"}},
		{"sleep", []string{"burndown", "--jobs", "300", "--concurrency", "50", "--work", "5ms", "--floor=false"}},
		{"steady", []string{"steady", "--duration", "2s", "--rate", "200", "--batch", "10", "--concurrency", "20"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runCmd, _ := setup(t)
			rep, out, err := runCmd(append(tc.args, "--via", "python", "--python", python)...)
			if err != nil {
				t.Fatalf("%v failed: %v\n%s", tc.args, err, out)
			}
			if rep["lost"].(float64) != 0 || rep["duplicates"].(float64) != 0 {
				t.Errorf("lost = %v, duplicates = %v", rep["lost"], rep["duplicates"])
			}
			if rep["jobs"].(float64) <= 0 {
				t.Errorf("jobs = %v", rep["jobs"])
			}
			if !strings.Contains(rep["settings"].(string), "Python SDK worker process") {
				t.Errorf("settings = %q, want the Python worker named", rep["settings"])
			}
		})
	}
}

// TestViaPythonWithoutTheSDK checks that a Python lacking the SDK fails
// the run before it starts, naming what to install.
func TestViaPythonWithoutTheSDK(t *testing.T) {
	runCmd, _ := setup(t)
	missing := filepath.Join(t.TempDir(), "no-such-python")
	_, out, err := runCmd("burndown", "--jobs", "10", "--via", "python", "--python", missing)
	if err == nil {
		t.Fatalf("no error with --python %s:\n%s", missing, out)
	}
	if msg := err.Error(); !strings.Contains(msg, "pip install ./sdk/python") || !strings.Contains(msg, missing) {
		t.Errorf("error = %q, want the Python named and what to install", msg)
	}
	if _, serr := os.Stat(filepath.Join(filepath.Dir(missing), "report.json")); serr == nil {
		t.Errorf("a report was written")
	}
}
