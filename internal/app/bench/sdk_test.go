package bench

import (
	"context"
	"fmt"
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
			"/tmp/venv/bin/pip install ./sdk/python && %s=/tmp/venv/bin/python go test ./internal/app/bench", err, pythonEnv)
	}
	return python
}

// nodeWithSDK returns node and a project it imports the TypeScript SDK
// from ($DROVER_BENCH_NODE, $DROVER_BENCH_NODE_PROJECT), or skips the test
// saying what to install.
func nodeWithSDK(t *testing.T) (string, string) {
	t.Helper()
	node, project := nodeFrom("", "")
	if _, err := checkNode(context.Background(), node, project); err != nil {
		t.Skipf("no node with the TypeScript SDK (%v); to run this test: mkdir /tmp/ts && cd /tmp/ts && "+
			"npm init -y && npm install $REPO/sdk/typescript && cd - && %s=/tmp/ts go test ./internal/app/bench", err, nodeProjEnv)
	}
	return node, project
}

// TestViaPython burns down a small backlog with Python SDK worker
// processes and checks from the store that every job ran once; a burndown
// also works the same backlog with a Go client, and reports both.
func TestViaPython(t *testing.T) {
	python := pythonWithSDK(t)
	cases := []struct {
		name string
		args []string
	}{
		{"noop", []string{"burndown", "--jobs", "500", "--concurrency", "20", "--floor=false"}},
		{"two processes", []string{"burndown", "--jobs", "600", "--concurrency", "20", "--floor=false", "--processes", "2"}},
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
			checkViaReport(t, rep, tc.args, "python", "Python SDK worker process")
		})
	}
}

// TestViaTypeScript is TestViaPython with the TypeScript SDK's Worker.
func TestViaTypeScript(t *testing.T) {
	node, project := nodeWithSDK(t)
	cases := []struct {
		name string
		args []string
	}{
		{"noop", []string{"burndown", "--jobs", "500", "--concurrency", "20", "--floor=false"}},
		{"two processes", []string{"burndown", "--jobs", "600", "--concurrency", "20", "--floor=false", "--processes", "2"}},
		{"steady", []string{"steady", "--duration", "2s", "--rate", "200", "--batch", "10", "--concurrency", "20"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runCmd, _ := setup(t)
			rep, out, err := runCmd(append(tc.args, "--via", "typescript", "--node", node, "--node-project", project)...)
			if err != nil {
				t.Fatalf("%v failed: %v\n%s", tc.args, err, out)
			}
			checkViaReport(t, rep, tc.args, "typescript", "TypeScript SDK worker process")
		})
	}
}

