// Package cgroup holds processes to a share of the machine's CPUs with the
// Linux cgroup cpu controller, and reads the CPU time they used.
//
// The benches use it to make one machine behave like several servers: a
// PostgreSQL cluster started inside a group of share 0.4 gets at most 40%
// of one CPU however busy it is, so that on a 2-core machine each of three
// clusters is a small server of its own rather than a claim on the same
// two cores, and the group's usage gives the store's CPU time per job.
//
// Both cgroup versions work: v2 (one hierarchy, cpu.max and cpu.stat's
// usage_usec) where its cpu controller can be enabled, else v1 (the cpu
// hierarchy's cpu.cfs_quota_us, and cpuacct.usage from the cpuacct one,
// mounted with it or apart). Creating groups needs write access to the
// hierarchy, which root normally has; where neither version is writable,
// NewCPU says why for each.
package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/droverhq/drover/internal/testkit/proctree"
)

// ErrUnavailable is returned (wrapped, with the reasons) by NewCPU when no
// cgroup cpu controller can be written on this machine.
var ErrUnavailable = errors.New("cgroup: no writable cpu controller (cgroup v2 cpu.max or v1 cpu.cfs_quota_us)")

// period is the length of the scheduler's accounting period the quota is
// spread over: the kernel's default, short enough that a capped server's
// latency is not dominated by waits for the next period.
const period = 100 * time.Millisecond

// minQuota is the kernel's smallest quota per period.
const minQuota = time.Millisecond

// CPU is one control group holding its processes to a CPU share.
type CPU struct {
	name  string
	share float64
	v2    bool
	dir   string // the group in the cpu hierarchy (v2: the only one)
	acct  string // v1: the group in a cpuacct hierarchy mounted apart; "" if none
	// usageFile is where the group's CPU time is read: cpu.stat (v2),
	// cpuacct.usage (v1); "" when v1 has no cpuacct hierarchy.
	usageFile string
}

// NewCPU creates the group drover-NAME holding its processes to share of
// one CPU (0.4: at most 40 ms of CPU time in every 100 ms; 2: two CPUs'
// worth). The group starts empty; Add and AddTree move processes in, and
// Remove deletes it.
func NewCPU(name string, share float64) (*CPU, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("cgroup: group name %q: must be one path element", name)
	}
	if maxShare := float64(runtime.NumCPU()); share*float64(period) < float64(minQuota) || share > maxShare {
		return nil, fmt.Errorf("cgroup: CPU share %g: must be between %g and %g (the CPUs of this machine)",
			share, float64(minQuota)/float64(period), maxShare)
	}
	h, err := readHierarchies("/proc/self/mountinfo", "/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	return h.newCPU("drover-"+name, share)
}

// hierarchies are the cgroup mounts this process sees, and its own group
// in each, as directories.
type hierarchies struct {
	v2     string // this process's group in the v2 hierarchy; "" if none is mounted
	v2Root string // the v2 mount point
	cpu    string // this process's group in the v1 cpu hierarchy; "" if none
	acct   string // … in the v1 cpuacct hierarchy; equal to cpu when mounted together
}

func (h hierarchies) newCPU(name string, share float64) (*CPU, error) {
	var reasons []string
	if h.v2 != "" {
		g, err := h.newV2(name, share)
		if err == nil {
			return g, nil
		}
		reasons = append(reasons, "v2: "+err.Error())
	} else {
		reasons = append(reasons, "v2: no cgroup2 mount")
	}
	if h.cpu != "" {
		g, err := h.newV1(name, share)
		if err == nil {
			return g, nil
		}
		reasons = append(reasons, "v1: "+err.Error())
	} else {
		reasons = append(reasons, "v1: no cgroup mount with the cpu controller")
	}
	return nil, fmt.Errorf("%w: %s", ErrUnavailable, strings.Join(reasons, "; "))
}

// newV2 creates the group below the first of this process's own group and
// the hierarchy's root whose children can have the cpu controller. A
// group with processes of its own cannot hand controllers to children
// (the "no internal processes" rule), which the root is exempt from.
func (h hierarchies) newV2(name string, share float64) (*CPU, error) {
	var reasons []string
	for _, parent := range slices.Compact([]string{h.v2, h.v2Root}) {
		if err := enableCPU(parent); err != nil {
			reasons = append(reasons, err.Error())
			continue
		}
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
		g := &CPU{name: name, share: share, v2: true, dir: dir, usageFile: filepath.Join(dir, "cpu.stat")}
		quota := time.Duration(share * float64(period))
		if err := writeFile(dir, "cpu.max", fmt.Sprintf("%d %d", quota.Microseconds(), period.Microseconds())); err != nil {
			_ = g.Remove()
			return nil, err
		}
		return g, nil
	}
	return nil, errors.New(strings.Join(reasons, "; "))
}

