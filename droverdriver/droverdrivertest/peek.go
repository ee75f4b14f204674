package droverdrivertest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// testTopicTail covers TopicExecutor.TopicTail: the newest messages of
// each lane before a position, oldest first, reading nothing of another
// topic and moving no subscription.
func testTopicTail(t *testing.T, setup opener) {
	t.Run("TopicTail", func(t *testing.T) {
		t.Parallel()
		ctx := context.Background()
		d := setup(t)
		te, ok := d.Executor().(droverdriver.TopicExecutor)
		if !ok {
			t.Skipf("%s does not implement droverdriver.TopicExecutor", d.Name())
		}
		for _, name := range []string{"t", "other"} {
			if _, err := te.TopicCreate(ctx, droverdriver.TopicParams{Name: name, Lanes: 3, Now: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		var msgs []droverdriver.PublishParams
		for i, lane := range []int{0, 0, 0, 1, 0} {
			msgs = append(msgs, droverdriver.PublishParams{Topic: "t", Lane: lane, Key: "k", Payload: []byte{'a' + byte(i)}})
		}
		msgs = append(msgs, droverdriver.PublishParams{Topic: "other", Lane: 2, Payload: []byte("x")})
		ids, err := te.TopicPublish(ctx, msgs)
		if err != nil {
			t.Fatal(err)
		}
		// On a store that sequences messages, TopicTail's own pass makes
		// them readable, unless another pass ran at once (then the next
		// call's).
		var got []*droverdriver.MessageRow
		newest := []droverdriver.Position{droverdriver.PositionMax, droverdriver.PositionMax, droverdriver.PositionMax}
		waitfor.Cond(t, "the messages readable", func() bool {
			if got, err = te.TopicTail(ctx, "t", newest, 2); err != nil {
				t.Fatal(err)
			}
			return len(got) == 3
		})
		var gotIDs []int64
		for _, m := range got {
			gotIDs = append(gotIDs, m.ID)
			if m.Range != 0 || m.Key != "k" || m.PublishedAt.IsZero() {
				t.Errorf("message %+v", m)
			}
		}
		if want := []int64{ids[2], ids[4], ids[3]}; !slices.Equal(gotIDs, want) {
			t.Fatalf("tail %v, want the two newest of lane 0 and lane 1's %v", gotIDs, want)
		}
		if string(got[0].Payload) != "c" || got[0].Lane != 0 || got[2].Lane != 1 {
			t.Fatalf("tail %+v", got)
		}
		// The tail's positions are those a reader from the start finds, so
		// that a peek's cursor never passes a message nor shows one twice.
		all, err := te.TopicRead(ctx, droverdriver.TopicReadParams{Topics: []string{"t"}, Lanes: []int{0},
			Cursors: []droverdriver.Position{{}}, Tos: []droverdriver.Position{droverdriver.PositionMax}, Limits: []int{10}})
		if err != nil || len(all) != 4 || all[2].Position() != got[0].Position() || all[3].Position() != got[1].Position() {
			t.Fatalf("lane 0 from the start %+v, %v; want its last two at the tail's positions %v, %v", all, err,
				got[0].Position(), got[1].Position())
		}
		// TopicRead goes on after the tail's positions.
		more, err := te.TopicRead(ctx, droverdriver.TopicReadParams{Topics: []string{"t"}, Lanes: []int{0},
			Cursors: []droverdriver.Position{got[1].Position()}, Tos: []droverdriver.Position{droverdriver.PositionMax}, Limits: []int{10}})
		if err != nil || len(more) != 0 {
			t.Fatalf("read after the tail: %+v, %v; want nothing", more, err)
		}
		// Back from the tail's oldest of lane 0, and from lane 1's only
		// message: lane 0's two before it, none of lane 1.
		older, err := te.TopicTail(ctx, "t", []droverdriver.Position{got[0].Position(), got[2].Position(), droverdriver.PositionMax}, 5)
		if err != nil || len(older) != 2 || older[0].ID != ids[0] || older[1].ID != ids[1] {
			t.Fatalf("tail before the tail %+v, %v; want lane 0's first two, %v and %v", older, err, ids[0], ids[1])
		}
		if none, err := te.TopicTail(ctx, "nosuch", newest, 2); err != nil || len(none) != 0 {
			t.Fatalf("tail of a topic that is not stored: %+v, %v", none, err)
		}
	})
}
