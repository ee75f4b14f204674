//go:build unix

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// buildBinary builds the drover command into a temporary directory, so a
// test can run it as a separate OS process that it may kill.
func buildBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("the go tool is not on PATH, so the drover binary cannot be built: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "drover")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// workerProcess is one `drover worker` running as a child process.
type workerProcess struct {
	cmd *exec.Cmd
	log string
	// exited is closed when the process has ended; err is then what Wait
	// returned.
	exited chan struct{}
	err    error
}

func startWorker(t *testing.T, bin, name string, args ...string) *workerProcess {
	t.Helper()
	log := filepath.Join(t.TempDir(), name+".log")
	out, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"worker"}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	w := &workerProcess{cmd: cmd, log: log, exited: make(chan struct{})}
	go func() {
		w.err = cmd.Wait()
		out.Close()
		close(w.exited)
	}()
	// Whatever happens to the test, no worker outlives it.
	t.Cleanup(func() {
		select {
		case <-w.exited:
		default:
			_ = w.cmd.Process.Kill()
			<-w.exited
		}
	})
	return w
}

// output returns what the worker printed, for failure messages.
func (w *workerProcess) output() string {
	b, _ := os.ReadFile(w.log)
	return string(b)
}

// TestKilledWorkerLosesNothing kills a worker process in the middle of a
// run, with no chance to stop gracefully, and checks that a second worker
// completes every job: the jobs the dead process had claimed come back
// once their leases expire, and none is lost or completed twice.
func TestKilledWorkerLosesNothing(t *testing.T) {
	const (
		total       = 2000
		workNS      = int64(50 * time.Millisecond)
		queue       = "killtest"
		concurrency = "20"
		lease       = "2s"
		// killAfter completed jobs, the first worker is killed: well into
		// the run, far from its end (20 at a time for 50 ms each is about
		// 400 jobs a second, so 2,000 jobs take about five seconds).
		killAfter = 200
	)
	bin := buildBinary(t)
	f := setup(t).migrated(t)
	ctx := context.Background()
	_, client := f.open(t)

	params := make([]drover.InsertManyParams, total)
	for i := range params {
		args := fmt.Sprintf(`{"seq":%d,"work_ns":%d}`, i, workNS)
		params[i] = drover.InsertManyParams{
			Args: drover.RawArgs{KindName: "drover.bench", JSON: json.RawMessage(args)},
			Opts: &drover.InsertOpts{Queue: queue},
		}
	}
	if _, err := client.InsertMany(ctx, params); err != nil {
		t.Fatal(err)
	}

	workerArgs := []string{"--database-url", f.url, "--schema", f.schema,
		"--queue", queue, "--concurrency", concurrency, "--lease", lease}
	first := startWorker(t, bin, "first", workerArgs...)
	counts := waitCounts(t, client, queue, first, time.Minute, func(c map[drovertype.JobState]int64) bool {
		return c[drovertype.JobStateCompleted] >= killAfter
	})
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.exited
	err := first.err
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("first worker ended with %v before it was killed:\n%s", err, first.output())
	}
	counts = jobCounts(t, client, queue)
	t.Logf("killed the first worker with %v", counts)
	if counts[drovertype.JobStateCompleted] >= total {
		t.Fatalf("the first worker completed all %d jobs before it was killed; make the jobs slower", total)
	}
	if counts[drovertype.JobStateRunning] == 0 {
		t.Fatalf("no job was running when the first worker was killed, so nothing tests lease expiry: %v", counts)
	}

	// The dead worker still holds its leadership and its leases; the second
	// worker must wait both out (LeaderTTL, --lease) before it rescues.
	second := startWorker(t, bin, "second", workerArgs...)
	counts = waitCounts(t, client, queue, second, 3*time.Minute, func(c map[drovertype.JobState]int64) bool {
		return c[drovertype.JobStateCompleted] == total
	})
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-second.exited:
		if second.err != nil {
			t.Errorf("second worker did not stop cleanly on SIGTERM: %v\n%s", second.err, second.output())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("second worker did not stop within 30s of SIGTERM:\n%s", second.output())
	}

	counts = jobCounts(t, client, queue)
	for state, n := range counts {
		if state != drovertype.JobStateCompleted && n != 0 {
			t.Errorf("%d jobs are %s, want none", n, state)
		}
	}
	if counts[drovertype.JobStateCompleted] != total {
		t.Errorf("%d jobs completed, want exactly %d", counts[drovertype.JobStateCompleted], total)
	}

	jobs, err := client.JobList(ctx, drover.JobListParams{Queue: queue, Limit: total + 1})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(map[int64]bool, total)
	rescued := 0
	for _, j := range jobs {
		var args struct {
			Seq int64 `json:"seq"`
		}
		if err := json.Unmarshal(j.EncodedArgs, &args); err != nil {
			t.Fatalf("job %d args %s: %v", j.ID, j.EncodedArgs, err)
		}
		if seen[args.Seq] {
			t.Errorf("seq %d is stored twice", args.Seq)
		}
		seen[args.Seq] = true
		if j.State != drovertype.JobStateCompleted {
			t.Errorf("job %d is %s", j.ID, j.State)
		}
		if j.Attempt >= 2 && slices.ContainsFunc(j.Errors, func(e drovertype.AttemptError) bool {
			return strings.Contains(e.Error, "lease expired")
		}) {
			rescued++
		}
	}
	if len(jobs) != total || len(seen) != total {
		t.Errorf("store holds %d jobs with %d distinct seqs, want %d", len(jobs), len(seen), total)
	}
	if rescued == 0 {
		t.Errorf("no job shows a second attempt after a lease expired error: the killed worker's jobs did not come back through a rescue")
	}
	t.Logf("%d jobs were rescued from the killed worker and completed by the second", rescued)
}

// jobCounts counts the queue's jobs by state.
func jobCounts(t *testing.T, client testClient, queue string) map[drovertype.JobState]int64 {
	t.Helper()
	counts, err := client.JobCountByState(context.Background(), queue)
	if err != nil {
		t.Fatal(err)
	}
	return counts
}

// waitCounts polls the queue's counts until done accepts them, failing the
// test if the worker exits or the time runs out first.
func waitCounts(t *testing.T, client testClient, queue string, w *workerProcess, timeout time.Duration,
	done func(map[drovertype.JobState]int64) bool) map[drovertype.JobState]int64 {
	t.Helper()
	var counts map[drovertype.JobState]int64
	if !waitfor.Within(timeout, func() bool {
		counts = jobCounts(t, client, queue)
		if done(counts) {
			return true
		}
		select {
		case <-w.exited:
			t.Fatalf("worker exited early (%v) with jobs at %v:\n%s", w.err, counts, w.output())
		default:
		}
		return false
	}) {
		t.Fatalf("jobs still at %v after %s:\n%s", counts, timeout, w.output())
	}
	return counts
}
