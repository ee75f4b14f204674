package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/app/server"
)

// TestTopicRewindOverHTTP (issue 38, item 6): POST …/rewind takes a
// subscription back to the earliest message kept, so that a receive gets
// every message again, and the batch out at the rewind is refused on ack;
// a body that names no point, both, a time in the future or not a time is
// a 400 naming the field, and an unknown subscription a 404 naming it,
// with nothing moved.
func TestTopicRewindOverHTTP(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 1})
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions", map[string]any{"name": "s1", "from_earliest": true})
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": []map[string]any{
			{"payload": 1}, {"payload": 2}, {"payload": 3}}})
		first := b.receiveHTTP(t, server.ScopeWork, "chat", "s1", map[string]any{"batch_size": 2}).Batches[0]
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/s1/ack", map[string]any{"acks": []map[string]any{{"receipt": first.Receipt}}})
		out := b.receiveHTTP(t, server.ScopeWork, "chat", "s1", map[string]any{"batch_size": 2}).Batches[0]

		const path = "/v1/topics/chat/subscriptions/s1/rewind"
		for _, c := range []struct {
			body  any
			names string
		}{
			{map[string]any{}, "earliest"},
			{map[string]any{"earliest": true, "since": time.Now().Add(-time.Hour)}, "since"},
			{map[string]any{"since": time.Now().Add(time.Hour)}, "future"},
			{map[string]any{"since": "yesterday"}, "since"},
			{map[string]any{"earliest": true, "lanes": 3}, "lanes"},
		} {
			r := b.call(t, server.ScopeAdmin, "POST", path, c.body, false)
			if r.status != http.StatusBadRequest {
				t.Fatalf("rewind %v = %d, want 400: %s", c.body, r.status, r.body)
			}
			if msg := r.errorMessage(t); !strings.Contains(msg, c.names) {
				t.Errorf("rewind %v: %q, want a message naming %s", c.body, msg, c.names)
			}
		}
		r := b.must(t, http.StatusNotFound, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions/typo/rewind", map[string]any{"earliest": true})
		if msg := r.errorMessage(t); !strings.Contains(msg, "typo") {
			t.Errorf("rewind of an unknown subscription: %q, want it named", msg)
		}
		if l := b.lanesHTTP(t, "chat", "s1"); l[0]["holder"] != "w1" || l[0]["lag"] != float64(1) {
			t.Fatalf("lanes after refused rewinds %v: want the batch still out and one message past the cursor", l)
		}

		var res struct {
			Lanes, Released int
			Pending         int64
			OldestPending   *time.Time `json:"oldest_pending"`
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", path, map[string]any{"earliest": true}).decode(t, &res)
		if res.Lanes != 1 || res.Released != 1 || res.Pending != 3 || res.OldestPending == nil {
			t.Fatalf("rewind: %+v, want one lane moved, one batch released and all 3 messages pending", res)
		}
		var acked struct{ Accepted []bool }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/s1/ack", map[string]any{"acks": []map[string]any{{"receipt": out.Receipt}}}).decode(t, &acked)
		if len(acked.Accepted) != 1 || acked.Accepted[0] {
			t.Fatalf("ack of the batch out at the rewind: %+v, want refused", acked)
		}
		again := b.receiveHTTP(t, server.ScopeWork, "chat", "s1", map[string]any{"batch_size": 10}).Batches[0]
		var payloads []string
		for _, m := range again.Messages {
			payloads = append(payloads, string(m.Payload))
		}
		if strings.Join(payloads, ",") != "1,2,3" {
			t.Fatalf("after the rewind: %v, want every message again in order", payloads)
		}
	})
}
