package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// The remote consumer's endpoints under hostile and careless clients
// (issue 33): forged and altered receipts, receipts of other topics, leases
// of a day, unknown names, and responses bounded in bytes.

// receivedJSON is a receive's answer.
type receivedJSON struct {
	Batches []struct {
		Receipt  string
		Messages []struct {
			ID            int64
			Payload       json.RawMessage
			PayloadBase64 *string `json:"payload_base64"`
			Attempt       int
		}
	}
}

// receiveHTTP receives from sub of topic as worker w1 with scope until it
// gets a batch.
func (b *bundle) receiveHTTP(t *testing.T, scope server.Scope, topic, sub string, body map[string]any) receivedJSON {
	t.Helper()
	var got receivedJSON
	body["worker"] = "w1"
	waitfor.Cond(t, "a batch of "+topic+"/"+sub, func() bool {
		b.must(t, http.StatusOK, scope, "POST", "/v1/topics/"+topic+"/subscriptions/"+sub+"/receive", body).decode(t, &got)
		return len(got.Batches) > 0
	})
	return got
}

// lanesHTTP returns the lanes of a subscription.
func (b *bundle) lanesHTTP(t *testing.T, topic, sub string) []map[string]any {
	t.Helper()
	var out struct{ Lanes []map[string]any }
	b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/topics/"+topic+"/subscriptions/"+sub+"/lanes", nil).decode(t, &out)
	return out.Lanes
}

