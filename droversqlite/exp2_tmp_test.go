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

func BenchmarkSplit(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "x.db")
	if os.Getenv("PRE") != "" {
		db, _ := sql.Open("sqlite", path)
		db.Exec(os.Getenv("PRE"))
		db.Close()
	}
	d := open(b, "file:"+path+"?"+os.Getenv("XQ"))
	migrate(b, d)
	in := make([]driver.InsertParams, 50000)
	for i := range in {
		in[i] = driver.InsertParams{Queue: "bench", Kind: "noop", Args: []byte(`{"n":1}`), MaxAttempts: 25}
	}
	var tc, tf, cpu time.Duration
	n := 0
	for b.Loop() {
		d.JobInsertMany(ctx, in)
		c0 := cpuTime()
		for {
			s := time.Now()
			claimed, _ := d.JobClaim(ctx, driver.ClaimParams{Queue: "bench", Max: 500, Owner: "bench", Lease: time.Minute})
			tc += time.Since(s)
			if len(claimed) == 0 {
				break
			}
			res := make([]driver.Result, 0, 500)
			for _, j := range claimed {
				res = append(res, driver.Result{ID: j.ID, Attempt: j.Attempt, Outcome: driver.OutcomeCompleted})
			}
			s = time.Now()
			d.JobFinish(ctx, res)
			tf += time.Since(s)
			n += len(claimed)
		}
		cpu += cpuTime() - c0
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n), "cpu-ns/job")
	b.ReportMetric(float64(tc.Nanoseconds())/float64(n), "claim-ns/job")
	b.ReportMetric(float64(tf.Nanoseconds())/float64(n), "finish-ns/job")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
