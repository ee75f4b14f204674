// Package proctree finds and acts on a Linux process and its descendants,
// by the parent PIDs /proc records. Chaos tests use it to take down a
// whole database node at once, as the death of its machine would (a
// keeper, the postmaster it started and every backend), and the cgroup
// package to move a running server with its children into a group.
package proctree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// procDir is where the kernel lists processes.
const procDir = "/proc"

// Children returns the PIDs whose parent is pid, as /proc lists them now.
// A process that exits while the list is read is left out.
func Children(pid int) ([]int, error) {
	parents, err := parentsByPID()
	if err != nil {
		return nil, err
	}
	var out []int
	for child, parent := range parents {
		if parent == pid {
			out = append(out, child)
		}
	}
	return out, nil
}

// Tree returns pid and all its descendants, parents before their children.
// It is a snapshot: processes forked after it was read are not in it.
func Tree(pid int) ([]int, error) {
	parents, err := parentsByPID()
	if err != nil {
		return nil, err
	}
	return tree(pid, parents), nil
}

func tree(pid int, parents map[int]int) []int {
	kids := map[int][]int{}
	for child, parent := range parents {
		kids[parent] = append(kids[parent], child)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, kids[out[i]]...)
	}
	return out
}

// Stop sends SIGSTOP to pid and every descendant, reading the tree again
// until no new process appears, so that none forks or acts while stopped
// ones cannot. It returns the PIDs stopped, parents first; SIGCONT to each
// resumes them.
func Stop(pid int) ([]int, error) {
	stopped := map[int]bool{}
	var order []int
	for {
		pids, err := Tree(pid)
		if err != nil {
			return order, err
		}
		fresh := 0
		for _, p := range pids {
			if stopped[p] {
				continue
			}
			fresh++
			if err := syscall.Kill(p, syscall.SIGSTOP); err != nil && !errors.Is(err, syscall.ESRCH) {
				return order, fmt.Errorf("proctree: stopping %d: %w", p, err)
			}
			stopped[p] = true
			order = append(order, p)
		}
		if fresh == 0 {
			return order, nil
		}
	}
}

// Kill sends SIGKILL to pid and every descendant, all at once as far as
// the kernel allows: it first stops the whole tree (Stop), so that no
// process forks a replacement for a killed one or notices its parent's
// death and acts on it, and then kills every stopped process. It returns
// the PIDs killed.
func Kill(pid int) ([]int, error) {
	pids, err := Stop(pid)
	if err != nil {
		return nil, err
	}
	for _, p := range pids {
		if err := syscall.Kill(p, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			return nil, fmt.Errorf("proctree: killing %d: %w", p, err)
		}
	}
	return pids, nil
}

// parentsByPID reads the parent of every process from /proc/PID/stat.
func parentsByPID() (map[int]int, error) {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil, fmt.Errorf("proctree: %w", err)
	}
	parents := make(map[int]int, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue // not a process
		}
		data, err := os.ReadFile(procDir + "/" + e.Name() + "/stat")
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // exited meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("proctree: %w", err)
		}
		ppid, err := parseParent(string(data))
		if err != nil {
			return nil, fmt.Errorf("proctree: /proc/%d/stat: %w", pid, err)
		}
		parents[pid] = ppid
	}
	return parents, nil
}

// parseParent reads the parent PID from a /proc/PID/stat line: "pid (comm)
// state ppid ...". The command name may hold spaces and parentheses, so
// the fields are counted from the last ')'.
func parseParent(stat string) (int, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, errors.New("no command name")
	}
	fields := strings.Fields(stat[end+1:])
	if len(fields) < 2 {
		return 0, errors.New("too few fields")
	}
	return strconv.Atoi(fields[1])
}
