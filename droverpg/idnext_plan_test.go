package droverpg

import (
	"context"
	"fmt"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/jackc/pgx/v5"
)

// TestJobIDNextBacklogPlan checks the seek of a search through a queue's
// backlog, the walk JobBulk makes a page at a time: a page deep into the
// queue must find where its window starts from a few rows, not from every
// job left beyond it. Before, the branch of the hot table's states no
// index serves (running, pending, blocked) walked the primary key from the
// cursor to the end of the table whenever the queue had none of them
// there, so each page of a bulk cancel of a million waiting jobs read the
// rest of the backlog again (a second a page, twenty minutes in all).
func TestJobIDNextBacklogPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := migrated(t)
	table := pgx.Identifier{d.Schema(), "jobs"}.Sanitize()
	// 100,000 jobs waiting in one queue; ten of them, 20,001 to 20,010,
	// running, so that the branch the fix bounds has matches to find.
	const backlog = 100_000
	for _, sql := range []string{
		`INSERT INTO ` + table + ` (queue, kind, args, max_attempts)
			SELECT 'backlog', 'k', '{}', 25 FROM generate_series(1, ` + fmt.Sprint(backlog) + `)`,
		`UPDATE ` + table + ` SET state = 'running', attempt = 1, attempted_at = now() WHERE id BETWEEN 20001 AND 20010`,
		`ANALYZE ` + table,
	} {
		if _, err := d.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	running := []drovertype.JobState{drovertype.JobStateRunning}
	for _, tc := range []struct {
		name string
		p    droverdriver.ListParams
		want int64
	}{
		{"a later window", droverdriver.ListParams{Queue: "backlog", AfterID: 50_000}, 50_001},
		{"a later window, newest first", droverdriver.ListParams{Queue: "backlog", AfterID: 50_000, Desc: true}, 49_999},
		{"the first window", droverdriver.ListParams{Queue: "backlog"}, 1},
		{"a running job first", droverdriver.ListParams{Queue: "backlog", AfterID: 20_000}, 20_001},
		{"a running job first, newest first", droverdriver.ListParams{Queue: "backlog", AfterID: 20_011, Desc: true}, 20_010},
		{"an available job first, newest first", droverdriver.ListParams{Queue: "backlog", AfterID: 20_001, Desc: true}, 20_000},
		{"running only", droverdriver.ListParams{Queue: "backlog", States: running, AfterID: 20_005}, 20_006},
		{"past the end", droverdriver.ListParams{Queue: "backlog", AfterID: backlog}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := explainSeek(t, d, tc.p, tc.want)
			// A window's worth at most (JobBulk's page is
			// drover.BulkChunk, 1,000); the walk to the end of the
			// backlog read 50,000 or more.
			if s.examined > 1000 {
				t.Errorf("the seek examined %v rows: %v", s.examined, s.reads)
			}
			t.Logf("%v rows examined, %.1f ms: %v", s.examined, s.ms, s.reads)
		})
	}
}