// TestTopicReceiptForgeryOverHTTP replays issue 33's reproduction: a work
// token restricted to topic qat nacks a forged receipt whose range covers
// every position four times, and a receipt naming topic chat, which it may
// not use, through qat's URL. Both are refused with a 400, and so are a
// genuine receipt with its range, start or max attempts edited, and a
// genuine receipt of chat's subscription: nothing is read (the server held
// the whole lane in memory for each), nothing is written, and the genuine
// receipt still acknowledges its batch.
func TestTopicReceiptForgeryOverHTTP(t *testing.T) {
	secret, tok, err := server.NewToken("qat-only", []server.Scope{server.ScopeWork})
	if err != nil {
		t.Fatal(err)
	}
	if err := tok.Restrict([]string{drover.RetryQueue("qat")}); err != nil {
		t.Fatal(err)
	}
	const qatOnly server.Scope = "qat-only"
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.tokens[qatOnly] = secret
		for _, topic := range []string{"qat", "chat"} {
			b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": topic, "lanes": 1})
			b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/"+topic+"/subscriptions", map[string]any{"name": "s1", "from_earliest": true})
			b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/"+topic+"/publish", map[string]any{"messages": []map[string]any{
				{"payload": map[string]any{"n": 1}}, {"payload": map[string]any{"n": 2}}}})
		}
		genuine := b.receiveHTTP(t, qatOnly, "qat", "s1", map[string]any{"batch_size": 1}).Batches[0]
		if m := genuine.Messages; len(m) != 1 || m[0].Attempt != 1 || string(m[0].Payload) != `{"n":1}` || m[0].PayloadBase64 != nil {
			t.Fatalf("messages %+v, want the first alone, its payload once, at attempt 1", m)
		}
		chat := b.receiveHTTP(t, server.ScopeWork, "chat", "s1", map[string]any{"batch_size": 10}).Batches[0]

		forge := func(topic string) string {
			raw, _ := json.Marshal(map[string]any{"t": topic, "s": "s1", "l": 0, "k": strings.Repeat("0", 32),
				"f": map[string]int64{"Xid": 0, "ID": 0}, "u": map[string]int64{"Xid": 1<<63 - 1, "ID": 1<<63 - 1}, "n": 2_000_000_000})
			return base64.RawURLEncoding.EncodeToString(raw)
		}
		payload, mac, _ := strings.Cut(genuine.Receipt, ".")
		edit := func(key string, v any) string {
			raw, err := base64.RawURLEncoding.DecodeString(payload)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			m[key] = v
			raw, _ = json.Marshal(m)
			return base64.RawURLEncoding.EncodeToString(raw) + "." + mac
		}
		const nack = "/v1/topics/qat/subscriptions/s1/nack"
		for range 4 {
			b.must(t, http.StatusBadRequest, qatOnly, "POST", nack, map[string]any{"receipts": []string{forge("qat")}})
		}
		b.must(t, http.StatusBadRequest, qatOnly, "POST", nack, map[string]any{"receipts": []string{forge("qat"), forge("qat"), forge("qat"), forge("qat")}})
		b.must(t, http.StatusBadRequest, qatOnly, "POST", nack, map[string]any{"receipts": []string{forge("chat")}})
		b.must(t, http.StatusBadRequest, qatOnly, "POST", nack, map[string]any{"receipts": []string{chat.Receipt}})
		for _, altered := range []string{
			edit("u", map[string]int64{"Xid": 1<<63 - 1, "ID": 1<<63 - 1}),
			edit("f", map[string]int64{"Xid": 0, "ID": 0}),
			edit("m", 1_000_000),
			forge("qat") + "." + mac,
		} {
			r := b.must(t, http.StatusBadRequest, qatOnly, "POST", "/v1/topics/qat/subscriptions/s1/ack",
				map[string]any{"acks": []map[string]any{{"receipt": genuine.Receipt}, {"receipt": altered, "failed": map[string]string{"1": "x"}}}})
			if msg := r.errorMessage(t); !strings.Contains(msg, "ack 2 of 2") || !strings.Contains(msg, "not a receipt") {
				t.Fatalf("altered receipt refused with %q, want it to name ack 2", msg)
			}
		}
		for _, path := range []string{"/extend", "/release"} {
			b.must(t, http.StatusBadRequest, qatOnly, "POST", "/v1/topics/qat/subscriptions/s1"+path, map[string]any{"receipts": []string{forge("qat")}})
		}
		// chat's URL stays closed to the qat token whatever it sends.
		b.must(t, http.StatusForbidden, qatOnly, "POST", "/v1/topics/chat/subscriptions/s1/nack", map[string]any{"receipts": []string{chat.Receipt}})

		// Nothing was written: no retry job, qat's lane still held by w1
		// at its cursor, and the genuine receipt still acks its batch.
		if n := b.counts(t); n[drovertype.JobStateAvailable]+n[drovertype.JobStateScheduled]+n[drovertype.JobStateDiscarded] != 0 {
			t.Fatalf("jobs %v after refused receipts, want none", n)
		}
		if lanes := b.lanesHTTP(t, "qat", "s1"); lanes[0]["holder"] != "w1" || lanes[0]["cursor"] != float64(0) || lanes[0]["lag"] != float64(2) {
			t.Fatalf("qat's lanes %v, want lane 0 held by w1 with both messages pending", lanes)
		}
		var acked struct{ Accepted []bool }
		b.must(t, http.StatusOK, qatOnly, "POST", "/v1/topics/qat/subscriptions/s1/ack",
			map[string]any{"acks": []map[string]any{{"receipt": genuine.Receipt}}}).decode(t, &acked)
		if len(acked.Accepted) != 1 || !acked.Accepted[0] {
			t.Fatalf("the genuine ack: %+v", acked)
		}
		if lanes := b.lanesHTTP(t, "qat", "s1"); lanes[0]["lag"] != float64(1) {
			t.Fatalf("qat's lanes %v after the genuine ack, want one message pending", lanes)
		}
	}, func(cfg *server.Config) { cfg.Tokens = append(cfg.Tokens, tok) })
}

