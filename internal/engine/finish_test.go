package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// store is a fake Executor that records the calls the engine makes and
// answers from stored rows: a result applies when its job is in jobs and
// the job's stored flow has no refused bit.
type store struct {
	droverdriver.Executor // only the FinishExecutor methods are called
	jobs                  map[int64]droverdriver.FinishedRow
	calls                 []string
	// partial makes JobFinishMany behave as SQLite's plain path: when some
	// result is turned away, it applies none.
	partial bool
	settled []int64
	keys    droverdriver.KeyParams
	freed   []int64
}

func (s *store) Tx(ctx context.Context, fn func(context.Context, droverdriver.Executor) error) error {
	s.calls = append(s.calls, "Tx")
	return fn(ctx, s)
}

func (s *store) JobFinishMany(_ context.Context, p droverdriver.FinishParams) (droverdriver.FinishResult, error) {
	s.calls = append(s.calls, "JobFinishMany")
	return s.finish(p), nil
}

func (s *store) finish(p droverdriver.FinishParams) droverdriver.FinishResult {
	var res droverdriver.FinishResult
	for _, r := range p.Results {
		if row, ok := s.jobs[r.ID]; ok && row.Flow&p.Refuse == 0 {
			res.Applied = append(res.Applied, row)
		}
	}
	res.All = len(res.Applied) == len(p.Results)
	if !res.All && s.partial && p.Refuse != 0 {
		return droverdriver.FinishResult{}
	}
	for _, row := range res.Applied {
		delete(s.jobs, row.ID)
	}
	return res
}

func (s *store) JobFinishKeyedMany(_ context.Context, p droverdriver.FinishParams, keys droverdriver.KeyParams) (droverdriver.FinishResult, error) {
	s.calls = append(s.calls, "JobFinishKeyedMany")
	s.keys.Keys = append(s.keys.Keys, keys.Keys...)
	return s.finish(p), nil
}

func (s *store) JobFlowSettle(_ context.Context, p droverdriver.SettleParams) (droverdriver.KeyParams, error) {
	s.calls = append(s.calls, "JobFlowSettle")
	s.settled = append(s.settled, p.IDs...)
	return droverdriver.KeyParams{Queues: []string{"q"}, Keys: []string{"released"}}, nil
}

func (s *store) KeyLock(context.Context, droverdriver.KeyParams) error {
	s.calls = append(s.calls, "KeyLock")
	return nil
}

func (s *store) KeyPromote(_ context.Context, keys droverdriver.KeyParams) (int, error) {
	s.calls = append(s.calls, "KeyPromote")
	s.keys.Keys = append(s.keys.Keys, keys.Keys...)
	s.keys.Retried = append(s.keys.Retried, keys.Retried...)
	return 0, nil
}

func (s *store) UniqueRelease(_ context.Context, ids []int64) error {
	s.calls = append(s.calls, "UniqueRelease")
	s.freed = append(s.freed, ids...)
	return nil
}

