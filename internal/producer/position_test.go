package producer

import (
	"testing"
	"time"

	"github.com/droverhq/drover/drovertype"
)

func TestPosition(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	row := func(prio int, id int64) *drovertype.JobRow {
		return &drovertype.JobRow{Priority: prio, RunAt: t0, ID: id}
	}
	type claim struct {
		at    time.Duration // since t0
		full  bool
		took  time.Duration
		last  *drovertype.JobRow
		short bool
	}
	tests := []struct {
		name   string
		claims []claim
		at     time.Duration
		want   int64 // ID of the position to pass; 0 for a full claim
	}{
		{"no claims yet", nil, 0, 0},
		{"fast full claims stay full", []claim{{0, true, time.Millisecond, row(0, 10), false}}, time.Millisecond, 0},
		{"a claim just under the threshold stays full",
			[]claim{{0, true, slowClaim - time.Microsecond, row(0, 10), false}}, time.Millisecond, 0},
		{"a slow full claim switches to positional claims",
			[]claim{{0, true, 200 * time.Millisecond, row(0, 10), false}}, 100 * time.Millisecond, 10},
		{"positional claims move the position forward",
			[]claim{{0, true, 200 * time.Millisecond, row(0, 10), false}, {time.Millisecond, false, time.Millisecond, row(0, 20), false}},
			2 * time.Millisecond, 20},
		{"a positional claim never moves it back",
			[]claim{{0, true, 200 * time.Millisecond, row(1, 10), false}, {time.Millisecond, false, time.Millisecond, row(0, 20), false}},
			2 * time.Millisecond, 10},
		{"the positional span is ten slow claims long",
			[]claim{{0, true, 200 * time.Millisecond, row(0, 10), false}}, 1999 * time.Millisecond, 10},
		{"then the next claim is full again",
			[]claim{{0, true, 200 * time.Millisecond, row(0, 10), false}}, 2 * time.Second, 0},
		{"the span is at least a second",
			[]claim{{0, true, slowClaim, row(0, 10), false}}, 999 * time.Millisecond, 10},
		{"a full claim resets the position",
			[]claim{{0, true, 200 * time.Millisecond, row(0, 30), false}, {time.Millisecond, true, 300 * time.Millisecond, row(0, 5), false}},
			2 * time.Millisecond, 5},
		{"an empty slow claim keeps the last position",
			[]claim{{0, true, 200 * time.Millisecond, row(0, 10), false}, {time.Millisecond, true, 300 * time.Millisecond, nil, true}},
			2 * time.Millisecond, 10},
		{"a short positional claim ends the span at once",
			[]claim{{0, true, 10 * time.Second, row(0, 10), false}, {time.Millisecond, false, time.Millisecond, row(0, 20), true}},
			time.Millisecond, 0},
		{"a full positional claim keeps the span",
			[]claim{{0, true, 10 * time.Second, row(0, 10), false}, {time.Millisecond, false, time.Millisecond, row(0, 20), false}},
			time.Second, 20},
		{"a short positional claim never lengthens a span",
			[]claim{{0, true, slowClaim, row(0, 10), false}, {900 * time.Millisecond, false, time.Millisecond, nil, true}},
			time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p position
			for _, c := range tt.claims {
				p.observe(t0.Add(c.at), c.full, c.took, c.last, c.short)
			}
			var got int64
			if pos := p.after(t0.Add(tt.at)); pos != nil {
				got = pos.ID
			}
			if got != tt.want {
				t.Errorf("after() = %d, want %d", got, tt.want)
			}
		})
	}
}
