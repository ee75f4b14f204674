// Command search measures job search and counts on a large store: the
// figures of docs/operations.md ("Searching jobs"). It is not part of the
// drover module (its own go.mod, like bench/peers).
//
//	psql "$URL" -c 'CREATE SCHEMA big' && drover migrate --database-url "$URL" --schema big
//	psql "$URL" -f fill.sql          # ten million finished jobs
//	go run . pg "$URL" big           # or: go run . sqlite FILE
//
// Each search and count runs five times; it prints the median.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
)

type searcher interface {
	JobSearch(ctx context.Context, p drover.JobListParams) (*drover.JobPage, error)
	JobCount(ctx context.Context, p drover.JobListParams) (drover.JobCount, error)
}

func median(f func() string) (time.Duration, string) {
	var ds []time.Duration
	var out string
	for i := 0; i < 5; i++ {
		t := time.Now()
		out = f()
		ds = append(ds, time.Since(t))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[2], out
}

func main() {
	ctx := context.Background()
	var c searcher
	var d droverdriver.Driver
	if os.Args[1] == "pg" {
		pool, err := pgxpool.New(ctx, os.Args[2])
		if err != nil {
			panic(err)
		}
		dd, err := droverpg.New(pool, droverpg.WithSchema(os.Args[3]))
		if err != nil {
			panic(err)
		}
		d = dd
		cl, err := drover.NewClient(dd, &drover.Config{})
		if err != nil {
			panic(err)
		}
		c = cl
	} else {
		dd, err := droversqlite.Open(ctx, os.Args[2])
		if err != nil {
			panic(err)
		}
		d = dd
		cl, err := drover.NewClient(dd, &drover.Config{})
		if err != nil {
			panic(err)
		}
		c = cl
	}
	_ = d
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	cases := []struct {
		name string
		p    drover.JobListParams
	}{
		{"newest first, no filter, page 1", drover.JobListParams{NewestFirst: true, Limit: 50}},
		{"newest first, no filter, after 5,000,000", drover.JobListParams{NewestFirst: true, Limit: 50, After: 5_000_000}},
		{"oldest first, no filter, after 9,000,000", drover.JobListParams{Limit: 50, After: 9_000_000}},
		{"state discarded (1%), page 1", drover.JobListParams{NewestFirst: true, Limit: 50, States: []drovertype.JobState{"discarded"}}},
		{"state discarded (1%), after 5,000,000", drover.JobListParams{NewestFirst: true, Limit: 50, After: 5_000_000, States: []drovertype.JobState{"discarded"}}},
		{"kind + queue, after 5,000,000", drover.JobListParams{NewestFirst: true, Limit: 50, After: 5_000_000, Kind: "email.send", Queue: "email"}},
		{"args user_id (1 in 50,000), one page", drover.JobListParams{NewestFirst: true, Limit: 50, Args: raw(`{"user_id":123}`)}},
		{"metadata tenant + tag vip", drover.JobListParams{NewestFirst: true, Limit: 50, Metadata: raw(`{"tenant":"t3"}`), Tags: []string{"vip"}}},
		{"finished in a 10-minute range 5 days back", drover.JobListParams{NewestFirst: true, Limit: 50,
			Finished: drovertype.TimeRange{From: time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 1, 6, 0, 10, 0, 0, time.UTC)}}},
	}
	for _, tc := range cases {
		d, out := median(func() string {
			page, err := c.JobSearch(ctx, tc.p)
			if err != nil {
				panic(err)
			}
			return fmt.Sprintf("%d jobs, next %d", len(page.Jobs), page.Next)
		})
		fmt.Printf("search | %s | %.1f ms | %s\n", tc.name, float64(d.Microseconds())/1000, out)
	}
	for _, tc := range cases[3:] {
		tc.p.After = 0
		d, out := median(func() string {
			n, err := c.JobCount(ctx, tc.p)
			if err != nil {
				panic(err)
			}
			return fmt.Sprintf("%d exact=%v", n.Count, n.Exact)
		})
		fmt.Printf("count | %s | %.1f ms | %s\n", tc.name, float64(d.Microseconds())/1000, out)
	}
	d2, out := median(func() string {
		n, err := c.JobCount(ctx, drover.JobListParams{})
		if err != nil {
			panic(err)
		}
		return fmt.Sprintf("%d exact=%v", n.Count, n.Exact)
	})
	fmt.Printf("count | all | %.1f ms | %s\n", float64(d2.Microseconds())/1000, out)
}
