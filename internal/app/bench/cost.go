package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/internal/app/bench/report"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// What a job costs, per resource: the store's CPU, the client's CPU and,
// on PostgreSQL, the WAL it writes. In a fleet the workers run on other
// machines than the database, so the store's CPU per job is what limits
// the fleet and the client's is what each worker host pays; on the bench's
// shared CPUs throughput is roughly the busy cores divided by their sum.
//
// Store CPU is that of the whole PostgreSQL process tree (the postmaster,
// every backend, the WAL writer, autovacuum, and backends that exited
// during the run, which the postmaster's reaped-children times hold), read
// from /proc; it is measured only when the server runs on this machine.
// SQLite runs inside each process that opens the file, so its CPU cannot be
// told apart from the client's: on SQLite the client figure includes the
// store and no store figure is reported. Client CPU is the bench process
// (getrusage) plus every worker process it started (/proc), over the
// measured interval only; with producers in the bench (steady, latency,
// streams) it includes their inserts.

// userHZ is the unit of the CPU times in /proc/<pid>/stat (USER_HZ): 100 on
// every Linux architecture, whatever the kernel's own tick rate.
const userHZ = 100

// procStat is the part of /proc/<pid>/stat that CPU accounting needs, in
// ticks of userHZ. cutime and cstime are the times of children the process
// waited for, which for the postmaster means every backend that exited.
type procStat struct {
	comm                         string
	ppid                         int
	utime, stime, cutime, cstime int64
}

// own is the process's own CPU; all adds what its reaped children used.
func (s procStat) own() int64 { return s.utime + s.stime }
func (s procStat) all() int64 { return s.utime + s.stime + s.cutime + s.cstime }

// parseProcStat parses one /proc/<pid>/stat line (proc(5)). The command
// name is in parentheses and may itself hold spaces and parentheses, so
// fields are counted from the last closing one.
func parseProcStat(b []byte) (procStat, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, errors.New("no command name in parentheses")
	}
	// After ")": state(3) ppid(4) … utime(14) stime(15) cutime(16) cstime(17).
	f := bytes.Fields(b[end+1:])
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("%d fields after the command name, want at least 15", len(f))
	}
	num := func(i int) (int64, error) { return strconv.ParseInt(string(f[i]), 10, 64) }
	var s procStat
	s.comm = string(b[open+1 : end])
	var err error
	var v [5]int64
	for i, at := range []int{1, 11, 12, 13, 14} { // ppid, utime, stime, cutime, cstime
		if v[i], err = num(at); err != nil {
			return procStat{}, fmt.Errorf("field %d: %w", at+3, err)
		}
	}
	s.ppid, s.utime, s.stime, s.cutime, s.cstime = int(v[0]), v[1], v[2], v[3], v[4]
	return s, nil
}

func readProcStat(proc string, pid int) (procStat, error) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(b)
}

// ticks converts userHZ ticks to a duration.
func ticks(n int64) time.Duration { return time.Duration(n) * time.Second / userHZ }

// treeCPU returns the CPU used so far by the process root and its direct
// children: root's own and reaped children's times, plus each live child's
// own. That is the whole tree of a PostgreSQL server, whose postmaster
// forks every other process and reaps it. A child that exits between two
// readings moves from the second term to the first, so differences of
// readings stay exact.
func treeCPU(proc string, root int) (time.Duration, error) {
	rs, err := readProcStat(proc, root)
	if err != nil {
		return 0, err
	}
	total := rs.all()
	entries, err := os.ReadDir(proc)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == root {
			continue
		}
		s, err := readProcStat(proc, pid)
		if err != nil || s.ppid != root {
			continue // gone since the listing, or not a child
		}
		total += s.own()
	}
	return ticks(total), nil
}

// processesCPU returns the CPU used so far by the processes pids, each with
// its reaped children. A process that is gone counts nothing.
func processesCPU(proc string, pids []int) time.Duration {
	var total int64
	for _, pid := range pids {
		if s, err := readProcStat(proc, pid); err == nil {
			total += s.all()
		}
	}
	return ticks(total)
}

// selfCPU is the bench process's CPU so far, user and system, in µs
// resolution (getrusage, not /proc's 10 ms ticks).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// costSample is one reading of every counter; a figure is nil when it
// cannot be measured on this store.
type costSample struct {
	client time.Duration
	store  *time.Duration
	wal    *int64
}

