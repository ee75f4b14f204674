package drover_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestPeekTopic: PeekTopic shows a topic's newest messages in publish
// order, goes on from its cursor with those published since, and consumes
// nothing: a subscription's lag is the same after it (issue 38: no way to
// look at a topic without consuming it).
func TestPeekTopic(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		_, c := topicSetup(t, s, 3, "audit")
		peeker := c.(interface {
			PeekTopic(ctx context.Context, topic string, limit int, cursor string) (*drover.TopicPeek, error)
		})
		publish := func(keys ...string) []int64 {
			t.Helper()
			msgs := make([]drover.Message, len(keys))
			for i, k := range keys {
				msgs[i] = drover.Message{Key: k, Payload: []byte("m-" + k)}
			}
			ids, err := c.Publish(ctx, "chat", msgs...)
			if err != nil {
				t.Fatal(err)
			}
			return ids
		}
		ids := publish("a", "b", "c", "d", "e")
		// On PostgreSQL PeekTopic's sequencing pass makes the messages
		// readable, unless another pass ran at once (then the next call's).
		var peek *drover.TopicPeek
		waitfor.Cond(t, "the newest three messages", func() bool {
			var err error
			if peek, err = peeker.PeekTopic(ctx, "chat", 3, ""); err != nil {
				t.Fatal(err)
			}
			return len(peek.Messages) == 3
		})
		var got []int64
		for _, m := range peek.Messages {
			got = append(got, m.ID)
			if string(m.Payload) != "m-"+m.Key {
				t.Errorf("message %+v", m)
			}
		}
		if !slices.Equal(got, ids[2:]) {
			t.Fatalf("peek %v, want the newest three %v", got, ids[2:])
		}
		more := publish("f", "g")
		var next []int64
		waitfor.Cond(t, "the messages published since", func() bool {
			p, err := peeker.PeekTopic(ctx, "chat", 10, peek.Cursor)
			if err != nil {
				t.Fatal(err)
			}
			next = next[:0]
			for _, m := range p.Messages {
				next = append(next, m.ID)
			}
			return len(next) >= len(more)
		})
		if !slices.Equal(next, more) {
			t.Fatalf("peek from the cursor %v, want %v", next, more)
		}
		lag, err := c.SubscriptionLag(ctx, "chat")
		if err != nil || len(lag) != 1 || lag[0].Pending != 7 {
			t.Fatalf("lag after peeking %+v, %v; want all 7 messages pending", lag, err)
		}
		for _, tc := range []struct {
			topic, cursor string
			limit         int
			want          error
		}{
			{"nosuch", "", 3, drover.ErrTopicNotFound},
			{"chat", "", 0, drover.ErrInvalid},
			{"chat", "0.1,0.2", 3, drover.ErrInvalid},
			{"chat", "x,y,z", 3, drover.ErrInvalid},
		} {
			if _, err := peeker.PeekTopic(ctx, tc.topic, tc.limit, tc.cursor); !errors.Is(err, tc.want) {
				t.Errorf("peek %s limit %d cursor %q: %v, want %v", tc.topic, tc.limit, tc.cursor, err, tc.want)
			}
		}
		if _, err := peeker.PeekTopic(ctx, "nosuch", 3, ""); err == nil || err.Error() != fmt.Sprintf("%v: %q", drover.ErrTopicNotFound, "nosuch") {
			t.Errorf("peek of a missing topic: %v, want it named", err)
		}
	})
}