// checkViaReport checks a --via run's report: nothing lost or run twice,
// every job of a burndown counted, the workers named, and for a burndown
// the Go client's run on the same store beside the SDK's figures.
func checkViaReport(t *testing.T, rep map[string]any, args []string, via, named string) {
	t.Helper()
	if rep["lost"].(float64) != 0 || rep["duplicates"].(float64) != 0 {
		t.Errorf("lost = %v, duplicates = %v", rep["lost"], rep["duplicates"])
	}
	if rep["jobs"].(float64) <= 0 {
		t.Errorf("jobs = %v", rep["jobs"])
	}
	if !strings.Contains(rep["settings"].(string), named) {
		t.Errorf("settings = %q, want %q", rep["settings"], named)
	}
	if args[0] != "burndown" {
		return
	}
	procs := 1.0
	if strings.Contains(strings.Join(args, " "), "--processes 2") {
		procs = 2
	}
	v, ok := rep["via"].(map[string]any)
	if !ok {
		t.Fatalf("no via figures in the report: %v", rep)
	}
	if v["workers"] != via || v["processes"].(float64) != procs || v["jobs_per_sec_per_process"].(float64) <= 0 || v["go_ratio"].(float64) <= 0 {
		t.Errorf("via = %v, want %s workers, %v process(es), positive rates", v, via, procs)
	}
	// Present, not positive: /proc counts CPU in 10 ms ticks, which a
	// few hundred noop jobs may not reach.
	if cpu, ok := v["worker_cpu_us_per_job"].(float64); !ok || cpu < 0 {
		t.Errorf("worker_cpu_us_per_job = %v, want the worker processes' CPU", v["worker_cpu_us_per_job"])
	}
	if g, ok := rep["go_in_process"].(map[string]any); !ok || g["jobs_per_sec"].(float64) <= 0 {
		t.Errorf("go_in_process = %v, want the Go client's rate", rep["go_in_process"])
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

// TestViaTypeScriptWithoutTheSDK checks that a missing node, or a project
// without the SDK, fails the run before it starts, naming what to install.
func TestViaTypeScriptWithoutTheSDK(t *testing.T) {
	empty := t.TempDir()
	cases := []struct {
		name, node, want string
	}{
		{"no node", filepath.Join(empty, "no-such-node"), "no-such-node"},
		{"no SDK", "node", "npm install"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.node == "node" {
				if _, err := checkNode(context.Background(), "node", empty); err != nil && strings.Contains(err.Error(), "executable file not found") {
					t.Skip("node is not installed")
				}
			}
			runCmd, dir := setup(t)
			_, out, err := runCmd("burndown", "--jobs", "10", "--via", "typescript", "--node", tc.node, "--node-project", empty)
			if err == nil {
				t.Fatalf("no error:\n%s", out)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || !strings.Contains(msg, empty) || !strings.Contains(msg, "sdk/typescript") {
				t.Errorf("error = %q, want %q, the project and what to install", msg, tc.want)
			}
			if _, serr := os.Stat(filepath.Join(dir, "report.json")); serr == nil {
				t.Errorf("a report was written")
			}
		})
	}
}

// TestFanoutViaSDKs runs bench fanout with the Python and the TypeScript
// SDK's topic consumers as the consumer processes: their ledgers account
// for every (message, subscription) pair once, and the point reports
// deliveries per consumer process and the consumers' own CPU. Each SDK's
// consumers serve two topics of three subscriptions while they are
// published, and a backlog: several subscriptions in one process are what
// once let TypeScript's leases run out on the loaded test machine.
func TestFanoutViaSDKs(t *testing.T) {
	for _, via := range []string{viaPython, viaTypeScript} {
		for _, backlog := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/backlog=%v", via, backlog), func(t *testing.T) {
				args := []string{"--messages", "2000", "--topics", "2", "--subscriptions", "3", "--publishers", "2",
					"--processes", "2", "--lease", "10s", "--via", via, fmt.Sprintf("--backlog=%v", backlog)}
				if via == viaPython {
					args = append(args, "--python", pythonWithSDK(t))
				} else {
					node, project := nodeWithSDK(t)
					args = append(args, "--node", node, "--node-project", project)
				}
				dir := t.TempDir()
				rep, out := runFanoutCmd(t, "sqlite://"+filepath.Join(dir, "bench.db"), "drover", args...)
				pt := rep.Points[0]
				const want = 2000 * 3 // each message of a topic to each of its three subscriptions
				if pt.Lost != 0 || pt.Duplicates != 0 || pt.Deliveries != want {
					t.Fatalf("lost %d, duplicates %d, %d deliveries, want %d once each\n%s", pt.Lost, pt.Duplicates, pt.Deliveries, want, out)
				}
				if pt.Via != via || pt.DeliveriesPerSecPerProcess <= 0 || pt.ConsumerCPUUsPerDelivery == nil {
					t.Fatalf("via %q, %v deliveries/s per process, consumer CPU %v: want the SDK's figures\n%s", pt.Via,
						pt.DeliveriesPerSecPerProcess, pt.ConsumerCPUUsPerDelivery, out)
				}
			})
		}
	}
}
