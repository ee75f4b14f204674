package proctree

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/droverhq/drover/internal/testkit/waitfor"
)

func TestParseParent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stat string
		want int
		ok   bool
	}{
		{"12 (postgres) S 7 12 12 0 -1", 7, true},
		{"12 (pg_autoctl: node active) S 9 1 1", 9, true},
		{"12 (a) b) (c) R 31 1", 31, true}, // a command name with parentheses
		{"12 postgres S 7", 0, false},
		{"12 (x) S", 0, false},
	} {
		got, err := parseParent(tc.stat)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseParent(%q) = %d, %v; want %d, ok %v", tc.stat, got, err, tc.want, tc.ok)
		}
	}
}

// startTree starts a shell with two sleeping children and returns the
// shell's command and the children's PIDs, once both exist.
func startTree(t *testing.T) (*exec.Cmd, []int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", "sleep 300 & sleep 300 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = Kill(cmd.Process.Pid); _ = cmd.Wait() })
	var kids []int
	waitfor.Cond(t, "the shell's two children", func() bool {
		var err error
		if kids, err = Children(cmd.Process.Pid); err != nil {
			t.Fatal(err)
		}
		return len(kids) == 2
	})
	return cmd, kids
}

func TestTree(t *testing.T) {
	t.Parallel()
	cmd, kids := startTree(t)
	got, err := Tree(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != cmd.Process.Pid || !slices.Contains(got, kids[0]) || !slices.Contains(got, kids[1]) {
		t.Fatalf("Tree(%d) = %v, want the shell then its children %v", cmd.Process.Pid, got, kids)
	}
	if own, err := Children(os.Getpid()); err != nil || !slices.Contains(own, cmd.Process.Pid) {
		t.Fatalf("Children(self) = %v, %v; want it to hold the shell %d", own, err, cmd.Process.Pid)
	}
}

func TestKill(t *testing.T) {
	t.Parallel()
	cmd, kids := startTree(t)
	killed, err := Kill(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(killed) != 3 {
		t.Fatalf("killed %v, want the shell and its 2 children", killed)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the shell ended with %v, want SIGKILL", err)
	}
	// The children, orphaned, are reaped by whoever adopts them; until
	// then they are zombies, which is dead enough.
	for _, p := range kids {
		waitfor.Cond(t, "child "+strconv.Itoa(p)+" to die", func() bool { return dead(p) })
	}
}

// dead reports whether pid is gone or a zombie.
func dead(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return fields[0] == "Z" || fields[0] == "X"
}
