package lease

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// heartbeatStore answers JobHeartbeat: every attempt of a job in lost is
// lost, every one in cancel asked to cancel; the call numbered failAt
// fails.
type heartbeatStore struct {
	droverdriver.Executor
	lost, cancel map[int64]bool
	failAt       int
	calls        []int // attempts per call
}

func (s *heartbeatStore) JobHeartbeat(_ context.Context, p droverdriver.HeartbeatParams) (droverdriver.HeartbeatResult, error) {
	s.calls = append(s.calls, len(p.IDs))
	if len(s.calls) == s.failAt {
		return droverdriver.HeartbeatResult{}, errors.New("store down")
	}
	var res droverdriver.HeartbeatResult
	for _, id := range p.IDs {
		if s.lost[id] {
			res.Lost = append(res.Lost, id)
		}
		if s.cancel[id] {
			res.CancelRequested = append(res.CancelRequested, id)
		}
	}
	return res, nil
}

// TestExtend: attempts go to the store in statements of at most Chunk,
// and what every statement reports comes back merged; a failed statement
// still returns what the ones before it reported.
func TestExtend(t *testing.T) {
	tests := []struct {
		name       string
		n, failAt  int
		wantCalls  []int
		wantLost   []int64
		wantCancel []int64
		wantErr    bool
	}{
		{name: "none", n: 0},
		{name: "one statement", n: 3, wantCalls: []int{3}, wantLost: []int64{1}, wantCancel: []int64{2}},
		{name: "chunked", n: Chunk + 2, wantCalls: []int{Chunk, 2}, wantLost: []int64{1, Chunk + 1}, wantCancel: []int64{2}},
		{name: "second chunk fails", n: Chunk + 2, failAt: 2, wantCalls: []int{Chunk, 2}, wantLost: []int64{1},
			wantCancel: []int64{2}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &heartbeatStore{lost: map[int64]bool{1: true, Chunk + 1: true}, cancel: map[int64]bool{2: true}, failAt: tt.failAt}
			p := droverdriver.HeartbeatParams{IDs: make([]int64, tt.n), Attempts: make([]int, tt.n),
				Tokens: make([]drovertype.LeaseToken, tt.n)}
			for i := range p.IDs {
				p.IDs[i], p.Attempts[i] = int64(i+1), 1
			}
			res, err := Extend(context.Background(), s, p)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tt.wantErr)
			}
			if !slices.Equal(s.calls, tt.wantCalls) {
				t.Errorf("statements of %v attempts, want %v", s.calls, tt.wantCalls)
			}
			if !slices.Equal(res.Lost, tt.wantLost) || !slices.Equal(res.CancelRequested, tt.wantCancel) {
				t.Errorf("lost %v, cancel %v; want lost %v, cancel %v", res.Lost, res.CancelRequested, tt.wantLost, tt.wantCancel)
			}
		})
	}
}
