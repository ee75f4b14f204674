package bench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// What runs the SDK workers of --via python and --via typescript when no
// flag names it.
const (
	pythonEnv   = "DROVER_BENCH_PYTHON"
	nodeEnv     = "DROVER_BENCH_NODE"
	nodeProjEnv = "DROVER_BENCH_NODE_PROJECT"
)

// pythonWorkerModule is the module the Python worker process loads with
// drover-worker (python -m drover.cli): one handler for the bench's job
// kind that does what a Go bench job does, sleeping work_ns (I/O-bound
// work) after spinning cpu_ns. It is a plain sync handler, the kind most
// users write, so each job runs on a thread of the SDK's.
const pythonWorkerModule = `import time
from typing import Any

import drover

worker = drover.Worker()


@worker.task("drover.bench")
def bench(args: dict[str, Any]) -> None:
    cpu = args.get("cpu_ns", 0) / 1e9
    if cpu > 0:
        end = time.perf_counter() + cpu
        while time.perf_counter() < end:
            pass
    work = args.get("work_ns", 0) / 1e9
    if work > 0:
        time.sleep(work)
`

// typescriptWorkerScript is the program a TypeScript worker process runs
// (node worker.mjs URL TOKEN QUEUE CONCURRENCY LEASE_MS WORKER_ID): the
// SDK's Worker with one async handler for the bench's job kind, doing what
// the Python one does, until SIGTERM. %s is the URL of the SDK's module,
// resolved from the project it was installed into.
const typescriptWorkerScript = `import { Worker } from %q;

const [url, token, queue, concurrency, leaseMs, workerId] = process.argv.slice(2);
const quiet = { debug() {}, info() {}, warn: (m) => console.error(m), error: (m) => console.error(m) };
const worker = new Worker({ url, token, queues: [queue], concurrency: Number(concurrency), leaseMs: Number(leaseMs),
  pollWaitMs: 1000, workerId, logger: quiet });
worker.register("drover.bench", async (job) => {
  const cpuMs = (job.args.cpu_ns ?? 0) / 1e6;
  if (cpuMs > 0) {
    const end = performance.now() + cpuMs;
    while (performance.now() < end) {}
  }
  const workMs = (job.args.work_ns ?? 0) / 1e6;
  if (workMs > 0) await new Promise((resolve) => setTimeout(resolve, workMs));
});
await worker.run();
`

// sdk says how to start the worker processes of one SDK.
type sdk struct {
	// via is the flag's value, name what the report calls the SDK.
	via, name string
	// exe runs the workers: a Python with the SDK installed, or node.
	exe string
	// module is, for TypeScript, the URL of the SDK's entry point that the
	// worker script imports.
	module string
}

// sdkFleet works jobs with n processes of an SDK's own worker (sdk/python
// through its drover-worker entry point, sdk/typescript's Worker), each at
// the bench's concurrency, talking to drover serve's API served from the
// bench process on loopback. Comparing the rate with the in-process Go
// client's gives what a worker in another language costs: the HTTP hop
// plus the SDK's own loop and JSON. The SDKs report nothing to the bench,
// so the fleet counts what the server accepted from the finish answers it
// serves.
type sdkFleet struct {
	store *storeurl.Store
	cfg   workerConfig
	sdk   sdk
	n     int // at least 1

	api  *apiServer
	dir  string
	proc []*sdkProcess

	claims, written atomic.Int64

	// The workers that made a claim: start waits for all of them, so that
	// the run measures workers at work rather than loading their runtime,
	// and none is stopped before it handles SIGTERM.
	readyMu sync.Mutex
	ready   map[string]bool
	allIn   chan struct{}
	// startCPU is the worker processes' CPU once all were ready: what
	// workCPU leaves out.
	startCPU time.Duration
}

// sdkStartTimeout bounds how long the workers may take to start.
const sdkStartTimeout = time.Minute

// workCPU is the CPU the worker processes used since all were ready.
func (f *sdkFleet) workCPU() time.Duration {
	return processesCPU("/proc", f.pids()) - f.startCPU
}

// claimedBy notes the worker a claim came from (its body's "worker").
func (f *sdkFleet) claimedBy(r *http.Request) {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Worker string `json:"worker"`
	}
	if err != nil || json.Unmarshal(body, &req) != nil {
		return // the API answers what is wrong with it
	}
	f.readyMu.Lock()
	defer f.readyMu.Unlock()
	if !f.ready[req.Worker] {
		f.ready[req.Worker] = true
		if len(f.ready) == f.n {
			close(f.allIn)
		}
	}
}

