package droverdrivertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/waitfor"
)

// testTopics covers droverdriver.TopicExecutor, an optional interface: a
// driver without it skips these tests.
func testTopics(t *testing.T, setup opener) {
	// topics returns the driver's TopicExecutor with topic "t" of lanes
	// lanes and the named subscriptions (from the earliest message).
	topics := func(t *testing.T, lanes int, subs ...string) (droverdriver.Driver, droverdriver.TopicExecutor) {
		t.Helper()
		d := setup(t)
		te, ok := d.(droverdriver.TopicExecutor)
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
	lease := func(t *testing.T, te droverdriver.TopicExecutor, token droverdriver.LeaseToken, subs ...string) []droverdriver.LeasedLane {
		t.Helper()
		p := droverdriver.TopicLeaseParams{Owner: "o", Token: token, Lease: time.Minute, Max: 100, Now: time.Now()}
		for _, s := range subs {
			p.Subscriptions = append(p.Subscriptions, droverdriver.SubscriptionRef{Topic: "t", Name: s})
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
	leaseSome := func(t *testing.T, te droverdriver.TopicExecutor, token droverdriver.LeaseToken, subs ...string) []droverdriver.LeasedLane {
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
			Cursors: []droverdriver.Position{l.Cursor}, Limit: 100})
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
		leaseSome(t, te, droverdriver.NewLeaseToken(), "a") // the messages are readable
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
			rows, err = te.TopicRead(ctx, droverdriver.TopicReadParams{Topics: []string{"t", "t", "u"}, Lanes: []int{0, 1, 0},
				Cursors: make([]droverdriver.Position, 3), Limit: 100})
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
		if got := lease(t, te, droverdriver.NewLeaseToken(), "a"); len(got) != 0 {
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
		token := droverdriver.NewLeaseToken()
		got := map[string][]string{}
		waitfor.Cond(t, "both topics' lanes leased", func() bool {
			leased, err := te.TopicLease(ctx, droverdriver.TopicLeaseParams{Owner: "o", Token: token, Lease: time.Minute, Max: 10, Now: time.Now(),
				Subscriptions: []droverdriver.SubscriptionRef{{Topic: "t", Name: "a"}, {Topic: "u", Name: "a"}}})
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
		token := droverdriver.NewLeaseToken()
		leased := leaseSome(t, te, token, "a")
		if len(leased) != 1 || leased[0].Topic != "t" || leased[0].Subscription != "a" || leased[0].MaxAttempts != 3 {
			t.Fatalf("leased %+v, want lane 0 of t/a with its stored max attempts", leased)
		}
		if again := lease(t, te, droverdriver.NewLeaseToken(), "a"); len(again) != 0 {
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
		ack := droverdriver.LaneAck{Topic: "t", Subscription: "a", Lane: 0, Token: droverdriver.NewLeaseToken(), Cursor: rows[2].Position()}
		if accepted, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Acks: []droverdriver.LaneAck{ack}, Now: time.Now()}); err != nil || len(accepted) != 0 {
			t.Fatalf("an ack under another token: %v, %v; want rejected", accepted, err)
		}
		ack.Token = token
		if accepted, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Acks: []droverdriver.LaneAck{ack}, Now: time.Now()}); err != nil || !slices.Equal(accepted, []int{0}) {
			t.Fatalf("ack: %v, %v", accepted, err)
		}
		if again := lease(t, te, droverdriver.NewLeaseToken(), "a"); len(again) != 0 {
			t.Fatalf("a lane with nothing past its cursor was leased: %+v", again)
		}
		lag, err := te.TopicLag(ctx, []string{"t"})
		if err != nil || len(lag) != 1 || lag[0].Pending != 0 {
			t.Fatalf("lag %+v, %v", lag, err)
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
		token := droverdriver.NewLeaseToken()
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
			Subscriptions: []droverdriver.SubscriptionRef{{Topic: "t", Name: "a"}, {Topic: "t", Name: "b"}}})
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
		if again := lease(t, te, droverdriver.NewLeaseToken(), one[0].Subscription); len(again) != 0 {
			t.Fatalf("a lane at the head of its topic's lane was leased: %v", names(again))
		}
		publish(t, te, 1, "z")
		if got := names(leaseSome(t, te, droverdriver.NewLeaseToken(), one[0].Subscription)); !slices.Equal(got, []string{"t/" + one[0].Subscription + "/1"}) {
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
		token := droverdriver.NewLeaseToken()
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
		show := func(lag []droverdriver.SubscriptionLag) string {
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
		t.Parallel()
		ctx := context.Background()
		d, te := topics(t, 1, "a")
		publish(t, te, 0, "x")
		token := droverdriver.NewLeaseToken()
		leased := leaseSome(t, te, token, "a")
		rows := read(t, te, leased[0])
		retry := job("topic:t")
		accepted, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Now: time.Now(),
			Acks:    []droverdriver.LaneAck{{Topic: "t", Subscription: "a", Lane: 0, Token: token, Cursor: rows[0].Position()}},
			Retries: []droverdriver.InsertParams{retry}, RetryAck: []int{0}})
		if err != nil || len(accepted) != 1 {
			t.Fatalf("ack: %v, %v", accepted, err)
		}
		counts, err := d.JobCountByState(ctx, "topic:t")
		if err != nil || counts[droverdriver.StateAvailable] != 1 {
			t.Fatalf("retry queue %v, %v; want the accepted ack's retry job", counts, err)
		}
	})

	t.Run("TopicExtend", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 2, "a")
		publish(t, te, 0, "x")
		token := droverdriver.NewLeaseToken()
		leased := leaseSome(t, te, token, "a")
		lanes := []droverdriver.LaneAck{{Topic: "t", Subscription: "a", Lane: leased[0].Lane, Token: token},
			{Topic: "t", Subscription: "a", Lane: 1 - leased[0].Lane, Token: token}}
		got, err := te.TopicExtend(ctx, droverdriver.TopicExtendParams{Lanes: lanes, Lease: time.Minute, Now: time.Now()})
		if err != nil || !slices.Equal(got, []int{0}) {
			t.Fatalf("extend %v, %v; want only the leased lane", got, err)
		}
	})

	t.Run("TopicGenerations", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		_, te := topics(t, 1, "a")
		publish(t, te, 0, "old")
		gens, err := te.TopicGenerations(ctx)
		if err != nil || len(gens) != 1 || gens[0].SealedAt != nil {
			t.Fatalf("generations %+v, %v; want one current", gens, err)
		}
		if err := te.TopicRotate(ctx, gens[0].Gen+1); err != nil {
			t.Fatal(err)
		}
		newer := publish(t, te, 0, "new")
		if newer[0] < (gens[0].Gen+1)*droverdriver.GenerationWidth {
			t.Fatalf("message %d published after the rotation is not in the new generation", newer[0])
		}
		// Settled once no transaction that could still write into it
		// runs (on PostgreSQL, no open publisher older than the seal).
		var sealed droverdriver.Generation
		waitfor.Cond(t, "the sealed generation settled", func() bool {
			gens, err = te.TopicGenerations(ctx)
			if err != nil || len(gens) != 2 || gens[0].SealedAt == nil {
				t.Fatalf("generations %+v, %v; want the first sealed", gens, err)
			}
			sealed = gens[0]
			return sealed.Settled
		})
		in, err := te.TopicGenerationTopics(ctx, sealed.Gen)
		if err != nil || len(in) != 1 || in[0].Topic != "t" || in[0].Passed {
			t.Fatalf("generation topics %+v, %v; want t, not passed by a", in, err)
		}
		lost, err := te.TopicDrop(ctx, sealed.Gen)
		if err != nil || lost != 1 {
			t.Fatalf("drop: %d lost, %v; want the one message a had not read", lost, err)
		}
		lag, err := te.TopicLag(ctx, []string{"t"})
		if err != nil || len(lag) != 1 || lag[0].Dropped != 1 || lag[0].Pending != 1 {
			t.Fatalf("lag %+v, %v; want 1 dropped and the new message pending", lag, err)
		}
	})
}
