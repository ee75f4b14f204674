package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/storeurl"
)

// pythonEnv names the Python the bench runs `--via python` workers with
// when --python is not given.
const pythonEnv = "DROVER_BENCH_PYTHON"

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

// pythonFleet works jobs with one process of the Python SDK's worker
// (sdk/python, started through its drover-worker entry point) at the
// bench's concurrency, talking to drover serve's API served from the bench
// process on loopback. Comparing its rate with the in-process Go client's
// gives what a Python worker costs: the HTTP hop plus the SDK's own
// threads and JSON. The SDK reports nothing to the bench, so the fleet
// counts what the server accepted from the finish answers it serves.
type pythonFleet struct {
	store  *storeurl.Store
	cfg    workerConfig
	python string

	api     *apiServer
	dir     string
	cmd     *exec.Cmd
	stderr  bytes.Buffer
	exited  chan struct{}
	waitErr error

	claims, written atomic.Int64
}

// checkPython makes sure python can import the SDK, so that a missing
// package is one clear sentence before any job is inserted rather than a
// worker process dying mid-run.
func checkPython(ctx context.Context, python string) error {
	out, err := exec.CommandContext(ctx, python, "-c", "import drover.cli, drover.worker").CombinedOutput()
	if err == nil {
		return nil
	}
	detail := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(detail, '\n'); i >= 0 {
		detail = detail[i+1:]
	}
	if detail == "" {
		detail = err.Error()
	}
	return fmt.Errorf("--via python: %s cannot run the Python SDK (%s): install it into that Python with "+
		"`pip install ./sdk/python` (from the repository root, ideally in a virtualenv), or name a Python "+
		"that has it with --python or $%s", python, detail, pythonEnv)
}

func (f *pythonFleet) start(ctx context.Context) error {
	api, err := startAPI(f.store, f.cfg.Lease, f.observe)
	if err != nil {
		return err
	}
	f.api = api
	if f.dir, err = os.MkdirTemp("", "drover-bench-python-"); err != nil {
		return errors.Join(err, f.api.stop(ctx))
	}
	if err := os.WriteFile(filepath.Join(f.dir, "drover_bench_worker.py"), []byte(pythonWorkerModule), 0o644); err != nil {
		return errors.Join(err, f.cleanup(ctx))
	}
	// The worker's directory is its working directory: drover-worker puts
	// that on sys.path to import module:attribute.
	f.cmd = exec.Command(f.python, "-m", "drover.cli", "drover_bench_worker:worker",
		"--url", f.api.url, "--token", f.api.secret, "--queue", f.cfg.Queue,
		"--concurrency", strconv.Itoa(f.cfg.Concurrency),
		"--lease", strconv.FormatFloat(f.cfg.Lease.Seconds(), 'f', -1, 64),
		"--poll-wait", "1", "--worker-id", "bench-python", "--log-level", "WARNING")
	f.cmd.Dir = f.dir
	f.cmd.Stdout = &f.stderr
	f.cmd.Stderr = &f.stderr
	if err := f.cmd.Start(); err != nil {
		return errors.Join(fmt.Errorf("--via python: start %s: %w", f.python, err), f.cleanup(ctx))
	}
	f.exited = make(chan struct{})
	go func() { f.waitErr = f.cmd.Wait(); close(f.exited) }()
	return nil
}

// observe wraps the API's handler to count claims that returned jobs and
// the results the store accepted, from the answers to /v1/claim and
// /v1/finish (finish answers are small: the ids accepted and rejected).
func (f *pythonFleet) observe(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/finish" {
			if r.URL.Path == "/v1/claim" {
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

func (f *pythonFleet) counters() workerStats {
	n := f.written.Load()
	return workerStats{
		Stats: drover.Stats{Claims: f.claims.Load(), Ran: n, Completed: n, Written: n},
		Ready: true,
	}
}

func (f *pythonFleet) pids() []int {
	if f.cmd == nil || f.cmd.Process == nil {
		return nil
	}
	return []int{f.cmd.Process.Pid}
}

// stop sends the worker SIGTERM, which finishes its running jobs and
// reports them, and waits for it to exit before the server goes; a worker
// that outlives ctx is killed.
func (f *pythonFleet) stop(ctx context.Context) error {
	var werr error
	if f.cmd != nil {
		select {
		case <-f.exited:
			werr = fmt.Errorf("--via python: the worker exited early: %v\n%s", f.waitErr, bytes.TrimSpace(f.stderr.Bytes()))
		default:
			_ = f.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-f.exited:
				if f.waitErr != nil {
					werr = fmt.Errorf("--via python: the worker: %v\n%s", f.waitErr, bytes.TrimSpace(f.stderr.Bytes()))
				}
			case <-ctx.Done():
				_ = f.cmd.Process.Kill()
				<-f.exited
				werr = fmt.Errorf("--via python: the worker did not stop in time; killed")
			}
		}
	}
	return errors.Join(werr, f.cleanup(ctx))
}

func (f *pythonFleet) cleanup(ctx context.Context) error {
	err := f.api.stop(ctx)
	if f.dir != "" {
		err = errors.Join(err, os.RemoveAll(f.dir))
	}
	return err
}

// pythonFrom is the Python to run: the flag's, else $DROVER_BENCH_PYTHON,
// else python3 from PATH.
func pythonFrom(flag string) string {
	if flag != "" {
		return flag
	}
	if p := os.Getenv(pythonEnv); p != "" {
		return p
	}
	return "python3"
}
