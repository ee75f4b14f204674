package droverpg

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// TestFinishStatement checks which flushes take JobComplete: those whose
// every result completes its job without an error, alike in Forget; and
// that its arguments carry every result.
func TestFinishStatement(t *testing.T) {
	t.Parallel()
	e := &executor{q: map[string]string{"JobFinish": "JobFinish", "JobComplete": "JobComplete"}}
	// The fence is the "id:attempt" keys and the distinct tokens apart.
	token := drovertype.LeaseToken{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	done := func(id int64) droverdriver.Result {
		return droverdriver.Result{ID: id, Attempt: 2, LeaseToken: token, Outcome: droverdriver.OutcomeCompleted}
	}
	with := func(r droverdriver.Result, f func(*droverdriver.Result)) droverdriver.Result {
		f(&r)
		return r
	}
	forgotten := func(r *droverdriver.Result) { r.Forget = true }
	tests := []struct {
		name    string
		results []droverdriver.Result
		want    string
	}{
		{"plain completions", []droverdriver.Result{done(1), done(2)}, "JobComplete"},
		{"all forgotten", []droverdriver.Result{with(done(1), forgotten), with(done(2), forgotten)}, "JobComplete"},
		{"a stored result", []droverdriver.Result{done(1), with(done(2), func(r *droverdriver.Result) { r.Output = []byte(`1`) })}, "JobComplete"},
		{"forget differs", []droverdriver.Result{done(1), with(done(2), forgotten)}, "JobFinish"},
		{"a retry", []droverdriver.Result{done(1), with(done(2), func(r *droverdriver.Result) { r.Outcome = droverdriver.OutcomeRetry })}, "JobFinish"},
		{"a discard", []droverdriver.Result{with(done(1), func(r *droverdriver.Result) { r.Outcome = droverdriver.OutcomeDiscarded })}, "JobFinish"},
		{"an error", []droverdriver.Result{with(done(1), func(r *droverdriver.Result) { r.Error = []byte(`{}`) })}, "JobFinish"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := e.finishStatement(tc.results, droverdriver.FlowEnd)
			sql, args := b.Name, b.Args
			if sql != tc.want {
				t.Fatalf("statement %s, want %s", sql, tc.want)
			}
			if sql != "JobComplete" {
				return
			}
			ids, keys, outputs, tokens := args[1].([]int64), args[2].([]string), args[3].(*string), args[6].([]pgtype.UUID)
			if len(tokens) != 1 || tokens[0].Bytes != token || !tokens[0].Valid {
				t.Fatalf("tokens %v, want the one token of the results, once", tokens)
			}
			if args[4] != int32(droverdriver.FlowEnd) || args[5] != tc.results[0].Forget {
				t.Fatalf("refused flow %v forget %v, want %d %v", args[4], args[5], droverdriver.FlowEnd, tc.results[0].Forget)
			}
			stored := map[string]json.RawMessage{}
			if outputs != nil {
				if err := json.Unmarshal([]byte(*outputs), &stored); err != nil {
					t.Fatalf("outputs %s: %v", *outputs, err)
				}
			}
			for i, r := range tc.results {
				if want := fmt.Sprintf("%d:%d", r.ID, r.Attempt); ids[i] != r.ID || keys[i] != want {
					t.Fatalf("row %d: id %d key %q, want %d and %q", i, ids[i], keys[i], r.ID, want)
				}
				if got := stored[fmt.Sprint(r.ID)]; string(got) != string(r.Output) {
					t.Fatalf("row %d: stored output %s, want %s", i, got, r.Output)
				}
			}
		})
	}
}

// TestTokenSet checks that the fence's token list holds each token of a
// batch once, whatever the order the attempts come in.
func TestTokenSet(t *testing.T) {
	t.Parallel()
	a, b, c := drovertype.LeaseToken{1}, drovertype.LeaseToken{2}, drovertype.LeaseToken{3}
	tests := []struct {
		in   []drovertype.LeaseToken
		want []drovertype.LeaseToken
	}{
		{nil, nil},
		{[]drovertype.LeaseToken{a, a, a}, []drovertype.LeaseToken{a}},
		{[]drovertype.LeaseToken{a, b, a, c, b}, []drovertype.LeaseToken{a, b, c}},
	}
	for _, tc := range tests {
		var s tokenSet
		for _, tok := range tc.in {
			s.add(tok)
		}
		if len(s.uuids) != len(tc.want) {
			t.Fatalf("%v gave %d tokens, want %v", tc.in, len(s.uuids), tc.want)
		}
		for i, w := range tc.want {
			if s.uuids[i].Bytes != w || !s.uuids[i].Valid {
				t.Fatalf("%v gave %v, want %v", tc.in, s.uuids, tc.want)
			}
		}
	}
}
