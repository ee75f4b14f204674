package droversqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/driver"
)

func BenchmarkCPUTmp(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "x.db")
	if ps := os.Getenv("PS"); ps != "" {
		db, _ := sql.Open("sqlite", path)
		if _, err := db.Exec("PRAGMA page_size=" + ps + "; CREATE TABLE x(a); DROP TABLE x"); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
	d := open(b, "file:"+path+"?"+os.Getenv("XQ"))
	migrate(b, d)
	if os.Getenv("NOLEASE") != "" {
		d.writer.Exec("DROP INDEX drover_jobs_lease_idx")
	}
	var ps int
	d.writer.QueryRow("PRAGMA page_size").Scan(&ps)
	in := make([]driver.InsertParams, 50000)
	for i := range in {
		in[i] = driver.InsertParams{Queue: "bench", Kind: "noop", Args: []byte(`{"n":1}`), MaxAttempts: 25}
	}
	var cpu, wall time.Duration
	n := 0
	for b.Loop() {
		d.JobInsertMany(ctx, in)
		c0, w0 := cpuTmp(), time.Now()
		for {
			claimed, _ := d.JobClaim(ctx, driver.ClaimParams{Queue: "bench", Max: 500, Owner: "bench", Lease: time.Minute})
			if len(claimed) == 0 {
				break
			}
			res := make([]driver.Result, 0, 500)
			for _, j := range claimed {
				res = append(res, driver.Result{ID: j.ID, Attempt: j.Attempt, Outcome: driver.OutcomeCompleted})
			}
			d.JobFinish(ctx, res)
			n += len(claimed)
		}
		cpu += cpuTmp() - c0
		wall += time.Since(w0)
	}
	b.ReportMetric(float64(ps), "page")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/job")
	b.ReportMetric(float64(n)/wall.Seconds(), "jobs/s")
}

func cpuTmp() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
