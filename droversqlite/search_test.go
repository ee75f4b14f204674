package droversqlite

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// TestSearchPlan asks SQLite how it runs a search's statements on 200,000
// finished jobs, analysed, with every filter a search takes: each table
// must be searched by its rowid between the window's bounds, never scanned
// whole, and only the merge of the two tables' pages sorted, so that a
// page's cost is its window's whatever its depth. It also runs a deep
// window and checks what it found.
func TestSearchPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := open(t, filepath.Join(t.TempDir(), "plan.db"))
	migrate(t, d)
	const n = 200_000
	if _, err := d.writer.ExecContext(ctx, `WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ?1)
		INSERT INTO drover_finished_jobs (id, state, queue, kind, priority, attempt, max_attempts, timeout_ms, created_at, run_at,
			attempted_at, finalized_at, tags, metadata, args)
		SELECT i, CASE WHEN i % 100 = 7 THEN 'discarded' ELSE 'completed' END, 'q' || (i % 5), 'k' || (i % 7), 0, 1, 25, 0,
			i * 1000000, i * 1000000, i * 1000000, i * 1000000, CASE WHEN i % 10 = 0 THEN '["vip"]' ELSE '[]' END,
			CASE WHEN i % 50 = 0 THEN '{"tenant":"t1"}' ELSE '{}' END, '{"user":' || (i % 5000) || ',"n":' || i || '}'
		FROM g`, n); err != nil {
		t.Fatal(err)
	}
	if _, err := d.writer.ExecContext(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	const width = 65_536
	filter := droverdriver.ListParams{
		States: []drovertype.JobState{drovertype.JobStateDiscarded, drovertype.JobStateCompleted, drovertype.JobStateRunning},
		Queue:  "q2", Kind: "k3", Tags: []string{"vip"}, Args: []byte(`{"user":4242}`), Metadata: []byte(`{"tenant":"t1"}`),
		Created: drovertype.TimeRange{From: time.UnixMicro(1), To: time.UnixMicro(1 << 50)},
		AfterID: 100_000, UntilID: 100_000 - width + 1, Desc: true, Limit: 50,
	}
	for _, tc := range []struct {
		name, stmt string
		p          droverdriver.ListParams
	}{
		{"JobListDesc, every filter", jobListDesc.name, filter},
		{"JobList, no filter", jobList.name, droverdriver.ListParams{AfterID: 100_000, UntilID: 100_000 + width - 1, Limit: 50}},
		{"JobMatchCount", jobMatchCount.name, filter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := search(&tc.p)
			plan := explain(t, d, tc.stmt, searchArgs(&sp)...)
			for _, tbl := range []string{"drover_jobs", "drover_finished_jobs"} {
				search := "SEARCH " + tbl + " USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"
				if !strings.Contains(plan, search) {
					t.Errorf("the plan does not search %s by rowid in the window:\n%s", tbl, plan)
				}
				if strings.Contains(plan, "SCAN "+tbl) {
					t.Errorf("the plan scans %s:\n%s", tbl, plan)
				}
			}
			if strings.Count(plan, "USE TEMP B-TREE") > 1 {
				t.Errorf("the plan sorts more than the merge of the two tables' pages:\n%s", plan)
			}
			t.Logf("\n%s", plan)
		})
	}
	// The seeks (JobIDNext) read finished jobs from the index that serves
	// the filter's queue, kind or failed state, in ID order, whatever the
	// statistics of ANALYZE above say of five queues and seven kinds; the
	// hot table, which holds no history, by its rowid.
	discarded := []drovertype.JobState{drovertype.JobStateDiscarded}
	for _, tc := range []struct {
		name string
		p    droverdriver.ListParams
		want string
	}{
		{"a queue", droverdriver.ListParams{Queue: "q2", AfterID: 100_000}, "USING INDEX drover_finished_jobs_queue_idx (queue=? AND rowid>? AND rowid<?)"},
		{"a kind, newest first", droverdriver.ListParams{Kind: "k3", AfterID: 100_000, Desc: true}, "USING INDEX drover_finished_jobs_kind_idx (kind=? AND rowid>? AND rowid<?)"},
		{"a queue and a kind", droverdriver.ListParams{Queue: "q2", Kind: "k3"}, "USING INDEX drover_finished_jobs_queue_idx (queue=? AND rowid>? AND rowid<?)"},
		{"a queue, completed", droverdriver.ListParams{Queue: "q2", States: []drovertype.JobState{drovertype.JobStateCompleted}}, "USING INDEX drover_finished_jobs_queue_idx (queue=? AND rowid>? AND rowid<?)"},
		{"discarded", droverdriver.ListParams{States: discarded, AfterID: 100_000}, "USING INDEX drover_finished_jobs_failed_idx (id>? AND id<?)"},
		{"discarded, a kind", droverdriver.ListParams{States: discarded, Kind: "k3"}, "USING INDEX drover_finished_jobs_kind_idx (kind=? AND rowid>? AND rowid<?)"},
	} {
		t.Run("JobIDNext, "+tc.name, func(t *testing.T) {
			ip := idNext(&tc.p)
			name := jobIDNext.name
			if tc.p.Desc {
				name = jobIDPrev.name
			}
			plan := explain(t, d, name, idNextArgs(&ip)...)
			if !strings.Contains(plan, "SEARCH drover_finished_jobs "+tc.want) {
				t.Errorf("the plan does not search finished jobs %s:\n%s", tc.want, plan)
			}
			if strings.Contains(plan, "SCAN drover_") {
				t.Errorf("the plan scans a table:\n%s", plan)
			}
			if _, err := d.exec.JobIDNext(ctx, tc.p); err != nil {
				t.Fatal(err)
			}
		})
	}

	// The window holds jobs 34,465 to 99,999; newest first, the deep page
	// lists those of user 4242 in it, and the filter with every field
	// none (4242 mod 50 is not 0, so no such job has the tenant).
	if jobs, err := d.exec.JobList(ctx, filter); err != nil || len(jobs) != 0 {
		t.Fatalf("deep page, every filter: %d jobs, %v; want none", len(jobs), err)
	}
	deep := droverdriver.ListParams{Args: []byte(`{"user":4242}`), AfterID: 100_000, UntilID: 100_000 - width + 1, Desc: true, Limit: 50}
	jobs, err := d.exec.JobList(ctx, deep)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for id := int64(99_242); id > 100_000-width; id -= 5000 {
		want = append(want, id)
	}
	var got []int64
	for _, j := range jobs {
		got = append(got, j.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("deep page %v, want %v", got, want)
	}
}

// explain returns SQLite's plan of the named statement of queries.sql with
// args, one detail a line, as d's reader would run it.
func explain(t *testing.T, d *Driver, name string, args ...any) string {
	t.Helper()
	rows, err := d.reader.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+d.q[name], args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		b.WriteString(detail + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
