package report

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
)

// Machine describes the host in one line, for example
// "linux/amd64, 2 CPUs (AMD EPYC 7B13), 24 GiB RAM, go1.26.8". Benchmark
// figures mean little without the hardware they ran on, so the line goes
// into every report. Parts that cannot be read (the CPU model and memory
// come from /proc on Linux) are left out rather than guessed.
func Machine() string {
	var model string
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		model = cpuModel(f)
		f.Close()
	}
	var mem uint64
	if f, err := os.Open("/proc/meminfo"); err == nil {
		mem = memTotal(f)
		f.Close()
	}
	return describeMachine(runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), model, mem, runtime.Version())
}

// describeMachine assembles Machine's line from its parts; memBytes 0 and
// an empty model mean unknown.
func describeMachine(goos, goarch string, cpus int, model string, memBytes uint64, goVersion string) string {
	unit := "CPUs"
	if cpus == 1 {
		unit = "CPU"
	}
	cpu := fmt.Sprintf("%d %s", cpus, unit)
	if model != "" {
		cpu += " (" + model + ")"
	}
	parts := []string{goos + "/" + goarch, cpu}
	if memBytes > 0 {
		parts = append(parts, formatGiB(memBytes)+" GiB RAM")
	}
	return strings.Join(append(parts, goVersion), ", ")
}

// formatGiB rounds to whole GiB: MemTotal excludes memory the kernel
// reserved, so a 24 GiB machine reports slightly less and should still read
// as 24. Below 10 GiB one decimal is kept.
func formatGiB(b uint64) string {
	gib := float64(b) / (1 << 30)
	if gib < 10 {
		return strconv.FormatFloat(float64(int64(gib*10+0.5))/10, 'f', -1, 64)
	}
	return strconv.FormatInt(int64(gib+0.5), 10)
}

// cpuModel returns the first "model name" in /proc/cpuinfo format, or ""
// when there is none (some ARM kernels omit it).
func cpuModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.Join(strings.Fields(value), " ")
		}
	}
	return ""
}

// memTotal returns MemTotal in bytes from /proc/meminfo format, or 0.
func memTotal(r io.Reader) uint64 {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

// Commit identifies the code that produced a report. It prefers the
// revision stamped into the running binary, because that is the code that
// actually ran even when the bench is started outside the repository, and
// falls back to `git rev-parse --short HEAD` in the working directory (as
// under `go run` or `go test`, which stamp no revision). It returns
// "unknown" when neither is available.
func Commit() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		if rev := buildRevision(info); rev != "" {
			return rev
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "--short", "HEAD").Output()
	if rev := strings.TrimSpace(string(out)); err == nil && rev != "" {
		return rev
	}
	return "unknown"
}

// buildRevision returns the vcs.revision setting shortened to the seven
// hex digits git prints by default, or "".
func buildRevision(info *debug.BuildInfo) string {
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && s.Value != "" {
			return s.Value[:min(len(s.Value), 7)]
		}
	}
	return ""
}
