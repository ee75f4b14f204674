package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/server"
)

// TestPublishRefusesOversizeAndBadText publishes, through both publish
// endpoints, a good message beside one the store cannot hold or a
// consumer cannot decode: a payload sent as JSON with invalid UTF-8,
// \u0000 or a lone surrogate, metadata with the same, a payload over 1 MiB
// and metadata over 64 KiB. Each request is a 400 naming the message and
// the field, and nothing of it is published. Before, the payload was
// stored raw and echoed to consumers (Python's json.load then raised),
// such metadata was a 500 on PostgreSQL and stored raw on SQLite, and no
// payload size was refused below the 8 MiB body. Binary payloads still go
// through payload_base64.
func TestPublishRefusesOversizeAndBadText(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "chat", "lanes": 1})
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/chat/subscriptions", map[string]any{"name": "bot"})
		big := strings.Repeat("x", drover.MaxMessagePayloadBytes)
		cases := []struct{ name, bad, want string }{
			{"payload with invalid UTF-8", "\"payload\":\"a\xff\"", "payload: invalid UTF-8 at byte 2"},
			{"payload with NUL", `"payload":{"a":"\u0000"}`, `payload: contains \u0000 at byte 6`},
			{"payload with a lone surrogate", `"payload":"\udc00"`, `payload: unpaired surrogate escape \udc00 at byte 1`},
			{"metadata with invalid UTF-8", "\"payload\":1,\"metadata\":{\"a\":\"\xff\"}", "metadata: invalid UTF-8 at byte 6"},
			{"metadata with NUL", `"payload":1,"metadata":{"a":"\u0000"}`, `metadata: contains \u0000 at byte 6`},
			{"metadata with a lone surrogate", `"payload":1,"metadata":{"a":"\ud800x"}`, `metadata: unpaired surrogate escape \ud800 at byte 6`},
			{"payload over 1 MiB", `"payload":"` + big + `"`, "payload: 1048578 bytes is over the limit of 1048576"},
			{"metadata over 64 KiB", `"payload":1,"metadata":{"a":"` + big[:drover.MaxMetadataBytes] + `"}`, "metadata: 65544 bytes is over the limit of 65536"},
		}
		for _, c := range cases {
			for _, ep := range []struct{ path, topic string }{{"/v1/topics/chat/publish", ""}, {"/v1/messages", `"topic":"chat",`}} {
				t.Run(c.name+" "+ep.path, func(t *testing.T) {
					body := fmt.Sprintf(`{"messages":[{%s"payload":"fine"},{%s%s}]}`, ep.topic, ep.topic, c.bad)
					r := b.call(t, server.ScopeEnqueue, "POST", ep.path, body, false)
					if r.status != http.StatusBadRequest {
						t.Fatalf("status %d, want 400: %.300s", r.status, r.body)
					}
					if msg := r.errorMessage(t); !strings.Contains(msg, "message 2 of 2: ") || !strings.Contains(msg, c.want) || len(msg) > 300 {
						t.Fatalf("message %.400q does not name the message and the problem (want %q)", msg, c.want)
					}
				})
			}
		}
		var got struct {
			Batches []struct {
				Messages []struct {
					Payload       any
					PayloadBase64 []byte `json:"payload_base64"`
				}
			}
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/bot/receive",
			map[string]any{"worker": "w1", "batch_size": 100}).decode(t, &got)
		if len(got.Batches) != 0 {
			t.Fatalf("refused publishes delivered %+v", got.Batches)
		}

		// Bytes that are not text go as payload_base64, and the limit
		// itself is allowed. A Go publisher's bytes that Go's json.Valid
		// takes for JSON but are not UTF-8 are delivered as base64 only.
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/chat/publish",
			fmt.Sprintf(`{"messages":[{"payload_base64":"/wA="},{"payload":"%s"}]}`, big[:drover.MaxMessagePayloadBytes-2]))
		if _, err := b.client.Publish(t.Context(), "chat", drover.Message{Payload: []byte("\"a\xff\"")}); err != nil {
			t.Fatal(err)
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/chat/subscriptions/bot/receive",
			map[string]any{"worker": "w1", "batch_size": 100, "wait_ms": 5000}).decode(t, &got)
		if len(got.Batches) != 1 || len(got.Batches[0].Messages) != 3 {
			t.Fatalf("received %d batches, want one of the three messages", len(got.Batches))
		}
		m := got.Batches[0].Messages
		if string(m[0].PayloadBase64) != "\xff\x00" || m[0].Payload != nil || len(m[1].Payload.(string)) != drover.MaxMessagePayloadBytes-2 ||
			string(m[2].PayloadBase64) != "\"a\xff\"" || m[2].Payload != nil {
			t.Fatalf("received %.300v; want the binary ones as payload_base64 alone", m)
		}
	}, func(cfg *server.Config) { cfg.MaxBodyBytes = 4 << 20 })
}
