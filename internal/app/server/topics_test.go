package server_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestTopicsOverHTTP runs a topic through the API: create it and a
// subscription, publish, receive a batch by long poll, ack it with one
// failed message (a retry job), nack another, and read the lag and the
// metrics. Every exchange is checked against openapi.json.
func TestTopicsOverHTTP(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 1})
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions", map[string]any{"name": "bot", "max_attempts": 3})
		b.must(t, http.StatusNotFound, server.ScopeAdmin, "POST", "/v1/topics/nope/subscriptions", map[string]any{"name": "bot"})
		var topics struct {
			Topics []struct {
				Name          string
				Subscriptions []string
			}
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/topics", nil).decode(t, &topics)
		if len(topics.Topics) != 1 || topics.Topics[0].Name != "chat" || strings.Join(topics.Topics[0].Subscriptions, ",") != "bot" {
			t.Fatalf("topics %+v", topics)
		}

		var pub struct{ IDs []int64 }
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": []map[string]any{
			{"key": "room1", "payload": map[string]any{"text": "hi"}},
			{"key": "room1", "payload_base64": "AAEC"},
		}}).decode(t, &pub)
		if len(pub.IDs) != 2 {
			t.Fatalf("publish returned %v", pub.IDs)
		}
		b.must(t, http.StatusNotFound, server.ScopeEnqueue, "POST", "/v1/topics/nope/publish", map[string]any{"messages": []map[string]any{{"payload": 1}}})

		type batch struct {
			Receipt  string
			Messages []struct {
				ID            int64
				Payload       any
				PayloadBase64 []byte `json:"payload_base64"`
			}
		}
		var got struct{ Batches []batch }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/bot/receive",
			map[string]any{"worker": "w1", "batch_size": 10, "wait_ms": 1000}).decode(t, &got)
		if len(got.Batches) != 1 || len(got.Batches[0].Messages) != 2 {
			t.Fatalf("received %+v", got)
		}
		if m := got.Batches[0].Messages; m[0].ID != pub.IDs[0] || string(m[1].PayloadBase64) != "\x00\x01\x02" || m[1].Payload != nil {
			t.Fatalf("messages %+v", m)
		}
		var acked struct{ Accepted []bool }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/bot/ack", map[string]any{"acks": []map[string]any{
			{"receipt": got.Batches[0].Receipt, "failed": map[string]string{strconv.FormatInt(pub.IDs[1], 10): "bad bytes"}},
		}}).decode(t, &acked)
		if len(acked.Accepted) != 1 || !acked.Accepted[0] {
			t.Fatalf("ack %+v", acked)
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/bot/ack",
			map[string]any{"acks": []map[string]any{{"receipt": got.Batches[0].Receipt}}}).decode(t, &acked)
		if acked.Accepted[0] {
			t.Fatal("a receipt acked twice was accepted twice")
		}
		b.must(t, http.StatusBadRequest, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/bot/ack",
			map[string]any{"acks": []map[string]any{{"receipt": "forged"}}})

		// A nack fails the whole batch.
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": []map[string]any{{"payload": "x"}}})
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/bot/receive",
			map[string]any{"worker": "w1", "wait_ms": 1000}).decode(t, &got)
		if len(got.Batches) != 1 {
			t.Fatalf("received %+v", got)
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/bot/nack",
			map[string]any{"receipts": []string{got.Batches[0].Receipt}, "error": "later"}).decode(t, &acked)
		if !acked.Accepted[0] {
			t.Fatal("nack rejected")
		}
		n := b.counts(t)
		if n[drovertype.JobStateAvailable]+n[drovertype.JobStateScheduled]+n[drovertype.JobStateRetryable] != 2 {
			t.Fatalf("jobs %v, want the two failed messages as retry jobs", n)
		}

		var lag struct {
			Subscriptions []struct {
				Subscription string
				Pending      int64
			}
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/topics/chat/lag", nil).decode(t, &lag)
		if len(lag.Subscriptions) != 1 || lag.Subscriptions[0].Pending != 0 {
			t.Fatalf("lag %+v", lag)
		}
		waitfor.Cond(t, "the lag and delivery metrics", func() bool {
			m := b.scrape(t)
			return m["drover_subscription_lag_messages"] != nil && m["drover_topic_published_total"] != nil &&
				m["drover_topic_delivered_total"].GetMetric()[0].GetCounter().GetValue() == 3
		})
		b.must(t, http.StatusOK, server.ScopeAdmin, "DELETE", "/v1/topics/chat/subscriptions/bot", nil)
		b.must(t, http.StatusNotFound, server.ScopeAdmin, "DELETE", "/v1/topics/chat/subscriptions/bot", nil)
	})
}

