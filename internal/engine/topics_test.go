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
	lane := func(sub string, lane int, cursor int64, limit int) droverdriver.LeasedLane {
		return droverdriver.LeasedLane{Topic: "t", Subscription: sub, Lane: lane, Cursor: droverdriver.Position{ID: cursor},
			To: droverdriver.PositionMax, Limit: limit}
	}
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
			leased := []droverdriver.LeasedLane{lane("a", 0, 5, c.limit), lane("b", 0, 5, c.limit), lane("c", 0, 7, c.limit),
				lane("d", 1, 5, c.limit), lane("e", 0, 7, c.limit)}
			plan := PlanReads(leased, c.maxRows, 0)
			// One range per (topic, lane, cursor), shared by the lanes
			// standing there.
			if got := fmt.Sprint(plan.RangeOf); got != "[0 0 1 2 1]" || len(plan.Params.Lanes) != 3 ||
				fmt.Sprint(plan.Params.Limits) != fmt.Sprint([]int{c.wantN, c.wantN, c.wantN}) {
				t.Fatalf("RangeOf %s, %d ranges of %v; want [0 0 1 2 1], 3 ranges of %d", got, len(plan.Params.Lanes), plan.Params.Limits, c.wantN)
			}
			rows := []*droverdriver.MessageRow{{Range: 0, ID: 6}, {Range: 2, ID: 9}}
			if got := Deliveries(plan, leased, rows); len(got[0].Rows) != 1 || len(got[1].Rows) != 1 || len(got[2].Rows) != 0 || len(got[3].Rows) != 1 {
				t.Fatalf("deliveries %v", got)
			}
		})
	}
	t.Run("each lane of a shared range takes its own bound and limit", func(t *testing.T) {
		// a delivers a batch of 3 up to message 8; b, at the same cursor,
		// one message at a time (its lease expired before); c a batch of 5
		// with no bound. The range reads the most any of them takes.
		a, b, c := lane("a", 0, 5, 3), lane("b", 0, 5, 1), lane("c", 0, 5, 5)
		a.To = droverdriver.Position{ID: 8}
		leased := []droverdriver.LeasedLane{a, b, c}
		plan := PlanReads(leased, 0, 1<<20)
		if len(plan.Params.Lanes) != 1 || plan.Params.Limits[0] != 5 || plan.Params.Tos[0] != droverdriver.PositionMax || plan.Params.MaxBytes != 1<<20 {
			t.Fatalf("ranges %+v, want one of 5 messages, no bound, the byte budget", plan.Params)
		}
		var rows []*droverdriver.MessageRow
		for id := int64(6); id <= 12; id += 2 {
			rows = append(rows, &droverdriver.MessageRow{Range: 0, ID: id})
		}
		ids := func(b LaneBatch) string {
			var out []int64
			for _, m := range b.Rows {
				out = append(out, m.ID)
			}
			return fmt.Sprintf("%v full=%t", out, b.Full)
		}
		got := Deliveries(plan, leased, rows)
		if ids(got[0]) != "[6 8] full=false" || ids(got[1]) != "[6] full=true" || ids(got[2]) != "[6 8 10 12] full=false" {
			t.Fatalf("deliveries %s; %s; %s", ids(got[0]), ids(got[1]), ids(got[2]))
		}
	})
}

func TestLaneRounds(t *testing.T) {
	ack := func(sub string, lane int) droverdriver.LaneAck {
		return droverdriver.LaneAck{Topic: "t", Subscription: sub, Lane: lane}
	}
	for _, c := range []struct {
		name string
		acks []droverdriver.LaneAck
		want string
	}{
		{"distinct lanes: one round", []droverdriver.LaneAck{ack("a", 0), ack("a", 1), ack("b", 0)}, "[[0 1 2]]"},
		{"a lane twice: the second in a round of its own", []droverdriver.LaneAck{ack("a", 0), ack("a", 0)}, "[[0] [1]]"},
		{"rounds keep the order of each lane's acks", []droverdriver.LaneAck{ack("a", 0), ack("b", 0), ack("a", 0), ack("a", 0), ack("b", 0)},
			"[[0 1] [2 4] [3]]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := fmt.Sprint(LaneRounds(c.acks)); got != c.want {
				t.Fatalf("rounds %s, want %s", got, c.want)
			}
		})
	}
}
