package droverdrivertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// testTopics covers droverdriver.TopicExecutor, an optional interface: a
// driver without it skips these tests.
func testTopics(t *testing.T, setup opener) {
	// topics returns the driver's TopicExecutor with topic "t" of lanes
	// lanes and the named subscriptions (from the earliest message).
	topics := func(t *testing.T, lanes int, subs ...string) (droverdriver.Driver, droverdriver.TopicExecutor) {
		t.Helper()
		d := setup(t)
		te, ok := d.Executor().(droverdriver.TopicExecutor)
		if !ok {
			t.Skipf("%s does not implement droverdriver.TopicExecutor", d.Name())
		}
		ctx := context.Background()
		if _, err := te.TopicCreate(ctx, droverdriver.TopicParams{Name: "t", Lanes: lanes, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		for _, s := range subs {
			if _, err := te.SubscriptionCreate(ctx, droverdriver.SubscriptionParams{Topic: "t", Name: s, MaxAttempts: 3,
				Start: droverdriver.StartEarliest, Now: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		return d, te
	}
	publish := func(t *testing.T, te droverdriver.TopicExecutor, lane int, payloads ...string) []int64 {
		t.Helper()
		msgs := make([]droverdriver.PublishParams, len(payloads))
		for i, p := range payloads {
			msgs[i] = droverdriver.PublishParams{Topic: "t", Lane: lane, Payload: []byte(p)}
		}
		ids, err := te.TopicPublish(context.Background(), msgs)
		if err != nil || len(ids) != len(payloads) {
			t.Fatalf("publish: %v, %v", ids, err)
		}
		return ids
	}
	lease := func(t *testing.T, te droverdriver.TopicExecutor, token drovertype.LeaseToken, subs ...string) []droverdriver.LeasedLane {
		t.Helper()
		p := droverdriver.TopicLeaseParams{Owner: "o", Token: token, Lease: time.Minute, Max: 100, Now: time.Now()}
		for _, s := range subs {
			p.Subscriptions = append(p.Subscriptions, droverdriver.SubscriptionRef{Topic: "t", Name: s})
			p.Limits = append(p.Limits, 100)
		}
		leased, err := te.TopicLease(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		return leased
	}
	// leaseSome leases until it gets a lane: on a store that sequences
	// committed messages (PostgreSQL), a lease whose pass gives way to
	// another one running sees the messages once that one commits.
	leaseSome := func(t *testing.T, te droverdriver.TopicExecutor, token drovertype.LeaseToken, subs ...string) []droverdriver.LeasedLane {
		t.Helper()
		var leased []droverdriver.LeasedLane
		waitfor.Cond(t, "a lane with a readable message leased", func() bool {
			leased = lease(t, te, token, subs...)
			return len(leased) > 0
		})
		return leased
	}
	// topicU adds topic "u" of one lane with subscription "a", from the
	// earliest message, beside "t".
	topicU := func(t *testing.T, te droverdriver.TopicExecutor) {
		t.Helper()
		ctx := context.Background()
		if _, err := te.TopicCreate(ctx, droverdriver.TopicParams{Name: "u", Lanes: 1, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := te.SubscriptionCreate(ctx, droverdriver.SubscriptionParams{Topic: "u", Name: "a", MaxAttempts: 3,
			Start: droverdriver.StartEarliest, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	read := func(t *testing.T, te droverdriver.TopicExecutor, l droverdriver.LeasedLane) []*droverdriver.MessageRow {
		t.Helper()
		rows, err := te.TopicRead(context.Background(), droverdriver.TopicReadParams{Topics: []string{l.Topic}, Lanes: []int{l.Lane},
			Cursors: []droverdriver.Position{l.Cursor}, Tos: []droverdriver.Position{droverdriver.PositionMax}, Limits: []int{100}})
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}

	t.Run("TopicCreate", func(t *testing.T) {
		t.Parallel()
		_, te := topics(t, 4, "a", "b")
		row, err := te.TopicCreate(context.Background(), droverdriver.TopicParams{Name: "t", Lanes: 9, Now: time.Now()})
		if err != nil || row.Lanes != 4 || row.Created {
			t.Fatalf("a second create returned %+v, %v; want the stored topic with 4 lanes, not created", row, err)
		}
		row, err = te.TopicCreate(context.Background(), droverdriver.TopicParams{Name: "new", Lanes: 2, Now: time.Now()})
		if err != nil || row.Lanes != 2 || !row.Created {
			t.Fatalf("a first create returned %+v, %v; want the new topic, created", row, err)
		}
		list, err := te.TopicList(context.Background())
		if err != nil || len(list) != 2 || list[1].Name != "t" || !slices.Equal(list[1].Subscriptions, []string{"a", "b"}) {
			t.Fatalf("list %+v, %v", list, err)
		}
		if _, err := te.SubscriptionCreate(context.Background(), droverdriver.SubscriptionParams{Topic: "none", Name: "a",
			MaxAttempts: 3, Now: time.Now()}); !errors.Is(err, droverdriver.ErrTopicNotFound) {
			t.Fatalf("subscription of a missing topic: %v, want ErrTopicNotFound", err)
		}
	})

	t.Run("TopicDelete", func(t *testing.T) {
		// A deleted topic takes its subscriptions, their lanes and its
		// messages with it; another topic's are untouched.
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 2, "a", "b")
		topicU(t, te)
		publish(t, te, 0, "t1", "t2")
		if _, err := te.TopicPublish(ctx, []droverdriver.PublishParams{{Topic: "u", Lane: 0, Payload: []byte("u1")}}); err != nil {
			t.Fatal(err)
		}
		leaseSome(t, te, drovertype.NewLeaseToken(), "a") // the messages are readable
		if deleted, err := te.TopicDelete(ctx, "t"); err != nil || !deleted {
			t.Fatalf("delete: %v, %v", deleted, err)
		}
		if deleted, err := te.TopicDelete(ctx, "t"); err != nil || deleted {
			t.Fatalf("delete again: %v, %v; want false, nothing to delete", deleted, err)
		}
		list, err := te.TopicList(ctx)
		if err != nil || len(list) != 1 || list[0].Name != "u" {
			t.Fatalf("list after delete: %+v, %v", list, err)
		}
		var rows []*droverdriver.MessageRow
		waitfor.Cond(t, "u's message readable", func() bool {
			var err error
			max := droverdriver.PositionMax
			rows, err = te.TopicRead(ctx, droverdriver.TopicReadParams{Topics: []string{"t", "t", "u"}, Lanes: []int{0, 1, 0},
				Cursors: make([]droverdriver.Position, 3), Tos: []droverdriver.Position{max, max, max}, Limits: []int{100, 100, 100}})
			if err != nil {
				t.Fatal(err)
			}
			return slices.ContainsFunc(rows, func(r *droverdriver.MessageRow) bool { return string(r.Payload) == "u1" })
		})
		if len(rows) != 1 {
			t.Fatalf("messages after delete: %d rows; want u's one message alone", len(rows))
		}
		lag, err := te.TopicLag(ctx, []string{"t", "u"})
		if err != nil || len(lag) != 1 || lag[0].Topic != "u" {
			t.Fatalf("lag after delete: %+v, %v; want u's subscription alone", lag, err)
		}
		// Created again, the topic starts empty, with no subscription.
		if _, err := te.TopicCreate(ctx, droverdriver.TopicParams{Name: "t", Lanes: 2, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := te.SubscriptionCreate(ctx, droverdriver.SubscriptionParams{Topic: "t", Name: "a", MaxAttempts: 3,
			Start: droverdriver.StartEarliest, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if got := lease(t, te, drovertype.NewLeaseToken(), "a"); len(got) != 0 {
			t.Fatalf("the topic created again leased %d lanes with messages", len(got))
		}
	})

	t.Run("TopicPublish/topics", func(t *testing.T) {
		// One publish stores messages of several topics, IDs in input
		// order, each on its topic's lane, and announces every topic.
		t.Parallel()
		ctx := context.Background()
		d, te := topics(t, 2, "a")
		topicU(t, te)
		heard := listen(t, d)
		ids, err := te.TopicPublish(ctx, []droverdriver.PublishParams{{Topic: "t", Lane: 1, Payload: []byte("t1")},
			{Topic: "u", Lane: 0, Payload: []byte("u1")}, {Topic: "t", Lane: 1, Payload: []byte("t2")}})
		if err != nil || len(ids) != 3 || !slices.IsSorted(ids) {
			t.Fatalf("publish: %v, %v; want three IDs in input order", ids, err)
		}
		heardOf(t, heard, droverdriver.TopicWake("t"), droverdriver.TopicWake("u"))
		token := drovertype.NewLeaseToken()
		got := map[string][]string{}
		waitfor.Cond(t, "both topics' lanes leased", func() bool {
			leased, err := te.TopicLease(ctx, droverdriver.TopicLeaseParams{Owner: "o", Token: token, Lease: time.Minute, Max: 10, Now: time.Now(),
				Subscriptions: []droverdriver.SubscriptionRef{{Topic: "t", Name: "a"}, {Topic: "u", Name: "a"}}, Limits: []int{10, 10}})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range leased {
				for _, m := range read(t, te, l) {
					k := fmt.Sprintf("%s/%d", l.Topic, l.Lane)
					got[k] = append(got[k], fmt.Sprintf("%s:%d", m.Payload, m.ID))
				}
			}
			return len(got) == 2
		})
		want := map[string][]string{"t/1": {fmt.Sprintf("t1:%d", ids[0]), fmt.Sprintf("t2:%d", ids[2])}, "u/0": {fmt.Sprintf("u1:%d", ids[1])}}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("read %v, want %v", got, want)
		}
	})

	t.Run("TopicLease/read/ack", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 1, "a")
		ids := publish(t, te, 0, "1", "2", "3")
		token := drovertype.NewLeaseToken()
		leased := leaseSome(t, te, token, "a")
		if len(leased) != 1 || leased[0].Topic != "t" || leased[0].Subscription != "a" || leased[0].MaxAttempts != 3 ||
			leased[0].Attempt != 1 || leased[0].Limit != 100 || leased[0].To.ID != ids[2] {
			t.Fatalf("leased %+v, want lane 0 of t/a with its stored max attempts, a first delivery of at most 100 messages up to %d", leased, ids[2])
		}
		if again := lease(t, te, drovertype.NewLeaseToken(), "a"); len(again) != 0 {
			t.Fatalf("a leased lane was leased again: %+v", again)
		}
		rows := read(t, te, leased[0])
		got := make([]int64, len(rows))
		for i, m := range rows {
			got[i] = m.ID
		}
		if !slices.Equal(got, ids) || string(rows[0].Payload) != "1" {
			t.Fatalf("read %v, want %v in order", got, ids)
		}
		ack := droverdriver.LaneAck{Topic: "t", Subscription: "a", Lane: 0, Token: drovertype.NewLeaseToken(), Cursor: rows[2].Position()}
		if accepted, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Acks: []droverdriver.LaneAck{ack}, Now: time.Now()}); err != nil || len(accepted) != 0 {
			t.Fatalf("an ack under another token: %v, %v; want rejected", accepted, err)
		}
		ack.Token = token
		if accepted, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Acks: []droverdriver.LaneAck{ack}, Now: time.Now()}); err != nil ||
			!slices.Equal(accepted, []droverdriver.AckedLane{{Index: 0}}) {
			t.Fatalf("ack: %v, %v", accepted, err)
		}
		if again := lease(t, te, drovertype.NewLeaseToken(), "a"); len(again) != 0 {
			t.Fatalf("a lane with nothing past its cursor was leased: %+v", again)
		}
		lag, err := te.TopicLag(ctx, []string{"t"})
		if err != nil || len(lag) != 1 || lag[0].Pending != 0 {
			t.Fatalf("lag %+v, %v", lag, err)
		}
	})

	t.Run("TopicRewind", func(t *testing.T) {
		// A rewind moves each lane back to the point (never forward) and
		// drops every lease token of the subscription, so that a batch out
		// is refused on ack; a lane goes back to before its first message
		// published at or after a time, and one without such a message
		// stays.
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 2, "a")
		ids := publish(t, te, 0, "1", "2", "3")
		publish(t, te, 1, "x")
		token := drovertype.NewLeaseToken()
		var leased []droverdriver.LeasedLane
		waitfor.Cond(t, "both lanes leased", func() bool {
			leased = append(leased, lease(t, te, token, "a")...)
			return len(leased) == 2
		})
		var acks []droverdriver.LaneAck
		for _, l := range leased {
			rows := read(t, te, l)
			acks = append(acks, droverdriver.LaneAck{Topic: "t", Subscription: "a", Lane: l.Lane, Token: token, Cursor: rows[len(rows)-1].Position(), Count: len(rows)})
		}
		if accepted, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Acks: acks, Now: time.Now()}); err != nil || len(accepted) != 2 {
			t.Fatalf("ack: %v, %v", accepted, err)
		}
		// The fourth message acknowledged, the fifth out.
		ids = append(ids, publish(t, te, 0, "4")...)
		token = drovertype.NewLeaseToken()
		held := leaseSome(t, te, token, "a")
		fourth := read(t, te, held[0])
		if len(held) != 1 || held[0].Lane != 0 || len(fourth) != 1 || fourth[0].ID != ids[3] {
			t.Fatalf("leased %+v reading %+v, want lane 0 with the fourth message", held, fourth)
		}
		ack := droverdriver.LaneAck{Topic: "t", Subscription: "a", Lane: 0, Token: token, Cursor: fourth[0].Position(), Count: 1}
		if accepted, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Acks: []droverdriver.LaneAck{ack}, Now: time.Now()}); err != nil || len(accepted) != 1 {
			t.Fatalf("ack of the fourth: %v, %v", accepted, err)
		}
		ids = append(ids, publish(t, te, 0, "5")...)
		out := drovertype.NewLeaseToken()
		if fifth := read(t, te, leaseSome(t, te, out, "a")[0]); len(fifth) != 1 || fifth[0].ID != ids[4] {
			t.Fatalf("read %+v, want the fifth message", fifth)
		}
		x := acks[1].Cursor
		if acks[0].Lane == 1 {
			x = acks[0].Cursor
		}

		since := fourth[0].PublishedAt
		rewound, err := te.TopicRewind(ctx, droverdriver.TopicRewindParams{Topic: "t", Subscription: "a", Since: &since, Now: time.Now()})
		slices.SortFunc(rewound, func(a, b droverdriver.RewoundLane) int { return a.Lane - b.Lane })
		want := []droverdriver.RewoundLane{
			{Lane: 0, From: fourth[0].Position(), To: droverdriver.Position{Xid: fourth[0].Xid, ID: fourth[0].ID - 1}, Released: true},
			{Lane: 1, From: x, To: x},
		}
		if err != nil || !slices.Equal(rewound, want) {
			t.Fatalf("rewind to the fourth message's time: %+v, %v; want %+v", rewound, err, want)
		}
		stale := droverdriver.LaneAck{Topic: "t", Subscription: "a", Lane: 0, Token: out, Cursor: droverdriver.PositionMax, Count: 1}
		if accepted, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Acks: []droverdriver.LaneAck{stale}, Now: time.Now()}); err != nil || len(accepted) != 0 {
			t.Fatalf("ack of the batch out at the rewind: %v, %v; want refused", accepted, err)
		}
		again := leaseSome(t, te, drovertype.NewLeaseToken(), "a")
		if rows := read(t, te, again[0]); len(again) != 1 || again[0].Attempt != 1 || len(rows) != 2 || rows[0].ID != ids[3] || rows[1].ID != ids[4] {
			t.Fatalf("after the rewind to a time: leased %+v reading %+v, want the fourth and fifth messages, a first delivery", again, rows)
		}

		rewound, err = te.TopicRewind(ctx, droverdriver.TopicRewindParams{Topic: "t", Subscription: "a", Now: time.Now()})
		slices.SortFunc(rewound, func(a, b droverdriver.RewoundLane) int { return a.Lane - b.Lane })
		want = []droverdriver.RewoundLane{
			{Lane: 0, From: want[0].To, To: droverdriver.Position{}, Released: true},
			{Lane: 1, From: x, To: droverdriver.Position{}},
		}
		if err != nil || !slices.Equal(rewound, want) {
			t.Fatalf("rewind to the earliest: %+v, %v; want %+v", rewound, err, want)
		}
		lag, err := te.TopicLag(ctx, []string{"t"})
		if err != nil || len(lag) != 1 || lag[0].Pending != 6 {
			t.Fatalf("lag after the rewind to the earliest %+v, %v; want all 6 messages", lag, err)
		}
		if none, err := te.TopicRewind(ctx, droverdriver.TopicRewindParams{Topic: "t", Subscription: "nosuch", Now: time.Now()}); err != nil || len(none) != 0 {
			t.Fatalf("rewind of a subscription that is not stored: %+v, %v", none, err)
		}
	})

	t.Run("TopicLease/behind", func(t *testing.T) {
		// A lease hands out exactly the free lanes of the named
		// subscriptions that have a readable message past their cursor:
		// not a lane at the head of its topic's lane, not a subscription
		// it was not asked for, not more than Max.
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 2, "a", "b", "c")
		publish(t, te, 0, "x", "y")
		names := func(leased []droverdriver.LeasedLane) []string {
			out := []string{}
			for _, l := range leased {
				out = append(out, fmt.Sprintf("%s/%s/%d", l.Topic, l.Subscription, l.Lane))
			}
			slices.Sort(out)
			return out
		}
		// Both messages committed together: lane 0 of a and of b become
		// readable at once.
		token := drovertype.NewLeaseToken()
		leased := leaseSome(t, te, token, "a", "b")
		if got := names(leased); !slices.Equal(got, []string{"t/a/0", "t/b/0"}) {
			t.Fatalf("leased %v, want lane 0 of a and b only (lane 1 is empty, c not named)", got)
		}
		// Released where they stand, they are leased again, one at a
		// time with Max 1.
		release := make([]droverdriver.LaneAck, len(leased))
		for i, l := range leased {
			release[i] = droverdriver.LaneAck{Topic: l.Topic, Subscription: l.Subscription, Lane: l.Lane, Token: token, Cursor: l.Cursor}
		}
		if accepted, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Acks: release, Now: time.Now()}); err != nil || len(accepted) != 2 {
			t.Fatalf("release: %v, %v", accepted, err)
		}
		one, err := te.TopicLease(ctx, droverdriver.TopicLeaseParams{Owner: "o", Token: token, Lease: time.Minute, Max: 1, Now: time.Now(),
			Subscriptions: []droverdriver.SubscriptionRef{{Topic: "t", Name: "a"}, {Topic: "t", Name: "b"}}, Limits: []int{10, 10}})
		if err != nil || len(one) != 1 {
			t.Fatalf("a lease of at most 1 lane got %v, %v", names(one), err)
		}
		// Acked at the head, a's lane 0 is not leased again; a message on
		// lane 1 makes that lane, and only it, leasable.
		rows := read(t, te, leased[0])
		head := droverdriver.LaneAck{Topic: "t", Subscription: one[0].Subscription, Lane: 0, Token: token, Cursor: rows[len(rows)-1].Position()}
		if accepted, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Acks: []droverdriver.LaneAck{head}, Now: time.Now()}); err != nil || len(accepted) != 1 {
			t.Fatalf("ack at the head: %v, %v", accepted, err)
		}
		if again := lease(t, te, drovertype.NewLeaseToken(), one[0].Subscription); len(again) != 0 {
			t.Fatalf("a lane at the head of its topic's lane was leased: %v", names(again))
		}
		publish(t, te, 1, "z")
		if got := names(leaseSome(t, te, drovertype.NewLeaseToken(), one[0].Subscription)); !slices.Equal(got, []string{"t/" + one[0].Subscription + "/1"}) {
			t.Fatalf("leased %v after a message on lane 1, want that lane alone", got)
		}
	})

	t.Run("TopicLag", func(t *testing.T) {
		// One statement reports the subscriptions of the named topics, or
		// of every topic, each counting the messages past its own cursors.
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 2, "a", "b")
		topicU(t, te)
		publish(t, te, 0, "1", "2")
		publish(t, te, 1, "3")
		if _, err := te.TopicPublish(ctx, []droverdriver.PublishParams{{Topic: "u", Lane: 0, Payload: []byte("4")}}); err != nil {
			t.Fatal(err)
		}
		// b reads lane 0 of t to its end.
		token := drovertype.NewLeaseToken()
		var lane0 droverdriver.LeasedLane
		waitfor.Cond(t, "lane 0 of t/b leased", func() bool {
			for _, l := range lease(t, te, token, "b") {
				if l.Lane == 0 {
					lane0 = l
					return true
				}
			}
			return false
		})
		rows := read(t, te, lane0)
		if accepted, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Now: time.Now(), Acks: []droverdriver.LaneAck{
			{Topic: "t", Subscription: "b", Lane: 0, Token: token, Cursor: rows[len(rows)-1].Position()}}}); err != nil || len(accepted) != 1 {
			t.Fatalf("ack: %v, %v", accepted, err)
		}
		show := func(lag []drovertype.SubscriptionLag) string {
			var b strings.Builder
			for _, l := range lag {
				fmt.Fprintf(&b, "%s/%s:%d,%t ", l.Topic, l.Subscription, l.Pending, l.OldestPending != nil)
			}
			return b.String()
		}
		for _, c := range []struct {
			topics []string
			want   string
		}{
			{nil, "t/a:3,true t/b:1,true u/a:1,true "},
			{[]string{"u", "t"}, "t/a:3,true t/b:1,true u/a:1,true "},
			{[]string{"u"}, "u/a:1,true "},
			{[]string{"none"}, ""},
		} {
			lag, err := te.TopicLag(ctx, c.topics)
			if err != nil || show(lag) != c.want {
				t.Fatalf("lag of %v: %s, %v; want %s", c.topics, show(lag), err, c.want)
			}
		}
	})

	t.Run("TopicAck/retries", func(t *testing.T) {
		// Through the engine's ack: an accepted ack's failed message
		// becomes a job in its transaction, a refused one's does not.
		t.Parallel()
		ctx := context.Background()
		d, te := topics(t, 1, "a")
		publish(t, te, 0, "x")
		token := drovertype.NewLeaseToken()
		leased := leaseSome(t, te, token, "a")
		rows := read(t, te, leased[0])
		batch := func(token drovertype.LeaseToken) engine.AckBatch {
			return engine.AckBatch{Ack: droverdriver.LaneAck{Topic: "t", Subscription: "a", Lane: 0, Token: token, Cursor: rows[0].Position(), Count: 1},
				Attempt: 1, MaxAttempts: 3, FailAll: "boom", Rows: rows}
		}
		out, err := engine.Ack(ctx, d.Executor(), engine.AckParams{Batches: []engine.AckBatch{batch(drovertype.NewLeaseToken()), batch(token)}, Now: time.Now()})
		if err != nil || fmt.Sprint(out) != "[{false false} {true false}]" {
			t.Fatalf("ack: %v, %v; want the stranger's refused, the holder's accepted", out, err)
		}
		counts, err := d.Executor().JobCountByState(ctx, "topic:t")
		if err != nil || counts[drovertype.JobStateAvailable] != 1 {
			t.Fatalf("retry queue %v, %v; want the accepted ack's retry job", counts, err)
		}
	})

	t.Run("TopicAck/same lane twice", func(t *testing.T) {
		// A current and a stale ack of one lane in one call: the current
		// one is accepted with its failure, the stale one refused, on
		// every store (a statement updating a lane for two of its
		// entries applies one of them, and SQLite told acks apart by
		// lane alone).
		t.Parallel()
		ctx := context.Background()
		d, te := topics(t, 1, "a")
		ids := publish(t, te, 0, "1", "2")
		stale := drovertype.NewLeaseToken()
		leased := leaseSome(t, te, stale, "a")
		rows := read(t, te, leased[0])
		if ok, err := te.TopicLaneExpire(ctx, "t", "a", 0); err != nil || !ok {
			t.Fatalf("expire: %v, %v", ok, err)
		}
		fresh := drovertype.NewLeaseToken()
		if again := lease(t, te, fresh, "a"); len(again) != 1 {
			t.Fatalf("lease after expiry: %+v", again)
		}
		ack := func(token drovertype.LeaseToken, failed int64) engine.AckBatch {
			return engine.AckBatch{Ack: droverdriver.LaneAck{Topic: "t", Subscription: "a", Lane: 0, Token: token, Cursor: rows[1].Position(), Count: 2},
				Attempt: 1, MaxAttempts: 3, Failed: map[int64]string{failed: "boom"}, Rows: rows}
		}
		out, err := engine.Ack(ctx, d.Executor(), engine.AckParams{Batches: []engine.AckBatch{ack(fresh, ids[1]), ack(stale, ids[0])}, Now: time.Now()})
		if err != nil || fmt.Sprint(out) != "[{true false} {false false}]" {
			t.Fatalf("ack [fresh, stale]: %v, %v; want [accepted, refused]", out, err)
		}
		jobs, err := d.Executor().JobList(ctx, droverdriver.ListParams{Queue: "topic:t", Limit: 10})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("retry jobs %v, %v; want one", jobs, err)
		}
		var args engine.TopicRetryArgs
		if err := json.Unmarshal(jobs[0].EncodedArgs, &args); err != nil || args.ID != ids[1] {
			t.Fatalf("retry job of message %d (%v), want message %d's", args.ID, err, ids[1])
		}
	})

	t.Run("TopicLease/attempts", func(t *testing.T) {
		// A lease counts a delivery; an expired lease leaves it counted and
		// the next lease delivers the same batch, one message at a time,
		// until past it; a release takes its delivery back.
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 1, "a")
		ids := publish(t, te, 0, "1", "2", "3")
		first := leaseSome(t, te, drovertype.NewLeaseToken(), "a")
		if l := first[0]; l.Attempt != 1 || l.Limit != 100 || l.To.ID != ids[2] {
			t.Fatalf("first lease %+v, want attempt 1 of a batch of 100 up to %d", l, ids[2])
		}
		ids = append(ids, publish(t, te, 0, "4")...) // past the batch's bound
		if ok, err := te.TopicLaneExpire(ctx, "t", "a", 0); err != nil || !ok {
			t.Fatalf("expire: %v, %v", ok, err)
		}
		token := drovertype.NewLeaseToken()
		second := lease(t, te, token, "a")
		if len(second) != 1 || second[0].Attempt != 2 || second[0].To != first[0].To || second[0].Limit != 100 {
			t.Fatalf("lease after expiry %+v, want attempt 2 of the same batch", second)
		}
		// The consumer delivers one message (the region is the batch's 3),
		// and acks it: the next two were delivered once already.
		rows := read(t, te, second[0])
		acked, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Now: time.Now(), Acks: []droverdriver.LaneAck{
			{Topic: "t", Subscription: "a", Lane: 0, Token: token, Cursor: rows[0].Position(), Count: 1}}})
		if err != nil || len(acked) != 1 {
			t.Fatalf("ack: %v, %v", acked, err)
		}
		token = drovertype.NewLeaseToken()
		third := lease(t, te, token, "a")
		// The region is what is left of the batch: 99 more messages at
		// most, up to its bound.
		if len(third) != 1 || third[0].Attempt != 2 || third[0].Limit != 99 || third[0].To != first[0].To || third[0].Cursor != rows[0].Position() {
			t.Fatalf("lease in the region %+v, want attempt 2 of the rest of the batch", third)
		}
		// Released, the delivery is taken back.
		if released, err := te.TopicRelease(ctx, droverdriver.TopicExtendParams{Now: time.Now(),
			Lanes: []droverdriver.LaneAck{{Topic: "t", Subscription: "a", Lane: 0, Token: token}}}); err != nil || !slices.Equal(released, []int{0}) {
			t.Fatalf("release: %v, %v", released, err)
		}
		lanes, err := te.TopicLanes(ctx, "t", "a")
		if err != nil || len(lanes) != 1 || lanes[0].Attempt != 1 || lanes[0].Holder != "" || lanes[0].Pending != 3 {
			t.Fatalf("lanes %+v, %v; want lane 0 free, 3 pending, its next message delivered once", lanes, err)
		}
		// Past the region (two acks of one message), batches are whole
		// again and new.
		for range 2 {
			token = drovertype.NewLeaseToken()
			l := lease(t, te, token, "a")
			rows = read(t, te, l[0])
			if _, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Now: time.Now(), Acks: []droverdriver.LaneAck{
				{Topic: "t", Subscription: "a", Lane: 0, Token: token, Cursor: rows[0].Position(), Count: 1}}}); err != nil {
				t.Fatal(err)
			}
		}
		last := lease(t, te, drovertype.NewLeaseToken(), "a")
		if len(last) != 1 || last[0].Attempt != 1 || last[0].Limit != 100 || last[0].To.ID != ids[3] {
			t.Fatalf("lease past the region %+v, want a first delivery of a new batch up to %d", last, ids[3])
		}
	})

	t.Run("TopicAck/keep", func(t *testing.T) {
		// A kept lane stays leased as a new batch delivered once, unless
		// it delivers one message at a time.
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 1, "a")
		publish(t, te, 0, "1", "2", "3")
		token := drovertype.NewLeaseToken()
		l := leaseSome(t, te, token, "a")[0]
		rows := read(t, te, l)
		acked, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Now: time.Now(), Lease: time.Minute, Acks: []droverdriver.LaneAck{
			{Topic: "t", Subscription: "a", Lane: 0, Token: token, Cursor: rows[0].Position(), Count: 1, Keep: true, Limit: 1}}})
		if err != nil || !slices.Equal(acked, []droverdriver.AckedLane{{Index: 0, Kept: true}}) {
			t.Fatalf("ack with keep: %v, %v; want accepted and kept", acked, err)
		}
		lanes, err := te.TopicLanes(ctx, "t", "a")
		if err != nil || lanes[0].Holder != "o" || lanes[0].Attempt != 1 || lanes[0].Cursor != rows[0].Position() {
			t.Fatalf("lanes %+v, %v; want held by o at message 1, its next batch delivered once", lanes, err)
		}
		if ok, err := te.TopicLaneExpire(ctx, "t", "a", 0); err != nil || !ok {
			t.Fatalf("expire: %v, %v", ok, err)
		}
		token = drovertype.NewLeaseToken()
		isolated := lease(t, te, token, "a")
		if len(isolated) != 1 || isolated[0].Attempt != 2 {
			t.Fatalf("lease after the kept lane expired: %+v, want attempt 2", isolated)
		}
		acked, err = te.TopicAck(ctx, droverdriver.TopicAckParams{Now: time.Now(), Lease: time.Minute, Acks: []droverdriver.LaneAck{
			{Topic: "t", Subscription: "a", Lane: 0, Token: token, Cursor: rows[1].Position(), Count: 1, Keep: true, Limit: 1}}})
		if err != nil || !slices.Equal(acked, []droverdriver.AckedLane{{Index: 0, Kept: false}}) {
			t.Fatalf("ack with keep of a lane delivering one at a time: %v, %v; want accepted, not kept", acked, err)
		}
	})

	t.Run("TopicLease/fair share", func(t *testing.T) {
		// Of 4 lanes with messages, a consumer takes its share: all of
		// them alone, 2 while another holds one, and one left short
		// becomes the subscription's waiter, which halves the holder's
		// share and stops its lanes from being kept.
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 4, "a")
		for lane := range 4 {
			publish(t, te, lane, "m")
		}
		leaseAs := func(owner string, token drovertype.LeaseToken, max int) []droverdriver.LeasedLane {
			t.Helper()
			leased, err := te.TopicLease(ctx, droverdriver.TopicLeaseParams{Owner: owner, Token: token, Lease: time.Minute,
				Max: max, Waiting: time.Minute, Now: time.Now(), Subscriptions: []droverdriver.SubscriptionRef{{Topic: "t", Name: "a"}}, Limits: []int{10}})
			if err != nil {
				t.Fatal(err)
			}
			return leased
		}
		type held struct {
			token drovertype.LeaseToken
			lanes []droverdriver.LeasedLane
		}
		holders := map[string]held{}
		take := func(owner string, max int) int {
			t.Helper()
			h := held{token: drovertype.NewLeaseToken()}
			h.lanes = leaseAs(owner, h.token, max)
			holders[owner] = h
			return len(h.lanes)
		}
		waitfor.Cond(t, "one lane leased by b", func() bool { return take("b", 1) == 1 })
		if n := take("a", 4); n != 2 {
			t.Fatalf("a leased %d lanes while b holds one, want its share of 2 (4 lanes, 2 consumers)", n)
		}
		// c's share is ceil(4/3) = 2, and one lane is left.
		if n := take("c", 4); n != 1 {
			t.Fatalf("c leased %d lanes, want the one left", n)
		}
		// d finds every lane with messages held, under its share: it
		// waits for one of them.
		if n := take("d", 4); n != 0 {
			t.Fatalf("d leased %d lanes with every lane held", n)
		}
		lanes, err := te.TopicLanes(ctx, "t", "a")
		if err != nil {
			t.Fatal(err)
		}
		count := map[string]int{}
		for _, l := range lanes {
			count[l.Holder]++
		}
		if fmt.Sprint(count) != "map[a:2 b:1 c:1]" {
			t.Fatalf("holders %v, want a 2, b 1, c 1", count)
		}
		// The lane d waits for is not kept past its ack, so that d can
		// take it; the others are.
		kept := 0
		for _, owner := range []string{"a", "b", "c"} {
			h := holders[owner]
			for _, l := range h.lanes {
				rows := read(t, te, l)
				acked, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Now: time.Now(), Lease: time.Minute, Acks: []droverdriver.LaneAck{
					{Topic: "t", Subscription: "a", Lane: l.Lane, Token: h.token, Cursor: rows[0].Position(), Count: 1, Keep: true, Limit: 10}}})
				if err != nil || len(acked) != 1 {
					t.Fatalf("ack of %s's lane %d: %v, %v", owner, l.Lane, acked, err)
				}
				if acked[0].Kept {
					kept++
				}
			}
		}
		if kept != 3 {
			t.Fatalf("%d of 4 lanes kept past their acks, want all but the one d waits for", kept)
		}
		// d counts in a's share: of the lanes with messages again, a (which
		// holds 2, its share of 4 among a, b, c and d being 1) takes none.
		for lane := range 4 {
			publish(t, te, lane, "m")
		}
		waitfor.Cond(t, "the freed lane leased by d", func() bool { return take("d", 4) == 1 })
		if n := take("a", 4); n != 0 {
			t.Fatalf("a leased %d more lanes past its share", n)
		}
	})

	t.Run("TopicRead/bounds", func(t *testing.T) {
		// A range reads up to its bound, at most its limit, and a read
		// within a byte budget in range order, the first message whatever
		// its size.
		t.Parallel()
		_, te := topics(t, 2, "a")
		publish(t, te, 0, "aaaa", "bbbb", "cccc", "dddd")
		publish(t, te, 1, "eeee", "ffff")
		var lane0 []*droverdriver.MessageRow
		waitfor.Cond(t, "both lanes readable", func() bool {
			leased := lease(t, te, drovertype.NewLeaseToken(), "a")
			for _, l := range leased {
				if l.Lane == 0 {
					lane0 = read(t, te, l)
				}
			}
			return len(leased) == 2
		})
		read := func(p droverdriver.TopicReadParams) string {
			t.Helper()
			rows, err := te.TopicRead(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, m := range rows {
				out = append(out, fmt.Sprintf("%d:%s", m.Range, m.Payload))
			}
			return strings.Join(out, " ")
		}
		p := droverdriver.TopicReadParams{Topics: []string{"t", "t"}, Lanes: []int{0, 1}, Cursors: []droverdriver.Position{{}, {}},
			Tos: []droverdriver.Position{lane0[2].Position(), droverdriver.PositionMax}, Limits: []int{10, 1}}
		if got := read(p); got != "0:aaaa 0:bbbb 0:cccc 1:eeee" {
			t.Fatalf("read %q, want lane 0 up to its bound, lane 1 its limit of 1", got)
		}
		// Metadata is stored as "{}" when none is given: each message
		// weighs its payload and that.
		size := int64(4 + len("{}"))
		p.MaxBytes = 2*size + 1
		if got := read(p); got != "0:aaaa 0:bbbb" {
			t.Fatalf("read within %d bytes %q, want the first two messages", p.MaxBytes, got)
		}
		p.MaxBytes = 1
		if got := read(p); got != "0:aaaa" {
			t.Fatalf("read within 1 byte %q, want the first message whatever its size", got)
		}
	})

	t.Run("TopicLanes", func(t *testing.T) {
		// A subscription's lanes with their holders; an operator ends a
		// live lease as if it had expired.
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 2, "a")
		publish(t, te, 1, "x", "y")
		// Messages committed while no consumer ran count in the lag (on
		// PostgreSQL, once the lanes' own sequencing pass made them
		// readable).
		lanes, err := te.TopicLanes(ctx, "t", "a")
		if err != nil || len(lanes) != 2 || lanes[1].Pending != 2 || lanes[1].Holder != "" || lanes[1].Attempt != 0 {
			t.Fatalf("lanes before any lease %+v, %v; want lane 1 free with 2 pending", lanes, err)
		}
		leased := leaseSome(t, te, drovertype.NewLeaseToken(), "a")
		lanes, err = te.TopicLanes(ctx, "t", "a")
		if err != nil || len(lanes) != 2 || lanes[0].Holder != "" || lanes[1].Holder != "o" || lanes[1].LeaseExpiresAt == nil ||
			lanes[1].Pending != 2 || lanes[1].Attempt != 1 || lanes[0].Pending != 0 {
			t.Fatalf("lanes %+v, %v; want lane 1 held by o with 2 pending", lanes, err)
		}
		if ok, err := te.TopicLaneExpire(ctx, "t", "a", 1); err != nil || !ok {
			t.Fatalf("expire a held lane: %v, %v", ok, err)
		}
		if ok, err := te.TopicLaneExpire(ctx, "t", "a", 1); err != nil || ok {
			t.Fatalf("expire a free lane: %v, %v; want false", ok, err)
		}
		lanes, err = te.TopicLanes(ctx, "t", "a")
		if err != nil || lanes[1].Holder != "" || lanes[1].Attempt != 1 {
			t.Fatalf("lanes after the expiry %+v, %v; want lane 1 free, its delivery counted", lanes, err)
		}
		if again := lease(t, te, drovertype.NewLeaseToken(), "a"); len(again) != 1 || again[0].Lane != leased[0].Lane || again[0].Attempt != 2 {
			t.Fatalf("lease after the expiry %+v, want lane 1 again, attempt 2", again)
		}
		if lanes, err := te.TopicLanes(ctx, "t", "none"); err != nil || len(lanes) != 0 {
			t.Fatalf("lanes of a missing subscription: %v, %v", lanes, err)
		}
	})

	t.Run("SubscriptionGet", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 3, "a")
		s, err := te.SubscriptionGet(ctx, "t", "a")
		if err != nil || s.Topic != "t" || s.Name != "a" || s.MaxAttempts != 3 || s.Lanes != 3 || s.CreatedAt.IsZero() {
			t.Fatalf("subscription %+v, %v", s, err)
		}
		if _, err := te.SubscriptionGet(ctx, "t", "none"); !errors.Is(err, droverdriver.ErrSubscriptionNotFound) {
			t.Fatalf("missing subscription: %v, want ErrSubscriptionNotFound", err)
		}
		if _, err := te.SubscriptionGet(ctx, "none", "a"); !errors.Is(err, droverdriver.ErrTopicNotFound) {
			t.Fatalf("missing topic: %v, want ErrTopicNotFound", err)
		}
	})

	t.Run("TopicReceiptKey", func(t *testing.T) {
		// The first key offered is stored; every later caller gets it.
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 1)
		first, err := te.TopicReceiptKey(ctx, []byte("first key of thirty-two bytes...."))
		if err != nil || string(first) != "first key of thirty-two bytes...." {
			t.Fatalf("key %q, %v; want the first offered", first, err)
		}
		again, err := te.TopicReceiptKey(ctx, []byte("another key"))
		if err != nil || string(again) != string(first) {
			t.Fatalf("key %q, %v; want the stored one", again, err)
		}
	})

	t.Run("TopicExtend", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 2, "a")
		publish(t, te, 0, "x")
		token := drovertype.NewLeaseToken()
		leased := leaseSome(t, te, token, "a")
		lanes := []droverdriver.LaneAck{{Topic: "t", Subscription: "a", Lane: leased[0].Lane, Token: token},
			{Topic: "t", Subscription: "a", Lane: 1 - leased[0].Lane, Token: token}}
		got, err := te.TopicExtend(ctx, droverdriver.TopicExtendParams{Lanes: lanes, Lease: time.Minute, Now: time.Now()})
		if err != nil || !slices.Equal(got, []int{0}) {
			t.Fatalf("extend %v, %v; want only the leased lane", got, err)
		}
	})

	// sealed rotates t's store to a new generation and returns the sealed
	// one once it is settled: once no transaction that could still write
	// into it runs (on PostgreSQL, no open publisher older than the seal).
	sealed := func(t *testing.T, te droverdriver.TopicExecutor) droverdriver.Generation {
		t.Helper()
		ctx := context.Background()
		gens, err := te.TopicGenerations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cur := gens[len(gens)-1]
		if err := te.TopicRotate(ctx, cur.Gen+1); err != nil {
			t.Fatal(err)
		}
		var g droverdriver.Generation
		waitfor.Cond(t, "the sealed generation settled", func() bool {
			gens, err = te.TopicGenerations(ctx)
			if err != nil || len(gens) < 2 || gens[len(gens)-2].Gen != cur.Gen || gens[len(gens)-2].SealedAt == nil {
				t.Fatalf("generations %+v, %v; want %d sealed", gens, err, cur.Gen)
			}
			g = gens[len(gens)-2]
			return g.Settled
		})
		return g
	}
	// ackAll acks every lane of sub of topic "t" that has a readable
	// message up to what it can read.
	ackAll := func(t *testing.T, te droverdriver.TopicExecutor, sub string) {
		t.Helper()
		token := drovertype.NewLeaseToken()
		var acks []droverdriver.LaneAck
		for _, l := range leaseSome(t, te, token, sub) {
			cursor := l.Cursor
			for _, m := range read(t, te, l) {
				cursor = m.Position()
			}
			acks = append(acks, droverdriver.LaneAck{Topic: l.Topic, Subscription: sub, Lane: l.Lane, Token: token, Cursor: cursor})
		}
		if _, err := te.TopicAck(context.Background(), droverdriver.TopicAckParams{Acks: acks, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	lagOf := func(t *testing.T, te droverdriver.TopicExecutor, topic, sub string) drovertype.SubscriptionLag {
		t.Helper()
		lag, err := te.TopicLag(context.Background(), []string{topic})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lag {
			if l.Subscription == sub {
				return l
			}
		}
		t.Fatalf("no lag of %s/%s in %+v", topic, sub, lag)
		return drovertype.SubscriptionLag{}
	}

	t.Run("TopicGenerations", func(t *testing.T) {
		// A rotation seals the current generation, measured by the
		// store's clock; a drop marked by TopicDropMark removes it, each
		// call at most Limit messages on a store that deletes rows, and
		// counts what each lane had not read.
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 1, "a")
		publish(t, te, 0, "old", "older", "oldest")
		gens, err := te.TopicGenerations(ctx)
		if err != nil || len(gens) != 1 || gens[0].SealedAt != nil || gens[0].SealedFor != 0 || gens[0].Age < 0 || gens[0].Dropping {
			t.Fatalf("generations %+v, %v; want one current", gens, err)
		}
		g := sealed(t, te)
		newer := publish(t, te, 0, "new")
		if newer[0] < (g.Gen+1)*droverdriver.GenerationWidth {
			t.Fatalf("message %d published after the rotation is not in the new generation", newer[0])
		}
		waitfor.Cond(t, "the generation sealed for a while by the store's clock", func() bool {
			gens, err = te.TopicGenerations(ctx)
			return err == nil && gens[0].SealedFor > 0 && gens[0].Age >= gens[0].SealedFor
		})
		in, err := te.TopicGenerationTopics(ctx, g.Gen)
		if err != nil || len(in) != 1 || in[0].Topic != "t" || in[0].Passed {
			t.Fatalf("generation topics %+v, %v; want t, not passed by a", in, err)
		}
		if err := te.TopicDropMark(ctx, g.Gen); err != nil {
			t.Fatal(err)
		}
		if gens, err = te.TopicGenerations(ctx); err != nil || !gens[0].Dropping || gens[1].Dropping {
			t.Fatalf("generations %+v, %v; want the first dropping", gens, err)
		}
		var lost int64
		for calls := 0; ; calls++ {
			if calls > 4 {
				t.Fatalf("the drop of three messages did not end after %d calls of Limit 1", calls)
			}
			res, err := te.TopicDrop(ctx, droverdriver.TopicDropParams{Gen: g.Gen, Limit: 1})
			if err != nil || res.Deleted > 1 {
				t.Fatalf("drop: %+v, %v; want at most one message a call", res, err)
			}
			if lost += res.Lost; res.Done {
				break
			}
		}
		if lost != 3 {
			t.Fatalf("drop lost %d messages, want the three a had not read", lost)
		}
		if gens, err = te.TopicGenerations(ctx); err != nil || len(gens) != 1 || gens[0].Gen != g.Gen+1 {
			t.Fatalf("generations %+v, %v; want the dropped one gone", gens, err)
		}
		if l := lagOf(t, te, "t", "a"); l.Dropped != 3 || l.Pending != 1 {
			t.Fatalf("lag %+v; want 3 dropped and the new message pending", l)
		}
	})

	t.Run("TopicPurge", func(t *testing.T) {
		// A purge deletes one topic's messages from a sealed generation,
		// at most Limit a call, going on where the last call stopped,
		// and counts what each lane had not read; other topics' messages
		// and the topic's messages of other generations stay.
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 2, "a", "b")
		topicU(t, te)
		publish(t, te, 0, "t1", "t2", "t3")
		publish(t, te, 1, "t4", "t5")
		if _, err := te.TopicPublish(ctx, []droverdriver.PublishParams{{Topic: "u", Payload: []byte("u1")}, {Topic: "u", Payload: []byte("u2")}}); err != nil {
			t.Fatal(err)
		}
		waitfor.Cond(t, "b read every message of t", func() bool {
			ackAll(t, te, "b")
			return lagOf(t, te, "t", "b").Pending == 0
		})
		g := sealed(t, te)
		publish(t, te, 0, "t6")
		p := droverdriver.TopicPurgeParams{Gen: g.Gen, Topic: "t", Limit: 2}
		var deleted, lost int64
		for calls := 0; ; calls++ {
			if calls > 8 {
				t.Fatalf("the purge of five messages did not end after %d calls of Limit 2", calls)
			}
			res, err := te.TopicPurge(ctx, p)
			if err != nil || res.Deleted > 2 {
				t.Fatalf("purge: %+v, %v; want at most two messages a call", res, err)
			}
			deleted, lost = deleted+res.Deleted, lost+res.Lost
			if res.Done {
				break
			}
			p.After = res.Last
		}
		if deleted != 5 || lost != 5 {
			t.Fatalf("purge deleted %d and lost %d, want t's five messages, all lost by a", deleted, lost)
		}
		if l := lagOf(t, te, "t", "a"); l.Dropped != 5 || l.Pending != 1 {
			t.Fatalf("lag of t/a %+v; want 5 dropped and t6 pending", l)
		}
		if l := lagOf(t, te, "t", "b"); l.Dropped != 0 || l.Pending != 1 {
			t.Fatalf("lag of t/b %+v; want nothing dropped (it had read them) and t6 pending", l)
		}
		if l := lagOf(t, te, "u", "a"); l.Dropped != 0 || l.Pending != 2 {
			t.Fatalf("lag of u/a %+v; want u's messages untouched", l)
		}
		in, err := te.TopicGenerationTopics(ctx, g.Gen)
		if err != nil || len(in) != 1 || in[0].Topic != "u" {
			t.Fatalf("generation topics %+v, %v; want u alone", in, err)
		}
	})

	t.Run("TopicRemoveNotSequenced", func(t *testing.T) {
		// Messages no lease, lag or retention check has made readable yet
		// (on PostgreSQL their xid is still negative) are removed by a
		// purge and a drop like any other, and counted as lost: no lane
		// has passed them.
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 1, "a")
		topicU(t, te)
		publish(t, te, 0, "t1", "t2")
		if _, err := te.TopicPublish(ctx, []droverdriver.PublishParams{{Topic: "u", Payload: []byte("u1")}}); err != nil {
			t.Fatal(err)
		}
		g := sealed(t, te)
		res, err := te.TopicPurge(ctx, droverdriver.TopicPurgeParams{Gen: g.Gen, Topic: "t", Limit: 10})
		if err != nil || res.Deleted != 2 || res.Lost != 2 || !res.Done {
			t.Fatalf("purge of t: %+v, %v; want both messages deleted and lost in one call", res, err)
		}
		var lost int64
		for calls := 0; ; calls++ {
			if calls > 4 {
				t.Fatalf("the drop of one message did not end after %d calls", calls)
			}
			res, err := te.TopicDrop(ctx, droverdriver.TopicDropParams{Gen: g.Gen, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if lost += res.Lost; res.Done {
				break
			}
		}
		if lost != 1 {
			t.Fatalf("the drop lost %d, want u1", lost)
		}
		if l := lagOf(t, te, "t", "a"); l.Dropped != 2 || l.Pending != 0 {
			t.Fatalf("lag of t/a %+v; want 2 dropped", l)
		}
		if l := lagOf(t, te, "u", "a"); l.Dropped != 1 || l.Pending != 0 {
			t.Fatalf("lag of u/a %+v; want 1 dropped", l)
		}
	})
}
