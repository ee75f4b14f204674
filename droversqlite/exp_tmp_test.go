package droversqlite

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/driver"
)

func BenchmarkInsertVariants(b *testing.B) {
	ctx := context.Background()
	in := make([]driver.InsertParams, 50000)
	for i := range in {
		in[i] = driver.InsertParams{Queue: "bench", Kind: "noop", Args: []byte(`{"n":1}`), MaxAttempts: 25}
	}
	b.Run("json", func(b *testing.B) {
		d := setup(b)
		for b.Loop() {
			if _, err := d.JobInsertMany(ctx, in); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*len(in))/b.Elapsed().Seconds(), "jobs/s")
	})
	for _, chunk := range []int{100, 500, 2000} {
		b.Run("values"+string(rune('0'+chunk/100)), func(b *testing.B) {
			d := setup(b)
			row := "(?, ?, CAST(? AS TEXT), CAST(? AS TEXT), ?, ?, ?, ?, ?, ?)"
			q := d.q["JobInsertHead"] + " " + strings.TrimSuffix(strings.Repeat(row+",", chunk), ",") + " RETURNING id"
			st, err := d.writer.Prepare(q)
			if err != nil {
				b.Fatal(err)
			}
			args := make([]any, 0, chunk*10)
			for b.Loop() {
				now := time.Now().UnixMicro()
				tx, _ := d.writer.BeginTx(ctx, nil)
				ts := tx.Stmt(st)
				ids := make([]int64, 0, len(in))
				for start := 0; start < len(in); start += chunk {
					args = args[:0]
					for _, j := range in[start : start+chunk] {
						meta := j.Metadata
						if meta == nil {
							meta = []byte("{}")
						}
						args = append(args, j.Queue, j.Kind, j.Args, meta, "[]", int64(j.Priority), int64(j.MaxAttempts), now, j.Timeout.Milliseconds(), now)
					}
					rows, err := ts.Query(args...)
					if err != nil {
						b.Fatal(err)
					}
					for rows.Next() {
						var id int64
						rows.Scan(&id)
						ids = append(ids, id)
					}
					rows.Close()
				}
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(in))/b.Elapsed().Seconds(), "jobs/s")
		})
	}
	_ = sql.ErrNoRows
}