// TestFinish checks which statements the engine runs for a batch, from
// the claimed flow the results carry and the flow the store holds: plain
// batches stay one statement, keyed batches with known keys one round
// trip, and everything else goes through the side path in the documented
// order, deciding from the stored rows. A batch is never split.
func TestFinish(t *testing.T) {
	done := func(id int64) droverdriver.Result {
		return droverdriver.Result{ID: id, Attempt: 1, Outcome: droverdriver.OutcomeCompleted}
	}
	with := func(r droverdriver.Result, f func(*droverdriver.Result)) droverdriver.Result { f(&r); return r }
	keyed := func(r *droverdriver.Result) { r.Flow, r.Key, r.Queue = droverdriver.FlowKeyed, "k", "q" }
	row := func(id int64, flow int, key string) droverdriver.FinishedRow {
		return droverdriver.FinishedRow{ID: id, State: drovertype.JobStateCompleted, Flow: flow, Queue: "q", Key: key}
	}
	tests := []struct {
		name     string
		jobs     []droverdriver.FinishedRow
		partial  bool
		results  []droverdriver.Result
		calls    string
		accepted []int64
		settled  []int64
		keys     []string
		freed    []int64
		retried  []int64
	}{
		{name: "plain batch", jobs: []droverdriver.FinishedRow{row(1, 0, ""), row(2, 0, "")},
			results: []droverdriver.Result{done(1), done(2)},
			calls:   "JobFinishMany", accepted: []int64{1, 2}},
		{name: "stale plain result", jobs: []droverdriver.FinishedRow{row(1, 0, "")},
			results: []droverdriver.Result{done(1), done(2)},
			calls:   "JobFinishMany Tx JobFinishMany", accepted: []int64{1}},
		{name: "stale plain result, store applies none", partial: true, jobs: []droverdriver.FinishedRow{row(1, 0, "")},
			results: []droverdriver.Result{done(1), done(2)},
			calls:   "JobFinishMany Tx JobFinishMany", accepted: []int64{1}},
		{name: "keyed batch from Go workers", jobs: []droverdriver.FinishedRow{row(1, droverdriver.FlowKeyed, "k")},
			results: []droverdriver.Result{with(done(1), keyed)},
			calls:   "JobFinishKeyedMany", accepted: []int64{1}, keys: []string{"k"}},
		{name: "keyed and plain results from Go workers", jobs: []droverdriver.FinishedRow{row(1, droverdriver.FlowKeyed, "k"), row(2, 0, "")},
			results: []droverdriver.Result{with(done(1), keyed), done(2)},
			calls:   "JobFinishKeyedMany", accepted: []int64{1, 2}, keys: []string{"k"}},
		{name: "keyed result from a remote worker", jobs: []droverdriver.FinishedRow{row(1, droverdriver.FlowKeyed, "k")},
			results: []droverdriver.Result{done(1)},
			calls:   "JobFinishMany Tx JobFinishMany KeyLock KeyPromote", accepted: []int64{1}, keys: []string{"k"}},
		{name: "keyed retry from a remote worker spends a rate token",
			jobs:    []droverdriver.FinishedRow{{ID: 1, State: drovertype.JobStateAvailable, Flow: droverdriver.FlowKeyed, Queue: "q", Key: "k"}},
			results: []droverdriver.Result{with(done(1), func(r *droverdriver.Result) { r.Outcome = droverdriver.OutcomeRetry })},
			calls:   "JobFinishMany Tx JobFinishMany KeyLock KeyPromote", accepted: []int64{1}, keys: []string{"k"}, retried: []int64{1}},
		{name: "dependant added while running", jobs: []droverdriver.FinishedRow{row(1, droverdriver.FlowHasDependants, "")},
			results: []droverdriver.Result{done(1)},
			calls:   "JobFinishMany Tx JobFinishMany JobFlowSettle KeyLock KeyPromote", accepted: []int64{1},
			settled: []int64{1}, keys: []string{"released"}},
		{name: "every end at once", jobs: []droverdriver.FinishedRow{row(1, droverdriver.FlowEnd, "k"), row(2, 0, "")},
			results: []droverdriver.Result{with(done(1), func(r *droverdriver.Result) { r.Flow = droverdriver.FlowEnd }), done(2)},
			calls:   "Tx JobFinishMany JobFlowSettle KeyLock KeyPromote UniqueRelease", accepted: []int64{1, 2},
			settled: []int64{1}, keys: []string{"k", "released"}, freed: []int64{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &store{jobs: map[int64]droverdriver.FinishedRow{}, partial: tt.partial}
			for _, j := range tt.jobs {
				s.jobs[j.ID] = j
			}
			accepted, err := Finish(context.Background(), s, tt.results)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(s.calls, " "); got != tt.calls {
				t.Errorf("calls %q, want %q", got, tt.calls)
			}
			if !slices.Equal(accepted, tt.accepted) {
				t.Errorf("accepted %v, want %v", accepted, tt.accepted)
			}
			if !slices.Equal(s.settled, tt.settled) || !slices.Equal(s.keys.Keys, tt.keys) || !slices.Equal(s.freed, tt.freed) {
				t.Errorf("settled %v, promoted %v, freed %v; want %v, %v, %v", s.settled, s.keys.Keys, s.freed, tt.settled, tt.keys, tt.freed)
			}
			if !slices.Equal(s.keys.Retried, tt.retried) {
				t.Errorf("retried %v counted against rates, want %v", s.keys.Retried, tt.retried)
			}
		})
	}
}