// TestTopicReceiveBytesOverHTTP bounds a receive's payload and metadata
// bytes: with a budget of 1,000 bytes, a batch of ten 400-byte messages
// holds two, a message larger than the budget comes alone, and every
// payload comes once (as JSON when it is JSON, in base64 when not); a
// receive returned each payload twice and any number of bytes.
func TestTopicReceiveBytesOverHTTP(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "big", "lanes": 1})
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/big/subscriptions", map[string]any{"name": "s1", "from_earliest": true})
		text := `"` + strings.Repeat("a", 396) + `"` // 398 bytes of JSON, 400 with the metadata "{}"
		var msgs []drover.Message
		for range 4 {
			msgs = append(msgs, drover.Message{Payload: []byte(text)})
		}
		msgs = append(msgs, drover.Message{Payload: []byte(strings.Repeat("\xff", 2000))}, drover.Message{Payload: []byte(text)})
		ids, err := b.client.Publish(ctx, "big", msgs...)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		var seen []int64
		for len(seen) < len(ids) {
			r := b.receiveHTTP(t, server.ScopeWork, "big", "s1", map[string]any{"batch_size": 10})
			batch := r.Batches[0]
			got = append(got, len(batch.Messages))
			for _, m := range batch.Messages {
				seen = append(seen, m.ID)
				switch {
				case (m.Payload == nil) == (m.PayloadBase64 == nil):
					t.Fatalf("message %d: payload %q, payload_base64 %v; want exactly one", m.ID, m.Payload, m.PayloadBase64)
				case m.PayloadBase64 != nil && len(*m.PayloadBase64) != base64.StdEncoding.EncodedLen(2000):
					t.Fatalf("message %d: payload_base64 of %d characters", m.ID, len(*m.PayloadBase64))
				case m.Payload != nil && string(m.Payload) != text:
					t.Fatalf("message %d: payload %q", m.ID, m.Payload)
				}
			}
			b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/big/subscriptions/s1/ack",
				map[string]any{"acks": []map[string]any{{"receipt": batch.Receipt}}})
		}
		if jsonString(got) != "[2,2,1,1]" {
			t.Fatalf("batches of %v messages, want 2, 2, then the large one alone, then the last", got)
		}
	}, func(cfg *server.Config) { cfg.MaxReceiveBytes = 1000 })
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestTopicLeasesOverHTTP bounds a receive's lease to five minutes (a day
// let one consumer hold a subscription), extends a batch, releases one
// (delivered again at once, not counted as an attempt), and shows and
// frees lane holders.
func TestTopicLeasesOverHTTP(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 2})
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions", map[string]any{"name": "s1", "from_earliest": true})
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": []map[string]any{
			{"key": "a", "payload": 1}}})
		const sub = "/v1/topics/chat/subscriptions/s1"
		// Out of the document's bounds on purpose: sent unchecked, as a
		// client could.
		if r := b.call(t, server.ScopeWork, "POST", sub+"/receive", map[string]any{"worker": "w1", "lease_ms": 86_400_000}, false); r.status != http.StatusBadRequest ||
			!strings.Contains(r.errorMessage(t), "lease_ms 86400000") {
			t.Fatalf("receive with a lease of a day: %d %s, want 400 naming lease_ms", r.status, r.body)
		}
		first := b.receiveHTTP(t, server.ScopeWork, "chat", "s1", map[string]any{"lease_ms": 300_000}).Batches[0]
		lane := -1
		for _, l := range b.lanesHTTP(t, "chat", "s1") {
			if l["holder"] == "w1" {
				lane = int(l["lane"].(float64))
				if l["attempt"] != float64(1) || l["lease_expires_at"] == nil {
					t.Fatalf("lane %v, want attempt 1 and its lease's end", l)
				}
			}
		}
		if lane < 0 {
			t.Fatalf("no lane held by w1: %v", b.lanesHTTP(t, "chat", "s1"))
		}
		var extended struct{ Extended []bool }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", sub+"/extend", map[string]any{"receipts": []string{first.Receipt}, "lease_ms": 60_000}).decode(t, &extended)
		if len(extended.Extended) != 1 || !extended.Extended[0] {
			t.Fatalf("extend %+v", extended)
		}
		if r := b.call(t, server.ScopeWork, "POST", sub+"/extend", map[string]any{"receipts": []string{first.Receipt}, "lease_ms": 300_001}, false); r.status != http.StatusBadRequest {
			t.Fatalf("extend past five minutes: %d %s, want 400", r.status, r.body)
		}
		var released struct{ Released []bool }
		b.must(t, http.StatusOK, server.ScopeWork, "POST", sub+"/release", map[string]any{"receipts": []string{first.Receipt}}).decode(t, &released)
		if len(released.Released) != 1 || !released.Released[0] {
			t.Fatalf("release %+v", released)
		}
		again := b.receiveHTTP(t, server.ScopeWork, "chat", "s1", map[string]any{}).Batches[0]
		if m := again.Messages; len(m) != 1 || m[0].Attempt != 1 {
			t.Fatalf("after the release %+v, want the message again at attempt 1", m)
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", sub+"/extend", map[string]any{"receipts": []string{first.Receipt}}).decode(t, &extended)
		if extended.Extended[0] {
			t.Fatal("a released batch's receipt extended")
		}
		// An operator frees the lane; its next delivery counts.
		path := sub + "/lanes/" + jsonString(lane) + "/release"
		b.must(t, http.StatusForbidden, server.ScopeWork, "POST", path, nil)
		var freed struct{ Released bool }
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", path, nil).decode(t, &freed)
		if !freed.Released {
			t.Fatal("the held lane was not released")
		}
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", path, nil).decode(t, &freed)
		if freed.Released {
			t.Fatal("a free lane reported released")
		}
		b.must(t, http.StatusBadRequest, server.ScopeAdmin, "POST", sub+"/lanes/2/release", nil)
		third := b.receiveHTTP(t, server.ScopeWork, "chat", "s1", map[string]any{}).Batches[0]
		if m := third.Messages; len(m) != 1 || m[0].Attempt != 2 {
			t.Fatalf("after the operator's release %+v, want the message at attempt 2", m)
		}
	})
}