// TestPublishManyOverHTTP publishes messages of two topics in one request
// (POST /v1/messages): each subscription receives its topic's. A message
// without a topic, one naming a topic that does not exist, or one naming a
// topic whose retry queue a restricted token may not use makes the whole
// request fail, and nothing is published.
func TestPublishManyOverHTTP(t *testing.T) {
	secret, tok, err := server.NewToken("chat-only", []server.Scope{server.ScopeEnqueue})
	if err != nil {
		t.Fatal(err)
	}
	if err := tok.Restrict([]string{drover.RetryQueue("chat")}); err != nil {
		t.Fatal(err)
	}
	const chatOnly server.Scope = "chat-only"
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.tokens[chatOnly] = secret
		for _, topic := range []string{"chat", "news"} {
			b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": topic, "lanes": 1})
			b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/"+topic+"/subscriptions", map[string]any{"name": "bot"})
		}
		var pub struct{ IDs []int64 }
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/messages", map[string]any{"messages": []map[string]any{
			{"topic": "chat", "payload": "c1"}, {"topic": "news", "key": "k", "payload": "n1"}, {"topic": "chat", "payload_base64": "AAE="},
		}}).decode(t, &pub)
		if len(pub.IDs) != 3 {
			t.Fatalf("publish returned %v", pub.IDs)
		}
		refused := []struct {
			scope  server.Scope
			status int
			msgs   []map[string]any
		}{
			{server.ScopeEnqueue, http.StatusBadRequest, []map[string]any{{"topic": "chat", "payload": 1}, {"payload": 2}}},
			{server.ScopeEnqueue, http.StatusNotFound, []map[string]any{{"topic": "chat", "payload": 1}, {"topic": "nope", "payload": 2}}},
			{chatOnly, http.StatusForbidden, []map[string]any{{"topic": "chat", "payload": 1}, {"topic": "news", "payload": 2}}},
		}
		for _, r := range refused {
			// A message without a topic breaks the document's schema:
			// sent anyway, unchecked, as a client could.
			if got := b.call(t, r.scope, "POST", "/v1/messages", map[string]any{"messages": r.msgs}, r.status != http.StatusBadRequest); got.status != r.status {
				t.Fatalf("POST /v1/messages %v = %d, want %d: %s", r.msgs, got.status, r.status, got.body)
			}
		}
		b.must(t, http.StatusOK, chatOnly, "POST", "/v1/messages", map[string]any{"messages": []map[string]any{{"topic": "chat", "payload": "c3"}}})
		for topic, want := range map[string]int{"chat": 3, "news": 1} {
			var got struct {
				Batches []struct{ Messages []struct{ ID int64 } }
			}
			b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/"+topic+"/subscriptions/bot/receive",
				map[string]any{"worker": "w1", "batch_size": 10, "wait_ms": 1000}).decode(t, &got)
			n := 0
			for _, bt := range got.Batches {
				n += len(bt.Messages)
			}
			if n != want {
				t.Fatalf("%s/bot received %+v, want %d messages: the refused requests published nothing", topic, got, want)
			}
		}
	}, func(cfg *server.Config) { cfg.Tokens = append(cfg.Tokens, tok) })
}

