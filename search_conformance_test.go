package drover_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// searchJobs is the set of jobs TestJobSearch searches: one per name, in
// insert order, each in the state its name says.
type searchJobs struct {
	ids   map[string]int64
	names []string // in insert (ID) order
	rows  map[string]*drovertype.JobRow
	// claimedAt is just before the claims, finishedFrom just before the
	// first job finished.
	claimedAt, finishedFrom time.Time
}

// setupSearch inserts jobs of several kinds, queues, args, metadata and
// tags, and brings them to every state: scheduled, available, running,
// retryable, completed, cancelled and discarded.
func setupSearch(t *testing.T, b *bundle) *searchJobs {
	t.Helper()
	ctx := context.Background()
	hour := time.Now().Add(time.Hour)
	js := &searchJobs{ids: map[string]int64{}, rows: map[string]*drovertype.JobRow{}}
	for _, j := range []struct {
		name, kind, args string
		opts             drover.InsertOpts
	}{
		{"ada", "email", `{"to":"ada@example.com","user":{"id":7,"plan":"pro"}}`,
			drover.InsertOpts{Queue: "mail", Tags: []string{"vip"}, Metadata: json.RawMessage(`{"tenant":"acme"}`)}},
		{"grace", "email", `{"to":"grace@example.com","user":{"id":8}}`,
			drover.InsertOpts{Queue: "mail", Tags: []string{"vip", "eu"}, Metadata: json.RawMessage(`{"tenant":"initech"}`)}},
		{"report", "report", `{"day":"2026-11-21","n":1}`,
			drover.InsertOpts{Queue: "reports", Metadata: json.RawMessage(`{"tenant":"acme","source":{"periodic":"daily"}}`)}},
		{"report2", "report", `{"day":"2026-11-22","n":1.0,"items":["a","b","c"]}`,
			drover.InsertOpts{Queue: "reports", Tags: []string{"eu"}}},
		{"later", "report", `{"n":2}`, drover.InsertOpts{Queue: "reports", RunAt: hour}},
		{"resize", "resize", `{"image":42,"sizes":[64,128]}`, drover.InsertOpts{Queue: "images", MaxAttempts: 1}},
		{"retry", "resize", `{"image":43}`, drover.InsertOpts{Queue: "images"}},
		{"running", "resize", `{"image":44}`, drover.InsertOpts{Queue: "images"}},
		{"done", "email", `{"to":"linus@example.com"}`, drover.InsertOpts{Queue: "outbox"}},
		{"cancelled", "email", `{"to":"x@example.com"}`, drover.InsertOpts{Queue: "mail"}},
	} {
		opts := j.opts
		js.ids[j.name] = b.insert(t, drover.RawArgs{KindName: j.kind, JSON: json.RawMessage(j.args)}, &opts)
		js.names = append(js.names, j.name)
	}
	js.claimedAt = time.Now()
	claim := func(queue string, n int) []*drovertype.JobRow {
		rows, err := b.remote.Claim(ctx, drover.ClaimParams{Queue: queue, Max: n, Owner: "w", Lease: time.Hour})
		if err != nil || len(rows) != n {
			t.Fatalf("claim %s: %d rows, %v", queue, len(rows), err)
		}
		return rows
	}
	images, outbox := claim("images", 3), claim("outbox", 1)
	js.finishedFrom = time.Now()
	if _, err := b.remote.Finish(ctx, []drover.AttemptResult{
		{ID: images[0].ID, Attempt: 1, LeaseToken: images[0].LeaseToken, Outcome: drover.AttemptFailed, Error: "image 42 not found"},
		{ID: images[1].ID, Attempt: 1, LeaseToken: images[1].LeaseToken, Outcome: drover.AttemptFailed, Error: "later", RetryAt: hour},
		{ID: outbox[0].ID, Attempt: 1, LeaseToken: outbox[0].LeaseToken, Outcome: drover.AttemptCompleted},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.JobCancel(ctx, js.ids["cancelled"]); err != nil {
		t.Fatal(err)
	}
	want := map[string]drovertype.JobState{"ada": drovertype.JobStateAvailable, "grace": drovertype.JobStateAvailable,
		"report": drovertype.JobStateAvailable, "report2": drovertype.JobStateAvailable, "later": drovertype.JobStateScheduled,
		"resize": drovertype.JobStateDiscarded, "retry": drovertype.JobStateRetryable, "running": drovertype.JobStateRunning,
		"done": drovertype.JobStateCompleted, "cancelled": drovertype.JobStateCancelled}
	for name, id := range js.ids {
		row, err := b.client.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if row.State != want[name] {
			t.Fatalf("job %s is %s, want %s", name, row.State, want[name])
		}
		js.rows[name] = row
	}
	return js
}

// anyKind lets a test insert jobs of kinds that no worker runs here, as
// a client that only enqueues does.
func anyKind(c *drover.Config) { c.Workers, c.Queues = nil, nil }

// where returns the names of the jobs keep accepts, in ID order.
func (js *searchJobs) where(keep func(*drovertype.JobRow) bool) []string {
	var out []string
	for _, n := range js.names {
		if keep(js.rows[n]) {
			out = append(out, n)
		}
	}
	return out
}

// TestJobSearch searches the same jobs on each store by every filter
// (states, queue, kind, tags, args and metadata containment, each time
// range, and combinations), oldest and newest first, paging by two and by
// a scan bound of three IDs, and counts them: every way must list exactly
// the jobs the case names, in order, and count them exactly.
func TestJobSearch(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		b := setup(t, s, 1, anyKind)
		js := setupSearch(t, b)
		st := func(states ...drovertype.JobState) []drovertype.JobState { return states }
		raw := func(s string) json.RawMessage { return json.RawMessage(s) }
		created := func(name string) time.Time { return js.rows[name].CreatedAt }
		tests := []struct {
			name string
			p    drover.JobListParams
			want []string
		}{
			{"all", drover.JobListParams{}, js.names},
			{"kind", drover.JobListParams{Kind: "email"}, []string{"ada", "grace", "done", "cancelled"}},
			{"queue", drover.JobListParams{Queue: "reports"}, []string{"report", "report2", "later"}},
			{"available", drover.JobListParams{States: st(drovertype.JobStateAvailable)}, []string{"ada", "grace", "report", "report2"}},
			{"scheduled", drover.JobListParams{States: st(drovertype.JobStateScheduled)}, []string{"later"}},
			{"retryable", drover.JobListParams{States: st(drovertype.JobStateRetryable)}, []string{"retry"}},
			{"running or completed", drover.JobListParams{States: st(drovertype.JobStateRunning, drovertype.JobStateCompleted)}, []string{"running", "done"}},
			{"finished", drover.JobListParams{States: st(drovertype.JobStateCompleted, drovertype.JobStateCancelled, drovertype.JobStateDiscarded)},
				[]string{"resize", "done", "cancelled"}},
			{"args: one key", drover.JobListParams{Args: raw(`{"to":"ada@example.com"}`)}, []string{"ada"}},
			{"args: nested", drover.JobListParams{Args: raw(`{"user":{"id":7}}`)}, []string{"ada"}},
			{"args: nested, two keys", drover.JobListParams{Args: raw(`{"user":{"plan":"pro","id":7}}`)}, []string{"ada"}},
			{"args: nested, no match", drover.JobListParams{Args: raw(`{"user":{"id":9}}`)}, nil},
			{"args: numbers by value", drover.JobListParams{Args: raw(`{"n":1}`)}, []string{"report", "report2"}},
			{"args: array subset in any order", drover.JobListParams{Args: raw(`{"items":["c","a"]}`)}, []string{"report2"}},
			{"args: a nested array does not contain a scalar", drover.JobListParams{Args: raw(`{"items":"a"}`)}, nil},
			{"args: of a finished job", drover.JobListParams{Args: raw(`{"sizes":[128]}`)}, []string{"resize"}},
			{"args: empty object", drover.JobListParams{Args: raw(`{}`)}, js.names},
			{"metadata", drover.JobListParams{Metadata: raw(`{"tenant":"acme"}`)}, []string{"ada", "report"}},
			{"metadata: nested", drover.JobListParams{Metadata: raw(`{"source":{"periodic":"daily"}}`)}, []string{"report"}},
			{"tag", drover.JobListParams{Tags: []string{"vip"}}, []string{"ada", "grace"}},
			{"every tag", drover.JobListParams{Tags: []string{"eu", "vip"}}, []string{"grace"}},
			{"tag eu", drover.JobListParams{Tags: []string{"eu"}}, []string{"grace", "report2"}},
			{"all together", drover.JobListParams{Kind: "email", Queue: "mail", Tags: []string{"vip"},
				Metadata: raw(`{"tenant":"initech"}`), States: st(drovertype.JobStateAvailable)}, []string{"grace"}},
			{"args and state", drover.JobListParams{Args: raw(`{"image":43}`), States: st(drovertype.JobStateRetryable)}, []string{"retry"}},
			{"args and the wrong state", drover.JobListParams{Args: raw(`{"image":43}`), States: st(drovertype.JobStateRunning)}, nil},
			{"scheduled from", drover.JobListParams{Scheduled: drovertype.TimeRange{From: time.Now().Add(30 * time.Minute)}},
				[]string{"later", "retry"}},
			{"scheduled to", drover.JobListParams{Scheduled: drovertype.TimeRange{To: js.claimedAt}, Queue: "images"},
				[]string{"resize", "running"}},
			{"attempted", drover.JobListParams{Attempted: drovertype.TimeRange{From: js.claimedAt}},
				[]string{"resize", "retry", "running", "done"}},
			{"attempted before the claims", drover.JobListParams{Attempted: drovertype.TimeRange{To: js.claimedAt}}, nil},
			{"finished", drover.JobListParams{Finished: drovertype.TimeRange{From: js.finishedFrom}}, []string{"resize", "done", "cancelled"}},
			{"finished, completed", drover.JobListParams{Finished: drovertype.TimeRange{From: js.finishedFrom},
				States: st(drovertype.JobStateCompleted)}, []string{"done"}},
			{"finished before", drover.JobListParams{Finished: drovertype.TimeRange{To: js.finishedFrom}}, nil},
			{"created in a range", drover.JobListParams{Created: drovertype.TimeRange{From: created("report2"), To: created("resize")}},
				js.where(func(j *drovertype.JobRow) bool {
					return !j.CreatedAt.Before(created("report2")) && j.CreatedAt.Before(created("resize"))
				})},
			{"created from", drover.JobListParams{Created: drovertype.TimeRange{From: created("done")}},
				js.where(func(j *drovertype.JobRow) bool { return !j.CreatedAt.Before(created("done")) })},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				want := make([]int64, len(tc.want))
				for i, n := range tc.want {
					want[i] = js.ids[n]
				}
				reversed := slices.Clone(want)
				slices.Reverse(reversed)
				for _, way := range []struct {
					name        string
					newestFirst bool
					limit       int
					scan        int64
					want        []int64
				}{
					{"one page", false, 100, 0, want},
					{"newest first", true, 100, 0, reversed},
					{"pages of two", false, 2, 0, want},
					{"newest first, pages of two", true, 2, 0, reversed},
					{"scan bound of three", false, 100, 3, want},
					{"newest first, scan bound of three", true, 100, 3, reversed},
				} {
					p := tc.p
					p.NewestFirst, p.Limit, p.Scan = way.newestFirst, way.limit, way.scan
					got := searchAll(t, b.client, p)
					if !slices.Equal(got, way.want) {
						t.Errorf("%s: listed %v, want %v (%v)", way.name, got, way.want, tc.want)
					}
				}
				if jobs, err := b.client.JobList(ctx, tc.p); err != nil || !slices.Equal(idsOf(jobs), want) {
					t.Errorf("JobList: %v, %v; want %v", idsOf(jobs), err, want)
				}
				n, err := b.client.JobCount(ctx, tc.p)
				if err != nil {
					t.Fatal(err)
				}
				if n.Count != int64(len(want)) || !n.Exact {
					t.Errorf("count %+v, want exactly %d", n, len(want))
				}
				// The state tabs: the filter's jobs counted by state,
				// its own states left out of the filter.
				if len(tc.p.States) == 0 {
					counts, err := b.client.JobStateCounts(ctx, tc.p)
					if err != nil {
						t.Fatal(err)
					}
					wantCounts := map[drovertype.JobState]drover.JobCount{}
					for _, st := range drovertype.JobStates() {
						wantCounts[st] = drover.JobCount{Exact: true}
					}
					for _, name := range tc.want {
						c := wantCounts[js.rows[name].State]
						c.Count++
						wantCounts[js.rows[name].State] = c
					}
					if !maps.Equal(counts, wantCounts) {
						t.Errorf("state counts %v, want %v", counts, wantCounts)
					}
				}
			})
		}
	})
}

