package engine

import (
	"fmt"
	"testing"

	"github.com/droverhq/drover/droverdriver"
)

func TestPublishLanes(t *testing.T) {
	keyless := func(n int) []droverdriver.PublishParams { return make([]droverdriver.PublishParams, n) }
	lanesOf := func(msgs []droverdriver.PublishParams) []int {
		out := make([]int, len(msgs))
		for i, m := range msgs {
			out[i] = m.Lane
		}
		return out
	}
	// count returns how many messages each lane got.
	count := func(msgs []droverdriver.PublishParams, lanes int) []int {
		out := make([]int, lanes)
		for _, m := range msgs {
			out[m.Lane]++
		}
		return out
	}
	t.Run("a publish of up to a run goes to one lane", func(t *testing.T) {
		msgs := keyless(KeylessRun)
		PublishLanes(msgs, map[string]int{"": 4}, 6)
		if got := count(msgs, 4); got[2] != KeylessRun {
			t.Fatalf("lanes got %v, want all %d on lane 6%%4 = 2", got, KeylessRun)
		}
	})
	t.Run("a larger publish goes lane after lane in runs", func(t *testing.T) {
		msgs := keyless(5*KeylessRun + 1)
		PublishLanes(msgs, map[string]int{"": 4}, 3)
		// Runs on lanes 3, 0, 1, 2, 3, and the last message on 0.
		if got, want := count(msgs, 4), []int{KeylessRun + 1, KeylessRun, KeylessRun, 2 * KeylessRun}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("lanes got %v, want %v", got, want)
		}
		if msgs[KeylessRun-1].Lane != 3 || msgs[KeylessRun].Lane != 0 || msgs[5*KeylessRun].Lane != 0 {
			t.Fatalf("lanes %v", lanesOf(msgs[KeylessRun-1:KeylessRun+1]))
		}
	})
	t.Run("successive starts spread publishes over every lane", func(t *testing.T) {
		var all []droverdriver.PublishParams
		for start := range uint32(8) {
			msgs := keyless(10)
			PublishLanes(msgs, map[string]int{"": 4}, start)
			all = append(all, msgs...)
		}
		if got := count(all, 4); fmt.Sprint(got) != "[20 20 20 20]" {
			t.Fatalf("lanes got %v, want 20 each", got)
		}
	})
	t.Run("each topic of a publish runs on its own lanes", func(t *testing.T) {
		msgs := keyless(4)
		msgs[0].Topic, msgs[1].Topic, msgs[2].Topic, msgs[3].Topic = "a", "b", "a", "b"
		msgs[3].Key = "k"
		PublishLanes(msgs, map[string]int{"a": 4, "b": 2}, 5)
		if got, want := lanesOf(msgs), []int{1, 1, 1, KeyLane("k", 2)}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("lanes %v, want %v: a's keyless run on 5%%4, b's on 5%%2, b's key on its lane of 2", got, want)
		}
	})
	t.Run("keyed messages follow their key and leave the runs alone", func(t *testing.T) {
		msgs := keyless(2*KeylessRun + 2)
		msgs[0].Key, msgs[KeylessRun+1].Key = "room-1", "room-1"
		PublishLanes(msgs, map[string]int{"": 16}, 0)
		if msgs[0].Lane != KeyLane("room-1", 16) || msgs[KeylessRun+1].Lane != msgs[0].Lane {
			t.Fatalf("keyed messages on lanes %d and %d, want %d", msgs[0].Lane, msgs[KeylessRun+1].Lane, KeyLane("room-1", 16))
		}
		// Two keyed messages take no place in the runs: 200 keyless ones
		// make exactly two runs, on lanes 0 and 1.
		keyless := 0
		for i, m := range msgs {
			if m.Key != "" {
				continue
			}
			if want := keyless / KeylessRun; m.Lane != want {
				t.Fatalf("keyless message %d (the %dth) on lane %d, want %d", i, keyless, m.Lane, want)
			}
			keyless++
		}
	})
}

func TestPlanReads(t *testing.T) {
	lane := func(sub string, lane int, cursor int64) droverdriver.LeasedLane {
		return droverdriver.LeasedLane{Topic: "t", Subscription: sub, Lane: lane, Cursor: droverdriver.Position{ID: cursor}}
	}
	leased := []droverdriver.LeasedLane{lane("a", 0, 5), lane("b", 0, 5), lane("c", 0, 7), lane("d", 1, 5), lane("e", 0, 7)}
	for _, c := range []struct {
		name                  string
		limit, maxRows, wantN int
	}{
		{"no bound", 10, 0, 10},
		{"three ranges of 10 fit in 30", 10, 30, 10},
		{"three ranges share 25 rows", 10, 25, 8},
		{"at least one row a range", 10, 2, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := PlanReads(leased, c.limit, c.maxRows)
			// One range per (topic, lane, cursor), shared by the lanes
			// standing there.
			if got := fmt.Sprint(plan.RangeOf); got != "[0 0 1 2 1]" || len(plan.Params.Lanes) != 3 || plan.Params.Limit != c.wantN {
				t.Fatalf("RangeOf %s, %d ranges of %d; want [0 0 1 2 1], 3 ranges of %d", got, len(plan.Params.Lanes), plan.Params.Limit, c.wantN)
			}
			rows := []*droverdriver.MessageRow{{Range: 0, ID: 6}, {Range: 2, ID: 9}}
			if got := Deliveries(plan, rows); len(got[0]) != 1 || len(got[1]) != 1 || len(got[2]) != 0 || len(got[3]) != 1 {
				t.Fatalf("deliveries %v", got)
			}
		})
	}
}
