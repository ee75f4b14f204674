package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// idStore is a store of jobs with IDs 1 to last, of which those in match
// match the filter's states, queue and kind (and so the whole filter);
// it records the windows it is asked to read.
type idStore struct {
	droverdriver.Executor
	last    int64
	match   []int64
	windows [][2]int64 // exclusive bounds, as ListParams.Bounds
}

func (s *idStore) JobIDNext(_ context.Context, p droverdriver.ListParams) (int64, error) {
	lo, hi := p.Bounds()
	ids := slices.Clone(s.match)
	if p.Desc {
		slices.Reverse(ids)
	}
	for _, id := range ids {
		if id > lo && id < hi {
			return id, nil
		}
	}
	return 0, nil
}

func (s *idStore) JobList(_ context.Context, p droverdriver.ListParams) ([]*drovertype.JobRow, error) {
	lo, hi := p.Bounds()
	s.windows = append(s.windows, [2]int64{lo, hi})
	var out []*drovertype.JobRow
	for _, id := range s.match {
		if id > lo && id < hi && len(out) < p.Limit {
			out = append(out, &drovertype.JobRow{ID: id})
		}
	}
	if p.Desc {
		slices.Reverse(out)
	}
	return out, nil
}

// TestSearchWindowsStartAtTheNextMatch: a page of a filter few jobs match
// reads windows that start at the jobs JobIDNext finds, never the IDs
// between them, which the window statements would walk row by row; the
// scan bound counts the windows' widths alone.
func TestSearchWindowsStartAtTheNextMatch(t *testing.T) {
	for _, desc := range []bool{false, true} {
		s := &idStore{last: 1_000_000, match: []int64{400_000, 900_000}}
		page, err := Search(context.Background(), s, droverdriver.ListParams{Queue: "rare", Limit: 10, Desc: desc}, 100_000, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{400_000, 900_000}
		if desc {
			want = []int64{900_000, 400_000}
		}
		var got []int64
		for _, j := range page.Jobs {
			got = append(got, j.ID)
		}
		if !slices.Equal(got, want) || page.Next != 0 {
			t.Errorf("desc %v: page %v next %d, want %v and the end", desc, got, page.Next, want)
		}
		for _, w := range s.windows {
			if w[1]-w[0]-1 > searchFirstWindow || !slices.ContainsFunc(s.match, func(id int64) bool { return id > w[0] && id < w[1] }) {
				t.Errorf("desc %v: window (%d, %d) does not start at a matching job within %d IDs", desc, w[0], w[1], searchFirstWindow)
			}
		}
		if page.Scanned != 2*searchFirstWindow {
			t.Errorf("desc %v: scanned %d, want two windows of %d", desc, page.Scanned, searchFirstWindow)
		}
	}
}
