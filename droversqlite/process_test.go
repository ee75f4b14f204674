package droversqlite

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/engine"
)

// helperEnv carries the database file to a helper process.
const helperEnv = "DROVERSQLITE_HELPER_DB"

// TestClaimsAcrossProcesses runs claimers in separate processes on one
// file. Within a process SQLite coordinates connections itself; across
// processes only file locks do, which is where BEGIN IMMEDIATE and
// busy_timeout have to hold: every job must still be claimed exactly once.
func TestClaimsAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	const total, procs = 12000, 3
	path := filepath.Join(t.TempDir(), "procs.db")
	d := open(t, path)
	migrate(t, d)
	in := make([]droverdriver.InsertParams, total)
	for i := range in {
		in[i] = job("q")
	}
	insert(t, d.Executor(), in...)

	outs := make([]*bytes.Buffer, procs)
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		outs[i] = &bytes.Buffer{}
		cmds[i] = exec.Command(os.Args[0], "-test.run=^TestHelperClaimer$", "-test.count=1")
		cmds[i].Env = append(os.Environ(), helperEnv+"="+path)
		cmds[i].Stdout, cmds[i].Stderr = outs[i], outs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	// Let the helpers start claiming together, so that they contend.
	if err := os.WriteFile(path+".go", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]int{}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, outs[i])
		}
		if strings.Count(outs[i].String(), "claimed ") == 0 {
			t.Errorf("helper %d claimed nothing, so the processes did not contend", i)
		}
		sc := bufio.NewScanner(outs[i])
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "claimed "); ok {
				for _, f := range strings.Fields(rest) {
					id, err := strconv.ParseInt(f, 10, 64)
					if err != nil {
						t.Fatal(err)
					}
					seen[id]++
				}
			}
		}
	}
	if len(seen) != total {
		t.Fatalf("claimed %d distinct jobs, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("job %d claimed %d times", id, n)
		}
	}
}

// TestHelperClaimer is the body of a helper process: it claims and
// completes jobs until none are left and prints the IDs it claimed.
func TestHelperClaimer(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("runs only as a helper process")
	}
	ctx := context.Background()
	d, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	owner := "p" + strconv.Itoa(os.Getpid())
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(path + ".go"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no start signal")
		}
	}
	for {
		jobs, err := d.exec.JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 25, Owner: owner, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 0 {
			return
		}
		res := make([]droverdriver.Result, len(jobs))
		var line strings.Builder
		line.WriteString("claimed")
		for i, j := range jobs {
			res[i] = droverdriver.Result{ID: j.ID, Attempt: j.Attempt, LeaseToken: j.LeaseToken, Outcome: droverdriver.OutcomeCompleted}
			fmt.Fprintf(&line, " %d", j.ID)
		}
		if acc, err := engine.Finish(ctx, d.Executor(), res); err != nil || len(acc) != len(res) {
			t.Fatalf("finish: accepted %d of %d: %v", len(acc), len(res), err)
		}
		fmt.Println(line.String())
		// Stand in for the work a real worker does between claims. Without
		// it one process can hold the write lock almost without a break, and
		// SQLite's busy handler, which polls rather than queues, may not
		// get the others a turn before the jobs run out.
		time.Sleep(time.Millisecond)
	}
}