// perJob turns two readings into costs per job. Figures missing from
// either reading stay nil, and so does everything when no job ran.
func perJob(before, after costSample, jobs int64) report.Cost {
	var c report.Cost
	if jobs <= 0 {
		return c
	}
	us := func(d time.Duration) *float64 {
		v := round2(float64(d) / float64(time.Microsecond) / float64(jobs))
		return &v
	}
	c.ClientCPUUsPerJob = us(after.client - before.client)
	if before.store != nil && after.store != nil {
		c.StoreCPUUsPerJob = us(*after.store - *before.store)
	}
	if before.wal != nil && after.wal != nil {
		v := round2(float64(*after.wal-*before.wal) / float64(jobs))
		c.WALBytesPerJob = &v
	}
	return c
}

func round2(v float64) float64 {
	return float64(int64(v*100+0.5)) / 100
}

// costMeter reads the counters. On PostgreSQL it holds a connection of its
// own, for the WAL position and to find the server's processes.
type costMeter struct {
	proc string
	conn *pgx.Conn
	// postmaster is the PostgreSQL server's main process, 0 when its
	// processes are not visible here (another machine or container).
	postmaster int
	// notes say what the figures include, for the report.
	notes []string
}

// newCostMeter prepares the readings for the store t. It never fails a
// run: what it cannot measure is left out and said in its notes.
func newCostMeter(ctx context.Context, t storeurl.Target) *costMeter {
	m := &costMeter{proc: "/proc"}
	if len(t.Shards) > 1 {
		m.notes = append(m.notes, "store CPU and WAL not measured: the store is a fleet of several servers (drover bench shards measures each shard's)")
		return m
	}
	if t.Kind != storeurl.Postgres {
		m.notes = append(m.notes, "SQLite runs inside the bench and worker processes: client_cpu_us_per_job includes the store's CPU, and no store figure is reported")
		return m
	}
	cfg, err := pgx.ParseConfig(t.URL)
	if err == nil {
		m.conn, err = pgx.ConnectConfig(ctx, cfg)
	}
	if err != nil {
		m.notes = append(m.notes, "store CPU and WAL not measured: "+storeurl.RedactIn(err.Error(), t.URL))
		return m
	}
	var backend int
	if err := m.conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err == nil {
		m.postmaster = findPostmaster(m.proc, backend)
	}
	if m.postmaster == 0 {
		m.notes = append(m.notes, "store CPU not measured: the PostgreSQL server's processes are not visible in this machine's /proc")
	} else {
		m.notes = append(m.notes, "store_cpu_us_per_job is the CPU of the whole PostgreSQL process tree from /proc (every backend, background workers, autovacuum), in 10 ms ticks")
	}
	return m
}

// findPostmaster returns the parent of the backend serving our connection,
// if both are PostgreSQL processes of this machine. The name check keeps a
// server in another PID namespace from being confused with a local
// process that happens to have the same PID.
func findPostmaster(proc string, backend int) int {
	b, err := readProcStat(proc, backend)
	if err != nil || !isPostgres(b.comm) {
		return 0
	}
	pm, err := readProcStat(proc, b.ppid)
	if err != nil || !isPostgres(pm.comm) {
		return 0
	}
	return b.ppid
}

func isPostgres(comm string) bool { return comm == "postgres" || comm == "postmaster" }

func (m *costMeter) close() {
	if m.conn != nil {
		_ = m.conn.Close(context.Background())
	}
}

// sample reads every counter; workers are the worker processes' PIDs.
func (m *costMeter) sample(ctx context.Context, workers []int) costSample {
	s := costSample{client: selfCPU() + processesCPU(m.proc, workers)}
	if m.postmaster != 0 {
		if d, err := treeCPU(m.proc, m.postmaster); err == nil {
			s.store = &d
		}
	}
	if m.conn != nil {
		var lsn int64
		if err := m.conn.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint").Scan(&lsn); err == nil {
			s.wal = &lsn
		}
	}
	return s
}

// costWatch measures one interval: start it where the interval begins and
// call its end where it ends.
type costWatch struct {
	m      *costMeter
	before costSample
}

func (m *costMeter) start(ctx context.Context, workers []int) costWatch {
	return costWatch{m: m, before: m.sample(ctx, workers)}
}

func (w costWatch) end(ctx context.Context, workers []int, jobs int64) report.Cost {
	return perJob(w.before, w.m.sample(ctx, workers), jobs)
}
