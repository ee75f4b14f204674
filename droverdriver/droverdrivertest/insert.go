package droverdrivertest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

func testInsert(t *testing.T, setup opener) {
	t.Run("JobInsertMany/ids in input order", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		// Sizes around the chunks a driver may cut a batch into: each ID
		// must still name its own job.
		total := 0
		for _, n := range []int{1, 7, 500, 1234} {
			in := make([]droverdriver.InsertParams, n)
			for i := range in {
				in[i] = with(job("q"), func(p *droverdriver.InsertParams) { p.Args = fmt.Appendf(nil, `{"i":%d}`, i) })
			}
			got := insert(t, d.Executor(), in...)
			total += n
			for i, id := range got {
				if i > 0 && id <= got[i-1] {
					t.Fatalf("%d jobs: IDs not ascending at %d: %v", n, i, got[i-1:i+1])
				}
				if i%97 == 0 || i == n-1 {
					if j := get(t, d.Executor(), id); !jsonEqual(j.EncodedArgs, in[i].Args) {
						t.Fatalf("%d jobs: ID %d holds %s, want %s", n, id, j.EncodedArgs, in[i].Args)
					}
				}
			}
		}
		if n, err := d.Executor().JobCountByState(context.Background(), "q"); err != nil || n[drovertype.JobStateAvailable] != int64(total) {
			t.Fatalf("counts %v, %v; want %d available", n, err, total)
		}
	})

	t.Run("JobInsertMany/round trip", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		runAt := time.Date(2030, 1, 2, 3, 4, 5, 678912345, time.UTC)
		in := droverdriver.InsertParams{
			Queue: "q\"uote", Kind: "kind\\\n\t", Args: []byte(`{"s": "é \u0001 \"x\"", "n": [1, 2]}`),
			Metadata: []byte(`{"m": true}`), Tags: []string{"a", "b c", `"q"`, "é"}, Priority: 3, MaxAttempts: 7,
			RunAt: runAt, Timeout: 1500 * time.Millisecond,
		}
		before := time.Now()
		j := get(t, d.Executor(), insert(t, d.Executor(), in)[0])
		if j.Queue != in.Queue || j.Kind != in.Kind || j.State != drovertype.JobStateScheduled || j.Priority != 3 ||
			!jsonEqual(j.EncodedArgs, in.Args) || !jsonEqual(j.Metadata, in.Metadata) || !slices.Equal(j.Tags, in.Tags) ||
			j.MaxAttempts != 7 || j.Timeout != in.Timeout || !sameTime(j.RunAt, runAt) {
			t.Fatalf("stored %+v\nfrom %+v", j, in)
		}
		if j.Attempt != 0 || j.AttemptedAt != nil || j.FinalizedAt != nil || j.Errors != nil || j.ErrorCount != 0 ||
			j.LeaseOwner != "" || j.LeaseExpiresAt != nil || j.CancelRequested || j.Key != "" || j.BatchID != 0 || j.Flow != 0 {
			t.Errorf("a new job carries state of an attempt: %+v", j)
		}
		if d := j.CreatedAt.Sub(before); d < -time.Minute || d > time.Minute {
			t.Errorf("created_at %v, inserted at %v", j.CreatedAt, before)
		}
	})

	t.Run("JobInsertMany/defaults", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		j := get(t, d.Executor(), insert(t, d.Executor(), job("q"))[0])
		if string(j.Metadata) != `{}` || j.Tags == nil || len(j.Tags) != 0 || j.Errors != nil {
			t.Fatalf("a job inserted without metadata or tags: metadata %s tags %#v errors %v; want {}, [] and none", j.Metadata, j.Tags, j.Errors)
		}
	})

	t.Run("JobInsertMany/scheduled or available", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		now := time.Now()
		got := insert(t, d.Executor(),
			job("q"),
			with(job("q"), func(p *droverdriver.InsertParams) { p.RunAt = now.Add(-time.Hour) }),
			with(job("q"), func(p *droverdriver.InsertParams) { p.RunAt = now.Add(time.Hour) }),
		)
		wantState(t, d.Executor(), map[int64]drovertype.JobState{
			got[0]: drovertype.JobStateAvailable, got[1]: drovertype.JobStateAvailable, got[2]: drovertype.JobStateScheduled,
		})
		if rows := claim(t, d.Executor(), "q", 10); !slices.Equal(ids(rows), []int64{got[1], got[0]}) {
			t.Fatalf("claimed %v, want the two due jobs, the older run_at first", ids(rows))
		}
	})

	t.Run("JobInsertMany/wakes its queues", func(t *testing.T) {
		t.Parallel()
		// Only that a due job's queue is woken: whether a scheduled one's
		// is too would take a wait for nothing to tell.
		d := setup(t)
		heard := listen(t, d)
		insert(t, d.Executor(), job("a"), job("b"))
		heardOf(t, heard, "a", "b")
	})

	t.Run("RefusalReporter", func(t *testing.T) {
		t.Parallel()
		// Optional: a store that tells refused values from failures says
		// so of a statement whose values it rejected, and of nothing else.
		d := setup(t)
		r, ok := d.Executor().(droverdriver.RefusalReporter)
		if !ok {
			t.Skipf("%s does not report refusals", d.Name())
		}
		if r.Refused(context.Canceled) {
			t.Error("a cancelled context reported as a refusal")
		}
		bad := with(job("q"), func(p *droverdriver.InsertParams) { p.Args = []byte(`{"unterminated`) })
		if _, err := d.Executor().JobInsertMany(context.Background(), []droverdriver.InsertParams{bad}); err != nil && !r.Refused(err) {
			t.Errorf("insert of args that are not JSON failed with %v, not reported as refused", err)
		}
	})

	t.Run("JobInsertMany/unique keys", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			first  droverdriver.InsertParams
			second droverdriver.InsertParams
			stored bool // whether the second is stored
		}{
			{"same kind", unique("q", "k"), unique("q", "k"), false},
			{"same kind, other queue", unique("q", "k"), unique("r", "k"), false},
			{"other kind", unique("q", "k"), with(unique("q", "k"), func(p *droverdriver.InsertParams) { p.Kind = "other" }), true},
			{"other key", unique("q", "k"), unique("q", "l"), true},
			{"by queue, other queue", with(unique("q", "k"), byQueue), with(unique("r", "k"), byQueue), true},
			{"by queue, same queue", with(unique("q", "k"), byQueue), with(unique("q", "k"), byQueue), false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				// In one call, and in a later call.
				d := setup(t)
				got := insert(t, d.Executor(), tc.first, tc.second)
				if got[0] == 0 || (got[1] != 0) != tc.stored {
					t.Fatalf("one call stored %v; want the second stored: %v", got, tc.stored)
				}
				d = setup(t)
				insert(t, d.Executor(), tc.first)
				if later := insert(t, d.Executor(), tc.second); (later[0] != 0) != tc.stored {
					t.Fatalf("a later call stored %v; want stored: %v", later, tc.stored)
				}
				if n, _ := d.Executor().JobCountByState(context.Background(), ""); tc.stored != (n[drovertype.JobStateAvailable] == 2) {
					t.Fatalf("counts %v", n)
				}
			})
		}
	})

	t.Run("JobInsertMany/unique among plain jobs", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		in := []droverdriver.InsertParams{job("q"), unique("q", "k"), job("q"), unique("q", "k"), job("q")}
		for i := range in {
			in[i].Args = fmt.Appendf(nil, `{"i":%d}`, i)
		}
		got := insert(t, d.Executor(), in...)
		if got[0] == 0 || got[1] == 0 || got[2] == 0 || got[3] != 0 || got[4] == 0 {
			t.Fatalf("IDs %v, want every job stored but the second unique one", got)
		}
		// IDs are in input order: each names its own job.
		for i, id := range got {
			if id != 0 && !jsonEqual(get(t, d.Executor(), id).EncodedArgs, in[i].Args) {
				t.Errorf("ID %d at position %d holds %s", id, i, get(t, d.Executor(), id).EncodedArgs)
			}
		}
		// The claim returns which job holds a unique key.
		for _, r := range claim(t, d.Executor(), "q", 10) {
			if (r.Flow&droverdriver.FlowUnique != 0) != (r.ID == got[1]) {
				t.Errorf("claimed job %d with flow %b; only job %d holds a unique key", r.ID, r.Flow, got[1])
			}
		}
	})

	t.Run("JobInsertMany/keys", func(t *testing.T) {
		t.Parallel()
		d := setup(t)
		got := insert(t, d.Executor(), keyed("q", "a"), keyed("q", "a"), keyed("q", "b"),
			with(keyed("q", "c"), func(p *droverdriver.InsertParams) { p.KeyLimit = 2 }),
			with(keyed("q", "c"), func(p *droverdriver.InsertParams) { p.KeyLimit = 2 }),
			with(keyed("q", "c"), func(p *droverdriver.InsertParams) { p.KeyLimit = 2 }),
		)
		wantState(t, d.Executor(), map[int64]drovertype.JobState{
			got[0]: drovertype.JobStateAvailable, got[1]: drovertype.JobStateBlocked, got[2]: drovertype.JobStateAvailable,
			got[3]: drovertype.JobStateAvailable, got[4]: drovertype.JobStateAvailable, got[5]: drovertype.JobStateBlocked,
		})
		if j := get(t, d.Executor(), got[1]); j.Key != "a" {
			t.Errorf("key %q, want a", j.Key)
		}
		// A key is per queue.
		other := insert(t, d.Executor(), keyed("r", "a"))
		wantState(t, d.Executor(), map[int64]drovertype.JobState{other[0]: drovertype.JobStateAvailable})
	})
}

func byQueue(p *droverdriver.InsertParams) { p.UniqueByQueue = true }

// jsonEqual reports whether a and b hold the same JSON value: PostgreSQL's
// jsonb keeps neither spacing nor key order.
func jsonEqual(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