// searchAll follows JobSearch's pages from p to the end and returns the
// IDs listed, checking on the way that no page is longer than its limit
// or read more IDs than its scan bound.
func searchAll(t *testing.T, c client, p drover.JobListParams) []int64 {
	t.Helper()
	var out []int64
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatalf("no end after %d pages from %+v", pages, p)
		}
		page, err := c.JobSearch(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Jobs) > p.Limit {
			t.Fatalf("a page of %d jobs, limit %d", len(page.Jobs), p.Limit)
		}
		if p.Scan > 0 && page.Scanned > p.Scan {
			t.Fatalf("a page read %d IDs with a scan bound of %d", page.Scanned, p.Scan)
		}
		out = append(out, idsOf(page.Jobs)...)
		if page.Next == 0 {
			return out
		}
		p.After = page.Next
	}
}

func idsOf(jobs []*drovertype.JobRow) []int64 {
	out := make([]int64, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

// TestJobSearchInvalid: a filter that cannot be meant is refused with an
// error that names it, before any statement runs.
func TestJobSearchInvalid(t *testing.T) {
	b := setup(t, sqliteStore, 1, anyKind)
	now := time.Now()
	for _, tc := range []struct {
		name string
		p    drover.JobListParams
	}{
		{"args not an object", drover.JobListParams{Args: json.RawMessage(`[1]`)}},
		{"args not JSON", drover.JobListParams{Args: json.RawMessage(`{to:`)}},
		{"metadata null", drover.JobListParams{Metadata: json.RawMessage(`null`)}},
		{"state", drover.JobListParams{States: []drovertype.JobState{"done"}}},
		{"tag with a comma", drover.JobListParams{Tags: []string{"a,b"}}},
		{"empty tag", drover.JobListParams{Tags: []string{""}}},
		{"range backwards", drover.JobListParams{Created: drovertype.TimeRange{From: now, To: now.Add(-time.Second)}}},
		{"negative cursor", drover.JobListParams{After: -1}},
		{"NUL in a tag", drover.JobListParams{Tags: []string{"a\x00"}}},
		{"NUL in the kind", drover.JobListParams{Kind: "a\x00"}},
		{`\u0000 in args`, drover.JobListParams{Args: json.RawMessage(`{"a":"\u0000"}`)}},
		{"limit", drover.JobListParams{Limit: 10_001}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := b.client.JobSearch(context.Background(), tc.p); !errors.Is(err, drover.ErrInvalid) {
				t.Errorf("JobSearch: %v, want ErrInvalid", err)
			}
			if _, err := b.client.JobCount(context.Background(), tc.p); !errors.Is(err, drover.ErrInvalid) && tc.name != "limit" && tc.name != "negative cursor" {
				t.Errorf("JobCount: %v, want ErrInvalid", err)
			}
		})
	}
}
