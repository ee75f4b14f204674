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
	"github.com/droverhq/drover/drovertype"
)

func testClaim(t *testing.T, setup opener) {
	t.Run("JobClaim/order", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		past := time.Now().Add(-time.Hour)
		got := insert(t, d.Executor(),
			with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = 2 }),
			with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = 1 }),
			with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = 1; p.RunAt = past }),
			with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = 1 }),
			with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = 0; p.RunAt = time.Now().Add(time.Hour) }),
			job("other"),
		)
		// Priority first, then run_at, then ID; the scheduled job and the
		// other queue's are not claimable.
		rows := claim(t, d.Executor(), "q", 3)
		if want := []int64{got[2], got[1], got[3]}; !slices.Equal(ids(rows), want) {
			t.Fatalf("claimed %v, want %v", ids(rows), want)
		}
		rows = append(rows, claim(t, d.Executor(), "q", 10)...)
		if want := []int64{got[2], got[1], got[3], got[0]}; !slices.Equal(ids(rows), want) {
			t.Fatalf("claimed %v, want %v", ids(rows), want)
		}
		if more := claim(t, d.Executor(), "q", 10); len(more) != 0 {
			t.Fatalf("claimed the scheduled job: %v", ids(more))
		}
		if n, err := d.Executor().JobCountByState(ctx, "q"); err != nil || n[drovertype.JobStateRunning] != 4 || n[drovertype.JobStateScheduled] != 1 {
			t.Errorf("counts %v, %v; want 4 running and 1 scheduled", n, err)
		}
	})

	t.Run("JobClaim/claimed row", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		past := time.Now().Add(-time.Hour)
		id := insert(t, d.Executor(), with(job("q"), func(p *droverdriver.InsertParams) {
			p.RunAt, p.Args, p.Tags, p.Metadata = past, []byte(`{"n":2}`), []string{"t"}, []byte(`{"m":1}`)
		}))[0]
		j := claimAs(t, d.Executor(), "owner-1", "q", 1, time.Minute)[0]
		if j.ID != id || j.State != drovertype.JobStateRunning || j.Attempt != 1 || j.LeaseOwner != "owner-1" ||
			j.AttemptedAt == nil || j.LeaseExpiresAt == nil || j.FinalizedAt != nil || j.CancelRequested {
			t.Fatalf("claimed row %+v", j)
		}
		// PostgreSQL's now() is the transaction's start; the expiry may
		// come from a later clock reading of the same statement.
		if lease := j.LeaseExpiresAt.Sub(*j.AttemptedAt); lease < time.Minute-time.Second || lease > time.Minute+time.Second {
			t.Errorf("lease runs %v from the attempt's start, want 1m", lease)
		}
		if !sameTime(j.RunAt, past) || !jsonEqual(j.EncodedArgs, []byte(`{"n":2}`)) || !jsonEqual(j.Metadata, []byte(`{"m":1}`)) ||
			!slices.Equal(j.Tags, []string{"t"}) || j.Errors != nil {
			t.Errorf("payload run_at %v args %s metadata %s tags %v errors %v", j.RunAt, j.EncodedArgs, j.Metadata, j.Tags, j.Errors)
		}
		stored := get(t, d.Executor(), id)
		if stored.State != drovertype.JobStateRunning || stored.Attempt != 1 || stored.LeaseOwner != "owner-1" ||
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
		ids := insert(t, d.Executor(), jobs...)
		rows := claim(t, d.Executor(), "q", n)
		if len(rows) != n {
			t.Fatalf("claimed %d rows, want %d", len(rows), n)
		}
		byID := map[int64]int{}
		for i, id := range ids {
			byID[id] = i
		}
		for _, j := range rows {
			j.EncodedArgs = append(j.EncodedArgs, "xxxx"...) // must not reach another row
		}
		for _, j := range rows {
			i, ok := byID[j.ID]
			want := jobs[i]
			args, appended := strings.CutSuffix(string(j.EncodedArgs), "xxxx")
			if !ok || j.Kind != want.Kind || !appended || !jsonEqual([]byte(args), want.Args) || !jsonEqual(j.Metadata, want.Metadata) ||
				!slices.Equal(j.Tags, want.Tags) || j.Priority != want.Priority || j.MaxAttempts != want.MaxAttempts || j.Key != want.Key {
				t.Fatalf("row of job %d: kind %q args %s metadata %s tags %v priority %d max attempts %d key %q; want %+v",
					j.ID, j.Kind, j.EncodedArgs, j.Metadata, j.Tags, j.Priority, j.MaxAttempts, j.Key, want)
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
		insert(t, d.Executor(), job("q"), job("q"), job("q"), job("q"), job("q"))
		for _, tc := range []struct{ max, want int }{{2, 2}, {1, 1}, {10, 2}, {10, 0}} {
			if rows := claim(t, d.Executor(), "q", tc.max); len(rows) != tc.want {
				t.Fatalf("claim of at most %d: %d rows, want %d", tc.max, len(rows), tc.want)
			}
		}
	})

	t.Run("JobClaim/lease token", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		insert(t, d.Executor(), job("q"), job("q"), job("q"))
		first, second := claim(t, d.Executor(), "q", 2), claim(t, d.Executor(), "q", 1)
		tok := first[0].LeaseToken
		if tok.IsZero() || first[1].LeaseToken != tok {
			t.Fatalf("one claim handed out tokens %v and %v; want one non-zero token for all its rows", tok, first[1].LeaseToken)
		}
		if second[0].LeaseToken.IsZero() || second[0].LeaseToken == tok {
			t.Fatalf("a second claim handed out %v (first %v); want a fresh token", second[0].LeaseToken, tok)
		}
		// Reads never show it: anyone allowed to read jobs could finish them.
		if j := get(t, d.Executor(), first[0].ID); !j.LeaseToken.IsZero() {
			t.Errorf("JobGet returned the lease token")
		}
		listed, err := d.Executor().JobList(ctx, droverdriver.ListParams{Limit: 10})
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
			token drovertype.LeaseToken
			lost  bool
		}{{tok, false}, {second[0].LeaseToken, true}} {
			res, err := d.Executor().JobHeartbeat(ctx, droverdriver.HeartbeatParams{IDs: []int64{first[1].ID}, Attempts: []int{1},
				Tokens: []drovertype.LeaseToken{tc.token}, Lease: time.Minute})
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
		insert(t, d.Executor(), in...)
		var mu sync.Mutex
		seen := make(map[int64]int, total)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Go(func() {
				for {
					rows, err := d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 37, Owner: fmt.Sprint("w", i), Lease: time.Minute})
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
		got := insert(t, d.Executor(),
			with(job("q"), func(p *droverdriver.InsertParams) { p.Priority = 1 }),
			job("q"), job("q"), job("q"))
		head := get(t, d.Executor(), got[2])
		rows, err := d.Executor().JobClaim(context.Background(), named(droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute,
			After: &droverdriver.ClaimPosition{Priority: head.Priority, RunAt: head.RunAt, ID: head.ID}}, false))
		if err != nil {
			t.Fatal(err)
		}
		if want := []int64{got[3], got[0]}; !slices.Equal(ids(rows), want) {
			t.Fatalf("claimed %v past job %d, want %v", ids(rows), head.ID, want)
		}
	})

	// Claims by kind: in each run, the cases claim one after the other
	// from the jobs of kinds a, b, c, a, b, c, so each case also shows
	// what the ones before it left.
	for _, run := range []struct {
		name  string
		cases []kindsCase
	}{
		{"JobClaim/kinds", []kindsCase{
			{"none of them", []string{}, nil, -1, nil},
			{"a kind nothing has", []string{"z"}, nil, -1, nil},
			{"two of three, past a position", []string{"a", "c"}, nil, 0, []int{2, 3, 5}},
			{"the rest of a", []string{"a"}, nil, -1, []int{0}},
			{"every kind", nil, nil, -1, []int{1, 4}},
		}},
		{"JobClaim/except kinds", []kindsCase{
			{"every kind but a and b, past a position", nil, []string{"a", "b"}, 2, []int{5}},
			{"named kinds but the excepted", []string{"a", "c"}, []string{"c"}, -1, []int{0, 3}},
			{"every named kind excepted", []string{"b"}, []string{"b"}, -1, nil},
			{"every kind but b", nil, []string{"b"}, -1, []int{2}},
			{"the rest", nil, nil, -1, []int{1, 4}},
		}},
	} {
		t.Run(run.name, func(t *testing.T) {
			t.Parallel()
			d := setup(t)
			kind := func(k string) droverdriver.InsertParams {
				return with(job("q"), func(p *droverdriver.InsertParams) { p.Kind = k })
			}
			got := insert(t, d.Executor(), kind("a"), kind("b"), kind("c"), kind("a"), kind("b"), kind("c"))
			for _, tc := range run.cases {
				p := droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute, Kinds: tc.kinds, ExceptKinds: tc.except}
				if tc.after >= 0 {
					pos := droverdriver.PositionOf(get(t, d.Executor(), got[tc.after]))
					p.After = &pos
				}
				rows, err := d.Executor().JobClaim(context.Background(), named(p, false))
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				var want []int64
				for _, i := range tc.want {
					want = append(want, got[i])
				}
				if !slices.Equal(ids(rows), want) {
					t.Fatalf("%s: claimed %v, want %v", tc.name, ids(rows), want)
				}
			}
		})
	}

	t.Run("JobClaim/now", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		// A clock far from the store's: the claim's Now alone says
		// what is due, and when the attempt starts.
		base := time.Date(2031, 5, 1, 12, 0, 0, 0, time.UTC)
		got := insert(t, d.Executor(),
			with(job("q"), func(p *droverdriver.InsertParams) { p.RunAt = base.Add(time.Hour) }),
			with(job("q"), func(p *droverdriver.InsertParams) { p.RunAt = base }),
			with(job("q"), func(p *droverdriver.InsertParams) { p.RunAt = base.Add(2 * time.Hour) }),
		)
		for _, tc := range []struct {
			name string
			now  time.Time
			want []int64
		}{
			{"the store's clock, years before", time.Time{}, nil},
			{"a minute before the first", base.Add(-time.Minute), nil},
			{"at the first", base, []int64{got[1]}},
			{"an hour on, past a position", base.Add(90 * time.Minute), []int64{got[0]}},
			{"two hours on", base.Add(2 * time.Hour), []int64{got[2]}},
		} {
			p := droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute, Now: tc.now}
			if tc.name == "an hour on, past a position" {
				pos := droverdriver.PositionOf(get(t, d.Executor(), got[1]))
				p.After = &pos
			}
			rows, err := d.Executor().JobClaim(context.Background(), named(p, false))
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !slices.Equal(ids(rows), tc.want) {
				t.Fatalf("%s: claimed %v, want %v", tc.name, ids(rows), tc.want)
			}
			for _, r := range rows {
				if r.AttemptedAt == nil || !sameTime(*r.AttemptedAt, tc.now) {
					t.Errorf("%s: job %d attempted at %v, want the claim's now %v", tc.name, r.ID, r.AttemptedAt, tc.now)
				}
				// The lease runs by the real clock, which heartbeats
				// and the rescuer read.
				if r.LeaseExpiresAt == nil || time.Until(*r.LeaseExpiresAt) < 30*time.Second || time.Until(*r.LeaseExpiresAt) > 2*time.Minute {
					t.Errorf("%s: job %d's lease expires at %v, want a minute from the real now", tc.name, r.ID, r.LeaseExpiresAt)
				}
			}
		}
	})

	t.Run("QueueKnown", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		known := func(queue string) bool {
			t.Helper()
			ok, err := d.Executor().QueueKnown(ctx, queue)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if known("waiting") || known("settled") || known("worked") || known("done") {
			t.Fatal("an empty store knows queues")
		}
		insert(t, d.Executor(), job("waiting"), job("done"))
		if _, err := d.Executor().QueueSettingsSet(ctx, droverdriver.QueueSettingsSetParams{Queue: "settled", Paused: new(true)}); err != nil {
			t.Fatal(err)
		}
		if err := d.Executor().WorkerSeen(ctx, []drovertype.WorkerRecord{{Name: "w", Plain: true, Queues: []string{"other", "worked"}, Owner: "w", Source: "go"}}); err != nil {
			t.Fatal(err)
		}
		rows, err := d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "done", Max: 1, Owner: "w", Lease: time.Minute})
		if err != nil || len(rows) != 1 {
			t.Fatalf("claim: %d rows, %v", len(rows), err)
		}
		finish(t, d.Executor(), result(rows[0], droverdriver.OutcomeCompleted))
		for _, q := range []string{"waiting", "settled", "worked", "done"} {
			if !known(q) {
				t.Errorf("queue %s is not known", q)
			}
		}
		if known("typo") || known("wor") {
			t.Error("a queue never used is known")
		}
	})

	t.Run("JobClaim/queue limit", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		if s, err := d.Executor().QueueSettingsGet(ctx, "q"); err != nil || s != nil {
			t.Fatalf("settings of a queue never set: %+v, %v; want none", s, err)
		}
		insert(t, d.Executor(), job("q"), job("q"), job("q"), job("q"))
		if _, err := d.Executor().QueueSettingsSet(ctx, droverdriver.QueueSettingsSetParams{Queue: "q", Limit: &drovertype.QueueLimit{MaxRunning: 2}}); err != nil {
			t.Fatal(err)
		}
		claimLimited := func() []*drovertype.JobRow {
			t.Helper()
			rows, err := d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute, Limited: true})
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
		if s, err := d.Executor().QueueSettingsGet(ctx, "q"); err != nil || s == nil || s.Limit.MaxRunning != 2 {
			t.Fatalf("stored settings %+v, %v; want a limit of 2 running", s, err)
		}
		finish(t, d.Executor(), result(first[0], droverdriver.OutcomeCompleted))
		if more := claimLimited(); len(more) != 1 {
			t.Fatalf("claimed %d once one of 2 ended, want 1", len(more))
		}
	})

	t.Run("QueueSettings/pause", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		insert(t, d.Executor(), job("q"), job("q"))
		paused := true
		s, err := d.Executor().QueueSettingsSet(ctx, droverdriver.QueueSettingsSetParams{Queue: "q", Paused: &paused, Limit: &drovertype.QueueLimit{MaxRunning: 5}})
		if err != nil || !s.Paused || s.Limit.MaxRunning != 5 {
			t.Fatalf("set: %+v, %v; want paused with a limit of 5", s, err)
		}
		rows, err := d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute, Limited: true})
		if err != nil || len(rows) != 0 {
			t.Fatalf("limited claim of a paused queue took %d jobs, %v; want none", len(rows), err)
		}
		// A nil Paused and no Limit keep what is stored.
		if s, err = d.Executor().QueueSettingsSet(ctx, droverdriver.QueueSettingsSetParams{Queue: "q"}); err != nil || !s.Paused || s.Limit.MaxRunning != 5 {
			t.Fatalf("set nothing: %+v, %v; want the stored settings kept", s, err)
		}
		paused = false
		if _, err = d.Executor().QueueSettingsSet(ctx, droverdriver.QueueSettingsSetParams{Queue: "q", Paused: &paused}); err != nil {
			t.Fatal(err)
		}
		list, err := d.Executor().QueueSettingsList(ctx)
		if err != nil || len(list) != 1 || list[0].Queue != "q" || list[0].Paused || list[0].Limit.MaxRunning != 5 {
			t.Fatalf("list: %+v, %v; want q resumed with its limit", list, err)
		}
		if rows, err = d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: "q", Max: 10, Owner: "w", Lease: time.Minute, Limited: true}); err != nil || len(rows) != 2 {
			t.Fatalf("claim after resume took %d jobs, %v; want 2", len(rows), err)
		}
	})

	t.Run("QueueSettings/paused kinds", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		paused := true
		steps := []struct {
			name       string
			set        droverdriver.QueueSettingsSetParams
			want       []string
			wantPaused bool
		}{
			{"pause two kinds of a queue with no row", droverdriver.QueueSettingsSetParams{PauseKinds: []string{"b", "a", "b"}}, []string{"a", "b"}, false},
			{"pause a third, and one again", droverdriver.QueueSettingsSetParams{PauseKinds: []string{"c", "a"}}, []string{"a", "b", "c"}, false},
			{"pause the queue: kinds kept", droverdriver.QueueSettingsSetParams{Paused: &paused}, []string{"a", "b", "c"}, true},
			{"resume one and one never paused", droverdriver.QueueSettingsSetParams{ResumeKinds: []string{"b", "z"}}, []string{"a", "c"}, true},
			{"pause and resume one at once: resumed", droverdriver.QueueSettingsSetParams{PauseKinds: []string{"d"}, ResumeKinds: []string{"d", "a"}}, []string{"c"}, true},
			{"resume the last", droverdriver.QueueSettingsSetParams{ResumeKinds: []string{"c"}}, nil, true},
		}
		for _, st := range steps {
			st.set.Queue = "q"
			s, err := d.Executor().QueueSettingsSet(ctx, st.set)
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if !slices.Equal(s.PausedKinds, st.want) || s.Paused != st.wantPaused {
				t.Fatalf("%s: returned paused %v, kinds %q; want %v, %q", st.name, s.Paused, s.PausedKinds, st.wantPaused, st.want)
			}
			got, err := d.Executor().QueueSettingsGet(ctx, "q")
			if err != nil || !slices.Equal(got.PausedKinds, st.want) || got.Paused != st.wantPaused {
				t.Fatalf("%s: stored %+v, %v; want paused %v, kinds %q", st.name, got, err, st.wantPaused, st.want)
			}
		}
		list, err := d.Executor().QueueSettingsList(ctx)
		if err != nil || len(list) != 1 || list[0].PausedKinds != nil || !list[0].Paused {
			t.Fatalf("list: %+v, %v; want q paused with no paused kinds", list, err)
		}
	})
}

// kindsCase is one claim of the JobClaim/kinds tests: the claim's Kinds
// and ExceptKinds, the index of the job to claim past (-1 for none), and
// the indexes of the jobs it must take, in claim order.
type kindsCase struct {
	name          string
	kinds, except []string
	after         int
	want          []int
}