// TestTopicUnknownOverHTTP names a topic or a subscription that is not
// stored to every consumer endpoint: each answers 404 naming it (receive
// and lag answered 200 with nothing, so that a typo waited forever).
func TestTopicUnknownOverHTTP(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 1})
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions", map[string]any{"name": "s1", "from_earliest": true})
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish", map[string]any{"messages": []map[string]any{{"payload": 1}}})
		receipt := b.receiveHTTP(t, server.ScopeWork, "chat", "s1", map[string]any{}).Batches[0].Receipt
		for _, c := range []struct {
			scope        server.Scope
			method, path string
			body         any
			names        string
		}{
			{server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/typo/receive", map[string]any{"worker": "w1", "wait_ms": 1000}, "subscription"},
			{server.ScopeWork, "POST", "/v1/topics/nope/subscriptions/s1/receive", map[string]any{"worker": "w1"}, "topic"},
			{server.ScopeEnqueue, "GET", "/v1/topics/nope/lag", nil, "topic"},
			{server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/typo/ack", map[string]any{"acks": []map[string]any{{"receipt": receipt}}}, "subscription"},
			{server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/typo/nack", map[string]any{"receipts": []string{receipt}}, "subscription"},
			{server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/typo/extend", map[string]any{"receipts": []string{receipt}}, "subscription"},
			{server.ScopeWork, "POST", "/v1/topics/nope/subscriptions/s1/release", map[string]any{"receipts": []string{receipt}}, "topic"},
			{server.ScopeEnqueue, "GET", "/v1/topics/chat/subscriptions/typo/lanes", nil, "subscription"},
			{server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions/typo/lanes/0/release", nil, "subscription"},
		} {
			r := b.must(t, http.StatusNotFound, c.scope, c.method, c.path, c.body)
			if msg := r.errorMessage(t); !strings.Contains(msg, c.names) {
				t.Fatalf("%s %s: %q, want a message naming the %s", c.method, c.path, msg, c.names)
			}
		}
		// Deleted under its consumer, the subscription's receipts are 404.
		b.must(t, http.StatusOK, server.ScopeAdmin, "DELETE", "/v1/topics/chat/subscriptions/s1", nil)
		b.must(t, http.StatusNotFound, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/s1/ack", map[string]any{"acks": []map[string]any{{"receipt": receipt}}})
	})
}

// TestTopicFreedLaneWakesReceiveOverHTTP holds a receive in its long poll
// while the subscription's one lane is held, on a client that polls the
// store once an hour, and frees the lane by an ack, a release and an
// operator's release in turn: each time the waiting receive answers with
// the lane's next batch at once, not at the end of its two-minute wait.
// A consumer's next receive goes out while the acks of its last batches
// are on the way; without the wake it waited for the poll interval (a
// second on PostgreSQL).
func TestTopicFreedLaneWakesReceiveOverHTTP(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			d, _ := s.open(t)
			var hourly testClient
			switch d := d.(type) {
			case *droverpg.Driver:
				hourly = newClient(t, d, func(cfg *drover.Config) (testClient, error) {
					cfg.PollInterval = time.Hour
					return drover.NewClient(d, cfg)
				})
			case *droversqlite.Driver:
				hourly = newClient(t, d, func(cfg *drover.Config) (testClient, error) {
					cfg.PollInterval = time.Hour
					return drover.NewClient(d, cfg)
				})
			}
			b := setup(t, func(*testing.T) (droverdriver.Driver, testClient) { return d, hourly },
				func(cfg *server.Config) { cfg.MaxWait = 2 * time.Minute })
			b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "wake", "lanes": 1})
			b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/wake/subscriptions", map[string]any{"name": "s1", "from_earliest": true})
			b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/wake/publish", map[string]any{"messages": []map[string]any{
				{"payload": 1}, {"payload": 2}, {"payload": 3}}})
			const sub = "/v1/topics/wake/subscriptions/s1"
			held := b.receiveHTTP(t, server.ScopeWork, "wake", "s1", map[string]any{"batch_size": 1}).Batches[0]
			frees := []struct {
				name         string
				scope        server.Scope
				path         string
				body         func(receipt string) any
				wantAttempts int
			}{
				{"ack", server.ScopeWork, sub + "/ack", func(r string) any { return map[string]any{"acks": []map[string]any{{"receipt": r}}} }, 1},
				{"release", server.ScopeWork, sub + "/release", func(r string) any { return map[string]any{"receipts": []string{r}} }, 1},
				{"operator's release", server.ScopeAdmin, sub + "/lanes/0/release", func(string) any { return nil }, 2},
			}
			for _, free := range frees {
				ctx, cancel := context.WithCancel(context.Background())
				answer := make(chan receivedJSON, 1)
				go func() {
					var got receivedJSON
					body, _ := json.Marshal(map[string]any{"worker": "w2", "batch_size": 1, "wait_ms": 120_000})
					req, _ := http.NewRequestWithContext(ctx, "POST", b.url+sub+"/receive", strings.NewReader(string(body)))
					req.Header.Set("Authorization", "Bearer "+b.tokens[server.ScopeWork])
					req.Header.Set("Content-Type", "application/json")
					if resp, err := http.DefaultClient.Do(req); err == nil {
						_ = json.NewDecoder(resp.Body).Decode(&got)
						resp.Body.Close()
					}
					answer <- got
				}()
				b.must(t, http.StatusOK, free.scope, "POST", free.path, free.body(held.Receipt))
				var got receivedJSON
				select {
				case got = <-answer:
				case <-time.After(time.Minute):
					t.Fatalf("after the %s, the waiting receive did not answer within a minute", free.name)
				}
				cancel()
				if len(got.Batches) != 1 || len(got.Batches[0].Messages) != 1 || got.Batches[0].Messages[0].Attempt != free.wantAttempts {
					t.Fatalf("after the %s the waiting receive got %+v, want one message at attempt %d", free.name, got, free.wantAttempts)
				}
				held = got.Batches[0]
			}
		})
	}
}