// TestPeekTopicOlderPages (issue 38): from the newest page, the Older
// cursors page back through every message of the topic, each on exactly
// one page, no page over its limit, and messages published while paging
// never show as older ones; the last page has no Older cursor.
func TestPeekTopicOlderPages(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		_, c := topicSetup(t, s, 3)
		peeker := c.(interface {
			PeekTopic(ctx context.Context, topic string, limit int, cursor string) (*drover.TopicPeek, error)
		})
		var all []int64
		for i := range 5 {
			msgs := make([]drover.Message, 5)
			for j := range msgs {
				msgs[j] = drover.Message{Key: fmt.Sprintf("k%d", (i*5+j)%7)}
			}
			ids, err := c.Publish(ctx, "chat", msgs...)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, ids...)
		}
		var peek *drover.TopicPeek
		waitfor.Cond(t, "the newest page", func() bool {
			var err error
			if peek, err = peeker.PeekTopic(ctx, "chat", 4, ""); err != nil {
				t.Fatal(err)
			}
			return len(peek.Messages) == 4 && peek.Messages[3].ID == all[len(all)-1]
		})
		seen := map[int64]int{}
		pages := 0
		for {
			pages++
			if len(peek.Messages) > 4 {
				t.Fatalf("page %d holds %d messages, over its limit of 4", pages, len(peek.Messages))
			}
			for _, m := range peek.Messages {
				seen[m.ID]++
			}
			if peek.Older == "" {
				break
			}
			if pages == 2 {
				if _, err := c.Publish(ctx, "chat", drover.Message{Key: "late"}, drover.Message{}); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if peek, err = peeker.PeekTopic(ctx, "chat", 4, peek.Older); err != nil {
				t.Fatal(err)
			}
			if peek.Cursor != "" {
				t.Fatalf("an older page has a newer cursor %q", peek.Cursor)
			}
			if pages > 20 {
				t.Fatalf("still paging after %d pages", pages)
			}
		}
		for _, id := range all {
			if seen[id] != 1 {
				t.Errorf("message %d shown on %d pages, want 1", id, seen[id])
			}
		}
		if len(seen) != len(all) || pages < 7 {
			t.Fatalf("%d pages showed %d messages, want the %d published before the first page, on at least 7 pages", pages, len(seen), len(all))
		}
		if _, err := peeker.PeekTopic(ctx, "chat", 4, "<1.2"); !errors.Is(err, drover.ErrInvalid) {
			t.Fatalf("an older cursor of another topic's lanes: %v, want ErrInvalid", err)
		}
	})
}

// TestPeekTopicBoundsBytes publishes 10 messages of 900 KiB: a peek of up
// to 50 shows no more than 4 MiB of them (a reader cannot make the store
// hand it a lane's whole megabyte payloads in one answer), the newest
// first, and the older pages and a cursor read go on from there, each
// message shown once.
func TestPeekTopicBoundsBytes(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		_, c := topicSetup(t, s, 2)
		peeker := c.(interface {
			PeekTopic(ctx context.Context, topic string, limit int, cursor string) (*drover.TopicPeek, error)
		})
		const n, size, budget = 10, 900 << 10, 4 << 20
		payload := []byte(`"` + strings.Repeat("x", size-2) + `"`)
		first, err := peeker.PeekTopic(ctx, "chat", 50, "")
		if err != nil {
			t.Fatal(err)
		}
		var all []int64
		for i := range n {
			ids, err := c.Publish(ctx, "chat", drover.Message{Key: fmt.Sprintf("k%d", i), Payload: payload})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, ids...)
		}
		check := func(what string, p *drover.TopicPeek) {
			t.Helper()
			var bytes int
			for _, m := range p.Messages {
				bytes += len(m.Payload) + len(m.Metadata)
			}
			if len(p.Messages) == 0 || bytes > budget {
				t.Fatalf("%s: %d messages of %d bytes, want at least one and at most %d bytes", what, len(p.Messages), bytes, budget)
			}
		}
		var peek *drover.TopicPeek
		waitfor.Cond(t, "the newest page", func() bool {
			if peek, err = peeker.PeekTopic(ctx, "chat", 50, ""); err != nil {
				t.Fatal(err)
			}
			return len(peek.Messages) > 0 && peek.Messages[len(peek.Messages)-1].ID == all[n-1]
		})
		seen := map[int64]int{}
		for pages := 1; ; pages++ {
			check(fmt.Sprintf("page %d", pages), peek)
			for _, m := range peek.Messages {
				seen[m.ID]++
			}
			if peek.Older == "" || pages > n {
				break
			}
			if peek, err = peeker.PeekTopic(ctx, "chat", 50, peek.Older); err != nil {
				t.Fatal(err)
			}
		}
		// The reads after the cursor of the peek before the publishes:
		// bounded too, and together every message once.
		read := map[int64]int{}
		next := first
		for reads := 1; reads <= n; reads++ {
			if next, err = peeker.PeekTopic(ctx, "chat", 50, next.Cursor); err != nil {
				t.Fatal(err)
			}
			if len(next.Messages) == 0 {
				break
			}
			check(fmt.Sprintf("read %d after the cursor", reads), next)
			for _, m := range next.Messages {
				read[m.ID]++
			}
		}
		for _, id := range all {
			if seen[id] != 1 || read[id] != 1 {
				t.Errorf("message %d shown on %d older pages and in %d cursor reads, want 1 and 1", id, seen[id], read[id])
			}
		}
	})
}