// TestTopicCreateGetDelete: POST /v1/topics answers 201 when it stores the
// topic, 200 with the stored topic when an identical one exists (an option
// left out matches any), and 409 naming both when it exists with other
// options, changing nothing; GET /v1/topics/{topic} reads a topic with its
// subscriptions; DELETE /v1/topics/{topic} removes it with its
// subscriptions and messages, so that a topic created again under the
// name starts empty. Before, create answered 200 with the old topic
// whatever was asked, and neither GET nor DELETE existed.
func TestTopicCreateGetDelete(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		type topicJSON struct {
			Name          string   `json:"name"`
			Lanes         int      `json:"lanes"`
			RetentionMS   int64    `json:"retention_ms"`
			Subscriptions []string `json:"subscriptions"`
		}
		var tp topicJSON
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 2}).decode(t, &tp)
		if tp.Name != "chat" || tp.Lanes != 2 {
			t.Fatalf("created %+v", tp)
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions", map[string]any{"name": "bot", "from_earliest": true})
		for _, same := range []map[string]any{{"name": "chat", "lanes": 2}, {"name": "chat"}, {"name": "chat", "retention_ms": 0}} {
			b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics", same).decode(t, &tp)
			if tp.Lanes != 2 || strings.Join(tp.Subscriptions, ",") != "bot" {
				t.Fatalf("create of an identical topic (%v) answered %+v, want the stored topic with its subscription", same, tp)
			}
		}
		for _, other := range []map[string]any{{"name": "chat", "lanes": 4}, {"name": "chat", "retention_ms": 1000}, {"name": "chat", "retention_ms": -1}} {
			msg := b.must(t, http.StatusConflict, server.ScopeAdmin, "POST", "/v1/topics", other).errorMessage(t)
			if !strings.Contains(msg, "stored with 2 lanes") {
				t.Fatalf("conflict %q does not say what is stored", msg)
			}
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/topics/chat", nil).decode(t, &tp)
		if tp.Lanes != 2 || tp.RetentionMS != drover.TopicRetentionDefault.Milliseconds() || strings.Join(tp.Subscriptions, ",") != "bot" {
			t.Fatalf("GET after refused creates: %+v, want it unchanged", tp)
		}
		b.must(t, http.StatusNotFound, server.ScopeEnqueue, "GET", "/v1/topics/nope", nil)

		// Messages the subscription can read, then the topic goes.
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": []map[string]any{
			{"key": "a", "payload": 1}, {"key": "b", "payload": 2}}})
		receive := func(sub string) int {
			var got struct {
				Batches []struct{ Messages []struct{ ID int64 } }
			}
			b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/"+sub+"/receive",
				map[string]any{"worker": "w", "max_batches": 2, "batch_size": 10, "lease_ms": 1000}).decode(t, &got)
			n := 0
			for _, bt := range got.Batches {
				n += len(bt.Messages)
			}
			return n
		}
		waitfor.Cond(t, "the published messages readable", func() bool { return receive("bot") == 2 })
		var del struct{ Deleted bool }
		b.must(t, http.StatusOK, server.ScopeAdmin, "DELETE", "/v1/topics/chat", nil).decode(t, &del)
		if !del.Deleted {
			t.Fatal("delete answered deleted: false")
		}
		b.must(t, http.StatusNotFound, server.ScopeEnqueue, "GET", "/v1/topics/chat", nil)
		b.must(t, http.StatusNotFound, server.ScopeAdmin, "DELETE", "/v1/topics/chat", nil)
		var topics struct{ Topics []topicJSON }
		b.must(t, http.StatusOK, server.ScopeEnqueue, "GET", "/v1/topics", nil).decode(t, &topics)
		if len(topics.Topics) != 0 {
			t.Fatalf("topics after delete: %+v", topics)
		}

		// Created again, it has no subscription and no message.
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 2}).decode(t, &tp)
		if len(tp.Subscriptions) != 0 {
			t.Fatalf("the topic created again has subscriptions %v", tp.Subscriptions)
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions", map[string]any{"name": "bot", "from_earliest": true})
		if n := receive("bot"); n != 0 {
			t.Fatalf("a subscription from the earliest message of the topic created again received %d messages of the deleted one", n)
		}
	})
}
