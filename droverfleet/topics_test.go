package droverfleet_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/maintenance"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// topicsOnEachShard creates topics until one lives on shard 0 and one
// on shard 1, and returns those two.
func topicsOnEachShard(t *testing.T, f *fleet) [2]string {
	t.Helper()
	ctx := context.Background()
	var out [2]string
	for k := 0; out[0] == "" || out[1] == ""; k++ {
		name := fmt.Sprintf("t%d", k)
		if _, err := f.ex.TopicCreate(ctx, droverdriver.TopicParams{Name: name, Lanes: 1, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			rows, err := f.Shard(i).Executor().(droverdriver.TopicExecutor).TopicList(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r.Name == name && out[i] == "" {
					out[i] = name
				}
			}
		}
	}
	return out
}

// TestTopicGenerations: the leader's retainer rotates every shard's
// message generations in turn and drops every shard's sealed ones.
func TestTopicGenerations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := migrated(t, 2)
	topics := topicsOnEachShard(t, f)
	for _, topic := range topics {
		if _, err := f.ex.TopicPublish(ctx, []droverdriver.PublishParams{{Topic: topic, Payload: []byte(`{}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	r := &maintenance.TopicRetainer{Exec: f.ex, MaxMessages: 1}
	dropped := 0
	waitfor.Cond(t, "a sealed generation of each shard dropped", func() bool {
		n, _, err := r.RunOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		dropped += n
		return dropped >= 2
	})
	for i := range 2 {
		gens, err := f.Shard(i).Executor().(droverdriver.TopicExecutor).TopicGenerations(ctx)
		if err != nil || len(gens) == 0 || gens[0].Gen == 0 {
			t.Fatalf("shard %d's generations %+v, %v; want its first dropped", i, gens, err)
		}
	}
}

// TestTopicsAcrossShards: one publish of messages of topics on both
// shards, one lease of both subscriptions' lanes, one read and one ack
// deliver every message of each topic in publish order, and the lag says
// so.
func TestTopicsAcrossShards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := migrated(t, 2)
	topics := topicsOnEachShard(t, f)
	var subs []droverdriver.SubscriptionRef
	for _, topic := range topics {
		if _, err := f.ex.SubscriptionCreate(ctx, droverdriver.SubscriptionParams{Topic: topic, Name: "s", MaxAttempts: 3,
			Start: droverdriver.StartEarliest, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, droverdriver.SubscriptionRef{Topic: topic, Name: "s"})
	}
	var msgs []droverdriver.PublishParams
	for k := range 20 {
		msgs = append(msgs, droverdriver.PublishParams{Topic: topics[k%2], Payload: fmt.Appendf(nil, `{"n":%d}`, k)})
	}
	if ids, err := f.ex.TopicPublish(ctx, msgs); err != nil || len(ids) != 20 {
		t.Fatalf("publish: %v, %v", ids, err)
	}
	lag, err := f.ex.TopicLag(ctx, nil)
	if err != nil || len(lag) != 2 || lag[0].Pending != 10 || lag[1].Pending != 10 {
		t.Fatalf("lag %+v, %v; want both subscriptions 10 messages behind", lag, err)
	}
	token := drovertype.NewLeaseToken()
	lanes, err := f.ex.TopicLease(ctx, droverdriver.TopicLeaseParams{Subscriptions: subs, Limits: []int{100, 100}, Owner: "c", Token: token, Lease: time.Minute, Max: 10, Now: time.Now()})
	if err != nil || len(lanes) != 2 {
		t.Fatalf("lease: %+v, %v; want the lane of each subscription", lanes, err)
	}
	var read droverdriver.TopicReadParams
	for _, l := range lanes {
		read.Topics, read.Lanes, read.Cursors = append(read.Topics, l.Topic), append(read.Lanes, l.Lane), append(read.Cursors, l.Cursor)
		read.Tos, read.Limits = append(read.Tos, l.To), append(read.Limits, l.Limit)
	}
	// A byte budget smaller than any message holds across shards: the
	// first message alone, though each shard returns one of its own.
	small := read
	small.MaxBytes = 1
	if rows, err := f.ex.TopicRead(ctx, small); err != nil || len(rows) != 1 || rows[0].Range != 0 {
		t.Fatalf("read within 1 byte: %d rows, %v; want the first message of range 0 alone", len(rows), err)
	}
	rows, err := f.ex.TopicRead(ctx, read)
	if err != nil {
		t.Fatal(err)
	}
	var ack droverdriver.TopicAckParams
	for r, l := range lanes {
		var got []string
		var last droverdriver.Position
		for _, m := range rows {
			if m.Range == r {
				got = append(got, string(m.Payload))
				last = m.Position()
			}
		}
		var want []string
		for k := range 20 {
			if topics[k%2] == l.Topic {
				want = append(want, string(msgs[k].Payload))
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("topic %s read %v, want %v", l.Topic, got, want)
		}
		ack.Acks = append(ack.Acks, droverdriver.LaneAck{Topic: l.Topic, Subscription: "s", Lane: l.Lane, Token: token, Cursor: last, Count: len(got)})
	}
	ack.Now = time.Now()
	if accepted, err := f.ex.TopicAck(ctx, ack); err != nil || len(accepted) != 2 {
		t.Fatalf("ack: %v, %v; want both accepted", accepted, err)
	}
	if lag, err = f.ex.TopicLag(ctx, topics[:]); err != nil || len(lag) != 2 || lag[0].Pending != 0 || lag[1].Pending != 0 {
		t.Fatalf("lag after the ack %+v, %v; want none pending", lag, err)
	}
}