// enableCPU makes the cpu controller available to dir's children.
func enableCPU(dir string) error {
	avail, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return err
	}
	if !slices.Contains(strings.Fields(string(avail)), "cpu") {
		return fmt.Errorf("%s: the cpu controller is not available (cgroup.controllers: %q)", dir, strings.TrimSpace(string(avail)))
	}
	enabled, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return err
	}
	if slices.Contains(strings.Fields(string(enabled)), "cpu") {
		return nil
	}
	if err := writeFile(dir, "cgroup.subtree_control", "+cpu"); err != nil {
		return fmt.Errorf("enabling the cpu controller for children: %w", err)
	}
	return nil
}

// newV1 creates the group in the cpu hierarchy, and in the cpuacct one
// when that is mounted apart, below this process's own group.
func (h hierarchies) newV1(name string, share float64) (*CPU, error) {
	dir := filepath.Join(h.cpu, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	g := &CPU{name: name, share: share, dir: dir}
	fail := func(err error) (*CPU, error) {
		_ = g.Remove()
		return nil, err
	}
	switch {
	case h.acct == h.cpu:
		g.usageFile = filepath.Join(dir, "cpuacct.usage")
	case h.acct != "":
		g.acct = filepath.Join(h.acct, name)
		if err := os.Mkdir(g.acct, 0o755); err != nil {
			g.acct = ""
			return fail(err)
		}
		g.usageFile = filepath.Join(g.acct, "cpuacct.usage")
	}
	quota := time.Duration(share * float64(period))
	if err := writeFile(dir, "cpu.cfs_period_us", strconv.FormatInt(period.Microseconds(), 10)); err != nil {
		return fail(err)
	}
	if err := writeFile(dir, "cpu.cfs_quota_us", strconv.FormatInt(quota.Microseconds(), 10)); err != nil {
		return fail(err)
	}
	return g, nil
}

// Share returns the CPU share the group holds its processes to.
func (g *CPU) Share() float64 { return g.share }

// Dir returns the group's directory in the cpu hierarchy, for messages.
func (g *CPU) Dir() string { return g.dir }

// Add moves one process into the group. Its threads go with it, and the
// children it forks from then on start in the group; children it already
// has stay where they are (AddTree moves those too).
func (g *CPU) Add(pid int) error {
	for _, dir := range g.dirs() {
		if err := writeFile(dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				return nil // exited meanwhile: nothing left to hold
			}
			return fmt.Errorf("cgroup: moving %d into %s: %w", pid, dir, err)
		}
	}
	return nil
}

// AddTree moves pid and every descendant into the group: a running
// server's postmaster, say, with the background processes and backends it
// has already forked. Each process moves before its children are listed,
// so a child forked meanwhile is either listed or born in the group.
func (g *CPU) AddTree(pid int) error {
	if err := g.Add(pid); err != nil {
		return err
	}
	kids, err := proctree.Children(pid)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := g.AddTree(k); err != nil {
			return err
		}
	}
	return nil
}

// PIDs returns the processes in the group.
func (g *CPU) PIDs() ([]int, error) {
	data, err := os.ReadFile(filepath.Join(g.dir, "cgroup.procs"))
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	var out []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("cgroup: %s/cgroup.procs: %q is not a PID", g.dir, f)
		}
		out = append(out, pid)
	}
	return out, nil
}

// Stat is what the group's processes used.
type Stat struct {
	// Usage is the CPU time the group's processes used since it was
	// created, counted by the kernel (cpuacct.usage or usage_usec).
	Usage time.Duration
	// Periods counts the accounting periods in which the group ran, and
	// Throttled those in which it used its whole quota and had to wait:
	// a group throttled in most of its periods is held back by its share.
	Periods, Throttled int64
}

// Stat reads the group's CPU time and throttling. On v1 without a cpuacct
// hierarchy, Usage cannot be read, and Stat says so.
func (g *CPU) Stat() (Stat, error) {
	var s Stat
	fields, err := readKeyed(filepath.Join(g.dir, "cpu.stat"))
	if err != nil {
		return s, err
	}
	s.Periods, s.Throttled = fields["nr_periods"], fields["nr_throttled"]
	switch {
	case g.v2:
		usec, ok := fields["usage_usec"]
		if !ok {
			return s, fmt.Errorf("cgroup: %s/cpu.stat has no usage_usec", g.dir)
		}
		s.Usage = time.Duration(usec) * time.Microsecond
	case g.usageFile == "":
		return s, errors.New("cgroup: no cpuacct hierarchy is mounted: the group's CPU time cannot be read")
	default:
		data, err := os.ReadFile(g.usageFile)
		if err != nil {
			return s, fmt.Errorf("cgroup: %w", err)
		}
		ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil {
			return s, fmt.Errorf("cgroup: %s: %w", g.usageFile, err)
		}
		s.Usage = time.Duration(ns)
	}
	return s, nil
}

