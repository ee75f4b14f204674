package droversqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/driver"
)

func BenchmarkClaimVariants(b *testing.B) {
	ctx := context.Background()
	in := make([]driver.InsertParams, 50000)
	for i := range in {
		in[i] = driver.InsertParams{Queue: "bench", Kind: "noop", Args: []byte(`{"n":1}`), MaxAttempts: 25}
	}
	for _, variant := range []string{"full", "idonly", "noreturn"} {
		b.Run(variant, func(b *testing.B) {
			d := setup(b)
			q := d.q["JobClaim"]
			i := strings.LastIndex(q, "RETURNING")
			switch variant {
			case "idonly":
				q = q[:i] + "RETURNING id"
			case "noreturn":
				q = q[:i]
			}
			st, err := d.writer.Prepare(q)
			if err != nil {
				b.Fatal(err)
			}
			var tc time.Duration
			n := 0
			for b.Loop() {
				d.JobInsertMany(ctx, in)
				for {
					now := time.Now().UnixMicro()
					s := time.Now()
					if variant == "noreturn" {
						r, err := st.Exec("bench", 500, "o", now, now+6e7)
						if err != nil {
							b.Fatal(err)
						}
						k, _ := r.RowsAffected()
						tc += time.Since(s)
						n += int(k)
						if k == 0 {
							break
						}
						continue
					}
					rows, err := st.Query("bench", 500, "o", now, now+6e7)
					if err != nil {
						b.Fatal(err)
					}
					k := 0
					cols, _ := rows.Columns()
					vals := make([]any, len(cols))
					dest := make([]any, len(cols))
					for i := range vals {
						dest[i] = &vals[i]
					}
					for rows.Next() {
						rows.Scan(dest...)
						k++
					}
					rows.Close()
					tc += time.Since(s)
					n += k
					if k == 0 {
						break
					}
				}
				d.writer.Exec("DELETE FROM drover_jobs")
			}
			b.ReportMetric(float64(tc.Nanoseconds())/float64(n), "claim-ns/job")
		})
	}
}