// sdkProcess is one worker process and how it ended.
type sdkProcess struct {
	cmd *exec.Cmd
	// out is its output, which its copying goroutines write under outMu
	// while an error message may read it.
	outMu   sync.Mutex
	out     bytes.Buffer
	exited  chan struct{}
	waitErr error
}

// output is what the process wrote so far.
func (p *sdkProcess) output() string {
	p.outMu.Lock()
	defer p.outMu.Unlock()
	return string(bytes.TrimSpace(p.out.Bytes()))
}

// checkPython makes sure python can import the SDK, so that a missing
// package is one clear sentence before any job is inserted rather than a
// worker process dying mid-run.
func checkPython(ctx context.Context, python string) error {
	out, err := exec.CommandContext(ctx, python, "-c", "import drover.cli, drover.worker").CombinedOutput()
	if err == nil {
		return nil
	}
	return fmt.Errorf("--via python: %s cannot run the Python SDK (%s): install it into that Python with "+
		"`pip install ./sdk/python` (from the repository root, ideally in a virtualenv), or name a Python "+
		"that has it with --python or $%s", python, lastLine(out, err), pythonEnv)
}

// checkNode makes sure node can import the TypeScript SDK from project (a
// directory where `npm install ./sdk/typescript` was run) and returns the
// URL of the SDK's module, which the worker script imports: the script
// itself is written outside the project.
func checkNode(ctx context.Context, node, project string) (string, error) {
	const resolve = `const u = import.meta.resolve("@drover/client"); await import(u); console.log(u);`
	cmd := exec.CommandContext(ctx, node, "--input-type=module", "-e", resolve)
	cmd.Dir = project
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err == nil {
		return strings.TrimSpace(string(out)), nil
	}
	return "", fmt.Errorf("--via typescript: %s cannot import the TypeScript SDK from %s (%s): run "+
		"`npm install /path/to/drover/sdk/typescript` in that directory, or name one where it was run with "+
		"--node-project or $%s (and node with --node or $%s)", node, project, lastLine(stderr.Bytes(), err), nodeProjEnv, nodeEnv)
}

// lastLine is the last line of a failed command's output that says what
// failed (a traceback's last line, a stack's message), else the error.
func lastLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		if line != "" && !strings.HasPrefix(line, "at ") && !strings.HasPrefix(line, "Node.js v") {
			return line
		}
	}
	return err.Error()
}

func (f *sdkFleet) start(ctx context.Context) error {
	api, err := startAPI(f.store, f.cfg.Lease, f.observe)
	if err != nil {
		return err
	}
	f.api = api
	if f.dir, err = os.MkdirTemp("", "drover-bench-"+f.sdk.via+"-"); err != nil {
		return errors.Join(err, f.api.stop(ctx))
	}
	file, source := "drover_bench_worker.py", pythonWorkerModule
	if f.sdk.via == viaTypeScript {
		file, source = "drover_bench_worker.mjs", fmt.Sprintf(typescriptWorkerScript, f.sdk.module)
	}
	if err := os.WriteFile(filepath.Join(f.dir, file), []byte(source), 0o644); err != nil {
		return errors.Join(err, f.cleanup(ctx))
	}
	f.ready, f.allIn = map[string]bool{}, make(chan struct{})
	for i := range f.n {
		id := fmt.Sprintf("bench-%s-%d", f.sdk.via, i)
		var cmd *exec.Cmd
		if f.sdk.via == viaTypeScript {
			cmd = exec.Command(f.sdk.exe, file, f.api.url, f.api.secret, f.cfg.Queue, strconv.Itoa(f.cfg.Concurrency),
				strconv.FormatInt(f.cfg.Lease.Milliseconds(), 10), id)
		} else {
			// The worker's directory is its working directory:
			// drover-worker puts that on sys.path to import module:attribute.
			cmd = exec.Command(f.sdk.exe, "-m", "drover.cli", "drover_bench_worker:worker",
				"--url", f.api.url, "--token", f.api.secret, "--queue", f.cfg.Queue,
				"--concurrency", strconv.Itoa(f.cfg.Concurrency),
				"--lease", strconv.FormatFloat(f.cfg.Lease.Seconds(), 'f', -1, 64),
				"--poll-wait", "1", "--worker-id", id, "--log-level", "WARNING")
		}
		p := &sdkProcess{cmd: cmd, exited: make(chan struct{})}
		cmd.Dir = f.dir
		w := &lockedWriter{mu: &p.outMu, w: &p.out}
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Start(); err != nil {
			return errors.Join(fmt.Errorf("--via %s: start %s: %w", f.sdk.via, f.sdk.exe, err), f.stop(ctx))
		}
		go func() { p.waitErr = cmd.Wait(); close(p.exited) }()
		f.proc = append(f.proc, p)
	}
	if err := f.awaitReady(ctx); err != nil {
		return errors.Join(err, f.stop(ctx))
	}
	f.startCPU = processesCPU("/proc", f.pids())
	return nil
}