// Remove deletes the group. Processes still in it are moved to the group
// it was made in first, since the kernel deletes only empty groups. It is
// safe to call more than once.
func (g *CPU) Remove() error {
	var errs []error
	for _, dir := range slices.Backward(g.dirs()) {
		if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := evacuate(dir); err != nil {
			errs = append(errs, err)
		}
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("cgroup: removing %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}

// evacuate moves the processes of the group at dir to its parent.
func evacuate(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil // nothing readable to move; Remove reports what is left
	}
	for _, pid := range strings.Fields(string(data)) {
		if err := writeFile(filepath.Dir(dir), "cgroup.procs", pid); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("cgroup: moving %s out of %s: %w", pid, dir, err)
		}
	}
	return nil
}

// dirs returns the group's directories, the cpu one first.
func (g *CPU) dirs() []string {
	if g.acct != "" {
		return []string{g.dir, g.acct}
	}
	return []string{g.dir}
}

// writeFile writes one value to a control file, as one write(2): the
// kernel acts on each write.
func writeFile(dir, name, value string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// readKeyed reads a "key value" per line file such as cpu.stat.
func readKeyed(path string) (map[string]int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	out := map[string]int64{}
	for line := range strings.Lines(string(data)) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// readHierarchies finds the cgroup mounts in a mountinfo file and this
// process's group in each from its /proc/PID/cgroup file.
func readHierarchies(mountinfo, self string) (hierarchies, error) {
	mf, err := os.Open(mountinfo)
	if err != nil {
		return hierarchies{}, fmt.Errorf("cgroup: %w", err)
	}
	defer mf.Close()
	sf, err := os.Open(self)
	if err != nil {
		return hierarchies{}, fmt.Errorf("cgroup: %w", err)
	}
	defer sf.Close()
	return parseHierarchies(mf, sf)
}

// mount is one cgroup mount of mountinfo.
type mount struct {
	root, point string // the hierarchy path mounted, and where
	v2          bool
	controllers []string // v1: the controllers among its super options
}

func parseHierarchies(mountinfo, self io.Reader) (hierarchies, error) {
	var mounts []mount
	sc := bufio.NewScanner(mountinfo)
	for sc.Scan() {
		// id parent major:minor root point options [optional…] - fstype source super
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 5 || len(fields) < sep+4 {
			continue
		}
		switch fstype := fields[sep+1]; fstype {
		case "cgroup2":
			mounts = append(mounts, mount{root: unescape(fields[3]), point: unescape(fields[4]), v2: true})
		case "cgroup":
			mounts = append(mounts, mount{root: unescape(fields[3]), point: unescape(fields[4]),
				controllers: strings.Split(fields[sep+3], ",")})
		}
	}
	if err := sc.Err(); err != nil {
		return hierarchies{}, fmt.Errorf("cgroup: reading mountinfo: %w", err)
	}
	// Lines of /proc/PID/cgroup: "id:controllers:path", with id 0 and no
	// controllers for v2.
	paths := map[string]string{} // controller ("" for v2) → path
	sc = bufio.NewScanner(self)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			paths[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			paths[c] = parts[2]
		}
	}
	if err := sc.Err(); err != nil {
		return hierarchies{}, fmt.Errorf("cgroup: reading the process's groups: %w", err)
	}
	var h hierarchies
	for _, m := range mounts {
		switch {
		case m.v2 && h.v2 == "":
			if p, ok := paths[""]; ok {
				h.v2, h.v2Root = within(m, p), m.point
			}
		case !m.v2 && slices.Contains(m.controllers, "cpu") && h.cpu == "":
			h.cpu = within(m, paths["cpu"])
			if slices.Contains(m.controllers, "cpuacct") {
				h.acct = h.cpu
			}
		case !m.v2 && slices.Contains(m.controllers, "cpuacct") && h.acct == "":
			h.acct = within(m, paths["cpuacct"])
		}
	}
	return h, nil
}

// within returns the directory of the group at path (as /proc/PID/cgroup
// names it) under mount m. A mount of part of a hierarchy (a container's
// own group) shows only what lies below its root; a group outside it is
// out of reach, and the mount point is the nearest place to work in.
func within(m mount, path string) string {
	rel, err := filepath.Rel(m.root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return m.point
	}
	return filepath.Join(m.point, rel)
}

// unescape undoes mountinfo's octal escapes of spaces, tabs, newlines and
// backslashes in paths.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
