package cgroup

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/testkit/proctree"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

func TestParseHierarchies(t *testing.T) {
	t.Parallel()
	const (
		v1Split = `30 24 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw
31 30 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
32 30 0:28 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
33 30 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
34 30 0:30 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw
`
		v1SplitSelf = "4:memory:/api/1\n2:cpuacct:/\n1:cpu:/\n0::/\n"
		v1Together  = `31 30 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:5 - cgroup cgroup rw,cpu,cpuacct
`
		docker     = "40 30 0:27 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid master:12 - cgroup cgroup rw,cpuacct,cpu\n"
		dockerSelf = "3:cpu,cpuacct:/docker/abc\n"
		v2Only     = "25 24 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
	)
	for _, tc := range []struct {
		name, mountinfo, self string
		want                  hierarchies
	}{
		{"v1 cpu and cpuacct apart, v2 without controllers", v1Split, v1SplitSelf, hierarchies{
			v2: "/sys/fs/cgroup/unified", v2Root: "/sys/fs/cgroup/unified",
			cpu: "/sys/fs/cgroup/cpu", acct: "/sys/fs/cgroup/cpuacct"}},
		{"v1 cpu and cpuacct together, the process in a group", v1Together, "3:cpuacct,cpu:/user/7\n", hierarchies{
			cpu: "/sys/fs/cgroup/cpu,cpuacct/user/7", acct: "/sys/fs/cgroup/cpu,cpuacct/user/7"}},
		{"v1 in a container: the mount is the container's group", docker, dockerSelf, hierarchies{
			cpu: "/sys/fs/cgroup/cpu,cpuacct", acct: "/sys/fs/cgroup/cpu,cpuacct"}},
		{"v2 only, the process in a service's group", v2Only, "0::/system.slice/x.service\n", hierarchies{
			v2: "/sys/fs/cgroup/system.slice/x.service", v2Root: "/sys/fs/cgroup"}},
		{"an escaped mount point", `25 24 0:22 / /mnt/cg\040two rw - cgroup2 cgroup2 rw` + "\n", "0::/\n", hierarchies{
			v2: "/mnt/cg two", v2Root: "/mnt/cg two"}},
		{"no cgroups", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n", "0::/\n", hierarchies{}},
	} {
		got, err := parseHierarchies(strings.NewReader(tc.mountinfo), strings.NewReader(tc.self))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func TestNewCPURejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		share float64
		want  string
	}{
		{"a/b", 0.5, "one path element"},
		{"..", 0.5, "one path element"},
		{"", 0.5, "one path element"},
		{"ok", 0, "between 0.01 and"},
		{"ok", 0.001, "between 0.01 and"},
		{"ok", 1e6, "the CPUs of this machine"},
	} {
		g, err := NewCPU(tc.name, tc.share)
		if err == nil {
			_ = g.Remove()
			t.Errorf("NewCPU(%q, %g) succeeded", tc.name, tc.share)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewCPU(%q, %g) = %v, want it to say %q", tc.name, tc.share, err, tc.want)
		}
	}
}

// fakeV2 lays out the control files of a v2 group at dir, as the kernel
// would, with the given available controllers.
func fakeV2(t *testing.T, controllers string) string {
	t.Helper()
	dir := t.TempDir()
	for name, value := range map[string]string{"cgroup.controllers": controllers, "cgroup.subtree_control": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(value), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestV2Files checks what a v2 group is made of on a directory laid out
// like the v2 hierarchy: the controller enabled for children, the quota in
// cpu.max, the usage read from cpu.stat. A real v2 cpu controller is
// exercised by TestCPU where the machine has one.
func TestV2Files(t *testing.T) {
	t.Parallel()
	root := fakeV2(t, "cpuset cpu io memory")
	g, err := hierarchies{v2: root, v2Root: root}.newCPU("drover-t", 0.4)
	if err != nil {
		t.Fatal(err)
	}
	if sub, _ := os.ReadFile(filepath.Join(root, "cgroup.subtree_control")); string(sub) != "+cpu" {
		t.Errorf("cgroup.subtree_control = %q, want +cpu written", sub)
	}
	if max, _ := os.ReadFile(filepath.Join(g.Dir(), "cpu.max")); string(max) != "40000 100000" {
		t.Errorf("cpu.max = %q, want 40000 100000", max)
	}
	stat := "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 30\nnr_throttled 12\nthrottled_usec 90\n"
	if err := os.WriteFile(filepath.Join(g.Dir(), "cpu.stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := g.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if s.Usage.Seconds() != 2.5 || s.Periods != 30 || s.Throttled != 12 {
		t.Errorf("Stat() = %+v, want 2.5s used, 30 periods, 12 throttled", s)
	}

	_, err = hierarchies{v2: fakeV2(t, "memory io"), v2Root: "/nonexistent"}.newCPU("drover-t", 0.4)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "the cpu controller is not available") {
		t.Errorf("without the cpu controller: %v, want ErrUnavailable saying the controller is missing", err)
	}
	_, err = hierarchies{}.newCPU("drover-t", 0.4)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no cgroup2 mount") ||
		!strings.Contains(err.Error(), "no cgroup mount with the cpu controller") {
		t.Errorf("without cgroups: %v, want ErrUnavailable with a reason per version", err)
	}
}

// TestCPU holds a busy process tree to a small share on this machine's
// own cgroups: every process of the tree moves in, the kernel throttles
// the group, its usage is read, and Remove leaves nothing behind.
func TestCPU(t *testing.T) {
	t.Parallel()
	g, err := NewCPU("test-"+filepath.Base(t.TempDir()), 0.1)
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("cgroups are not writable here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Remove() })

	// A shell whose child spins: the child exists before the move, so
	// only AddTree brings it along.
	cmd := exec.Command("sh", "-c", `sh -c 'while :; do :; done' & wait`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = proctree.Kill(cmd.Process.Pid); _ = cmd.Wait() })
	var tree []int
	waitfor.Cond(t, "the spinning child", func() bool {
		tree, err = proctree.Tree(cmd.Process.Pid)
		return err == nil && len(tree) == 2
	})
	if err := g.AddTree(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	pids, err := g.PIDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tree {
		if !slices.Contains(pids, p) {
			t.Fatalf("the group holds %v, want every process of the tree %v", pids, tree)
		}
	}

	var s Stat
	waitfor.Cond(t, "the group to be throttled", func() bool {
		if s, err = g.Stat(); err != nil {
			t.Fatal(err)
		}
		return s.Throttled > 0 && s.Usage > 0
	})
	t.Logf("share %g: %s used, throttled in %d of %d periods", g.Share(), s.Usage, s.Throttled, s.Periods)

	// Remove with the processes still running: they go back to the
	// parent group, and the group goes.
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range g.dirs() {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after Remove (%v)", dir, err)
		}
	}
	if err := g.Remove(); err != nil {
		t.Errorf("second Remove: %v", err)
	}
}