// awaitReady waits until every worker made a claim; a worker that exits
// first fails the run with its output.
func (f *sdkFleet) awaitReady(ctx context.Context) error {
	timeout := time.NewTimer(sdkStartTimeout)
	defer timeout.Stop()
	for {
		select {
		case <-f.allIn:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-timeout.C:
			return fmt.Errorf("--via %s: the workers did not all claim within %s", f.sdk.via, sdkStartTimeout)
		case <-time.After(50 * time.Millisecond):
			for i, p := range f.proc {
				select {
				case <-p.exited:
					return fmt.Errorf("--via %s: worker %d exited before its first claim: %v\n%s", f.sdk.via, i, p.waitErr, p.output())
				default:
				}
			}
		}
	}
}

// observe wraps the API's handler to count claims that returned jobs and
// the results the store accepted, from the answers to /v1/claim and
// /v1/finish (finish answers are small: the ids accepted and rejected).
func (f *sdkFleet) observe(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/finish" {
			if r.URL.Path == "/v1/claim" {
				f.claimedBy(r)
				f.claims.Add(1)
			}
			h.ServeHTTP(w, r)
			return
		}
		rec := &recorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		var done struct {
			Accepted []int64 `json:"accepted"`
		}
		if json.Unmarshal(rec.body.Bytes(), &done) == nil {
			f.written.Add(int64(len(done.Accepted)))
		}
	})
}

// recorder keeps a copy of what a handler writes.
type recorder struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (f *sdkFleet) counters() workerStats {
	n := f.written.Load()
	return workerStats{
		Stats: drover.Stats{Claims: f.claims.Load(), Ran: n, Completed: n, Written: n},
		Ready: true,
	}
}

func (f *sdkFleet) pids() []int {
	var out []int
	for _, p := range f.proc {
		if p.cmd.Process != nil {
			out = append(out, p.cmd.Process.Pid)
		}
	}
	return out
}

// stop sends every worker SIGTERM, which finishes its running jobs and
// reports them, and waits for them to exit before the server goes; a
// worker that outlives ctx is killed.
func (f *sdkFleet) stop(ctx context.Context) error {
	var errs []error
	early := make([]bool, len(f.proc))
	for i, p := range f.proc {
		select {
		case <-p.exited:
			early[i] = true
		default:
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for i, p := range f.proc {
		select {
		case <-p.exited:
			if early[i] {
				errs = append(errs, fmt.Errorf("--via %s: worker %d exited early: %v\n%s", f.sdk.via, i, p.waitErr, p.output()))
			} else if p.waitErr != nil {
				errs = append(errs, fmt.Errorf("--via %s: worker %d: %v\n%s", f.sdk.via, i, p.waitErr, p.output()))
			}
		case <-ctx.Done():
			_ = p.cmd.Process.Kill()
			<-p.exited
			errs = append(errs, fmt.Errorf("--via %s: worker %d did not stop in time; killed", f.sdk.via, i))
		}
	}
	return errors.Join(append(errs, f.cleanup(ctx))...)
}

func (f *sdkFleet) cleanup(ctx context.Context) error {
	var err error
	if f.api != nil {
		err = f.api.stop(ctx)
	}
	if f.dir != "" {
		err = errors.Join(err, os.RemoveAll(f.dir))
	}
	return err
}

// pythonFrom is the Python to run: the flag's, else $DROVER_BENCH_PYTHON,
// else python3 from PATH.
func pythonFrom(flag string) string {
	return cmp.Or(flag, os.Getenv(pythonEnv), "python3")
}

// nodeFrom is the node to run and the project the SDK is installed in:
// the flags', else $DROVER_BENCH_NODE and $DROVER_BENCH_NODE_PROJECT,
// else node from PATH and the current directory.
func nodeFrom(node, project string) (string, string) {
	return cmp.Or(node, os.Getenv(nodeEnv), "node"), cmp.Or(project, os.Getenv(nodeProjEnv), ".")
}
