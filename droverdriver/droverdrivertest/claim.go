package droverdrivertest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

func testClaim(t *testing.T, setup opener) {
	t.Run("JobClaim/order", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		past := time.Now().Add(-time.Hour)
		got := insert(t, d,
			with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = 2 }),
			with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = 1 }),
			with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = 1; p.RunAt = past }),
			with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = 1 }),
			with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = 0; p.RunAt = time.Now().Add(time.Hour) }),
			job("other"),
		)
		// Priority first, then run_at, then ID; the scheduled job and the
		// other queue's are not claimable.
		rows := claim(t, d, "q", 3)
		if want := []int64{got[2], got[1], got[3]}; !slices.Equal(ids(rows), want) {
			t.Fatalf("claimed %v, want %v", ids(rows), want)
		}
		rows = append(rows, claim(t, d, "q", 10)...)
		if want := []int64{got[2], got[1], got[3], got[0]}; !slices.Equal(ids(rows), want) {
			t.Fatalf("claimed %v, want %v", ids(rows), want)
		}
		if more := claim(t, d, "q", 10); len(more) != 0 {
			t.Fatalf("claimed the scheduled job: %v", ids(more))
		}
		if n, err := d.JobCountByState(ctx, "q"); err != nil || n[droverdriver.StateRunning] != 4 || n[droverdriver.StateScheduled] != 1 {
			t.Errorf("counts %v, %v; want 4 running and 1 scheduled", n, err)
		}
	})

	t.Run("JobClaim/claimed row", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		past := time.Now().Add(-time.Hour)
		id := insert(t, d, with(job("q"), func(p *droverdriver.InsertParams) {
			p.RunAt, p.Args, p.Tags, p.Metadata = past, []byte(`{"n":2}`), []string{"t"}, []byte(`{"m":1}`)
		}))[0]
		j := claimAs(t, d, "owner-1", "q", 1, time.Minute)[0]
		if j.ID != id || j.State != droverdriver.StateRunning || j.Attempt != 1 || j.LeaseOwner != "owner-1" ||
			j.AttemptedAt == nil || j.LeaseExpiresAt == nil || j.FinalizedAt != nil || j.CancelRequested {
			t.Fatalf("claimed row %+v", j)
		}
		// PostgreSQL's now() is the transaction's start; the expiry may
		// come from a later clock reading of the same statement.
		if lease := j.LeaseExpiresAt.Sub(*j.AttemptedAt); lease < time.Minute-time.Second || lease > time.Minute+time.Second {
			t.Errorf("lease runs %v from the attempt's start, want 1m", lease)
		}
		if !sameTime(j.RunAt, past) || !jsonEqual(j.Args, []byte(`{"n":2}`)) || !jsonEqual(j.Metadata, []byte(`{"m":1}`)) ||
			!slices.Equal(j.Tags, []string{"t"}) || j.Errors != nil {
			t.Errorf("payload run_at %v args %s metadata %s tags %v errors %s", j.RunAt, j.Args, j.Metadata, j.Tags, j.Errors)
		}
		stored := get(t, d, id)
		if stored.State != droverdriver.StateRunning || stored.Attempt != 1 || stored.LeaseOwner != "owner-1" ||
			stored.LeaseExpiresAt == nil || !stored.LeaseExpiresAt.Equal(*j.LeaseExpiresAt) {
			t.Errorf("stored after the claim: %+v", stored)
		}
	})

	t.Run("JobClaim/rows of one claim", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		// Each job differs in every field a claim returns, so that rows
		// sharing storage (a driver reading a claim's rows in chunks)
		// would show another row's values.
		const n = 70
		jobs := make([]droverdriver.InsertParams, n)
		for i := range jobs {
			jobs[i] = with(job("q"), func(p *droverdriver.InsertParams) {
				p.Kind, p.Args, p.Metadata = fmt.Sprintf("kind-%d", i%3), fmt.Appendf(nil, `{"n":%d}`, i), fmt.Appendf(nil, `{"m":%d}`, i)
				p.Tags, p.Priority, p.MaxAttempts = []string{fmt.Sprint("t", i)}, i%2, 3+i
				if i%5 == 0 {
					p.Key, p.KeyLimit = fmt.Sprint("k", i), 1
				}
			})
		}
		ids := insert(t, d, jobs...)
		rows := claim(t, d, "q", n)
		if len(rows) != n {
			t.Fatalf("claimed %d rows, want %d", len(rows), n)
		}
		byID := map[int64]int{}
		for i, id := range ids {
			byID[id] = i
		}
		for _, j := range rows {
			j.Args = append(j.Args, "xxxx"...) // must not reach another row
		}
		for _, j := range rows {
			i, ok := byID[j.ID]
			want := jobs[i]
			args, appended := strings.CutSuffix(string(j.Args), "xxxx")
			if !ok || j.Kind != want.Kind || !appended || !jsonEqual([]byte(args), want.Args) || !jsonEqual(j.Metadata, want.Metadata) ||
				!slices.Equal(j.Tags, want.Tags) || j.Priority != want.Priority || j.MaxAttempts != want.MaxAttempts || j.Key != want.Key {
				t.Fatalf("row of job %d: kind %q args %s metadata %s tags %v priority %d max attempts %d key %q; want %+v",
					j.ID, j.Kind, j.Args, j.Metadata, j.Tags, j.Priority, j.MaxAttempts, j.Key, want)
			}
			if j.AttemptedAt == nil || j.LeaseExpiresAt == nil || j.AttemptedAt == j.LeaseExpiresAt {
				t.Fatalf("row of job %d: attempted at %v, lease expires at %v", j.ID, j.AttemptedAt, j.LeaseExpiresAt)
			}
		}
		if rows[0].AttemptedAt == rows[1].AttemptedAt || rows[0].LeaseExpiresAt == rows[1].LeaseExpiresAt {
			t.Fatal("two rows share a time: a handler changing its row's would change the other's")
		}
	})

	t.Run("JobClaim/max", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		insert(t, d, job("q"), job("q"), job("q"), job("q"), job("q"))
		for _, tc := range []struct{ max, want int }{{2, 2}, {1, 1}, {10, 2}, {10, 0}} {
			if rows := claim(t, d, "q", tc.max); len(rows) != tc.want {
				t.Fatalf("claim of at most %d: %d rows, want %d", tc.max, len(rows), tc.want)
			}
		}
	})

	t.Run("JobClaim/lease token", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		insert(t, d, job("q"), job("q"), job("q"))
		first, second := claim(t, d, "q", 2), claim(t, d, "q", 1)
		tok := first[0].LeaseToken
		if tok.IsZero() || first[1].LeaseToken != tok {
			t.Fatalf("one claim handed out tokens %v and %v; want one non-zero token for all its rows", tok, first[1].LeaseToken)
		}
		if second[0].LeaseToken.IsZero() || second[0].LeaseToken == tok {
			t.Fatalf("a second claim handed out %v (first %v); want a fresh token", second[0].LeaseToken, tok)
		}
		// Reads never show it: anyone allowed to read jobs could finish them.
		if j := get(t, d, first[0].ID); !j.LeaseToken.IsZero() {
			t.Errorf("JobGet returned the lease token")
		}
		listed, err := d.JobList(ctx, droverdriver.ListParams{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range listed {
			if !j.LeaseToken.IsZero() {
				t.Errorf("JobList returned the lease token of job %d", j.ID)
			}
		}
		// The token is stored: the heartbeat accepts it and no other.
		for _, tc := range []struct {
			token droverdriver.LeaseToken
			lost  bool
		}{{tok, false}, {second[0].LeaseToken, true}} {
			res, err := d.JobHeartbeat(ctx, droverdriver.HeartbeatParams{IDs: []int64{first[1].ID}, Attempts: []int{1},
				Tokens: []droverdriver.LeaseToken{tc.token}, Lease: time.Minute})
			if err != nil || (len(res.Lost) == 1) != tc.lost {
				t.Fatalf("heartbeat with token %v: lost %v, %v; want lost: %v", tc.token, res.Lost, err, tc.lost)
			}
		}
	})

	t.Run("JobClaim/concurrent claimers", func(t *testing.T) {
		t.Parallel()
		// Claimers running at once must hand every job out exactly once
		// (row locks skipped, or claims serialised, as the store does it).
		ctx := context.Background()
		d := setup(t)
		const total = 2000
		in := make([]droverdriver.InsertParams, total)
		for i := range in {
			in[i] = job("q")
		}
		insert(t, d, in...)
		var mu sync.Mutex
		seen := make(map[int64]int, total)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Go(func() {
				for {
					rows, err := d.JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 37, Owner: fmt.Sprint("w", i), Lease: time.Minute})
					if err != nil {
						errs <- err
						return
					}
					if len(rows) == 0 {
						return
					}
					mu.Lock()
					for _, r := range rows {
						seen[r.ID]++
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if len(seen) != total {
			t.Fatalf("claimed %d distinct jobs, want %d", len(seen), total)
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("job %d claimed %d times", id, n)
			}
		}
	})

	t.Run("JobClaim/after", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		got := insert(t, d,
			with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = 1 }),
			job("q"), job("q"), job("q"))
		head := get(t, d, got[2])
		rows, err := d.JobClaim(context.Background(), droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute,
			After: &droverdriver.ClaimPosition{Priority: head.Priority, RunAt: head.RunAt, ID: head.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if want := []int64{got[3], got[0]}; !slices.Equal(ids(rows), want) {
			t.Fatalf("claimed %v past job %d, want %v", ids(rows), head.ID, want)
		}
	})

	t.Run("JobClaim/kinds", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		kind := func(k string) droverdriver.InsertParams {
			return with(job("q"), func(p *droverdriver.InsertParams) { p.Kind = k })
		}
		got := insert(t, d, kind("a"), kind("b"), kind("c"), kind("a"), kind("b"))
		for _, tc := range []struct {
			name  string
			kinds []string
			after int // index into got of the position to claim past, -1 for none
			want  []int64
		}{
			{"none of them", []string{}, -1, nil},
			{"a kind nothing has", []string{"z"}, -1, nil},
			{"two of three, past a position", []string{"a", "c"}, 0, []int64{got[2], got[3]}},
			{"the rest of a", []string{"a"}, -1, []int64{got[0]}},
			{"every kind", nil, -1, []int64{got[1], got[4]}},
		} {
			p := droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute, Kinds: tc.kinds}
			if tc.after >= 0 {
				pos := droverdriver.PositionOf(get(t, d, got[tc.after]))
				p.After = &pos
			}
			rows, err := d.JobClaim(context.Background(), p)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !slices.Equal(ids(rows), tc.want) {
				t.Fatalf("%s: claimed %v, want %v", tc.name, ids(rows), tc.want)
			}
		}
	})

	t.Run("JobClaim/queue limit", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		if s, err := d.QueueSettingsGet(ctx, "q"); err != nil || s != nil {
			t.Fatalf("settings of a queue never set: %+v, %v; want none", s, err)
		}
		insert(t, d, job("q"), job("q"), job("q"), job("q"))
		if _, err := d.QueueSettingsSet(ctx, droverdriver.QueueSettingsSetParams{Queue: "q", Limit: &droverdriver.QueueLimit{MaxRunning: 2}}); err != nil {
			t.Fatal(err)
		}
		claimLimited := func() []*droverdriver.JobRow {
			t.Helper()
			rows, err := d.JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute, Limited: true})
			if err != nil {
				t.Fatal(err)
			}
			return rows
		}
		first := claimLimited()
		if len(first) != 2 {
			t.Fatalf("claimed %d jobs under a limit of 2 running", len(first))
		}
		if more := claimLimited(); len(more) != 0 {
			t.Fatalf("claimed %d more while 2 run", len(more))
		}
		if s, err := d.QueueSettingsGet(ctx, "q"); err != nil || s == nil || s.Limit.MaxRunning != 2 {
			t.Fatalf("stored settings %+v, %v; want a limit of 2 running", s, err)
		}
		finish(t, d, result(first[0], droverdriver.OutcomeCompleted))
		if more := claimLimited(); len(more) != 1 {
			t.Fatalf("claimed %d once one of 2 ended, want 1", len(more))
		}
	})

	t.Run("QueueSettings/pause", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		insert(t, d, job("q"), job("q"))
		paused := true
		s, err := d.QueueSettingsSet(ctx, droverdriver.QueueSettingsSetParams{Queue: "q", Paused: &paused, Limit: &droverdriver.QueueLimit{MaxRunning: 5}})
		if err != nil || !s.Paused || s.Limit.MaxRunning != 5 {
			t.Fatalf("set: %+v, %v; want paused with a limit of 5", s, err)
		}
		rows, err := d.JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute, Limited: true})
		if err != nil || len(rows) != 0 {
			t.Fatalf("limited claim of a paused queue took %d jobs, %v; want none", len(rows), err)
		}
		// A nil Paused and no Limit keep what is stored.
		if s, err = d.QueueSettingsSet(ctx, droverdriver.QueueSettingsSetParams{Queue: "q"}); err != nil || !s.Paused || s.Limit.MaxRunning != 5 {
			t.Fatalf("set nothing: %+v, %v; want the stored settings kept", s, err)
		}
		paused = false
		if _, err = d.QueueSettingsSet(ctx, droverdriver.QueueSettingsSetParams{Queue: "q", Paused: &paused}); err != nil {
			t.Fatal(err)
		}
		list, err := d.QueueSettingsList(ctx)
		if err != nil || len(list) != 1 || list[0].Queue != "q" || list[0].Paused || list[0].Limit.MaxRunning != 5 {
			t.Fatalf("list: %+v, %v; want q resumed with its limit", list, err)
		}
		if rows, err = d.JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute, Limited: true}); err != nil || len(rows) != 2 {
			t.Fatalf("claim after resume took %d jobs, %v; want 2", len(rows), err)
		}
	})
}
