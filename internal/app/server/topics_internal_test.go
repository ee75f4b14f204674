package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
)

// TestReceiveAnswerEncoding holds the receive's hand-written encoder to
// what encoding/json writes of the same answer: every message decodes to
// the same value, whatever its key (quotes, control characters, HTML
// characters, invalid UTF-8), its payload (JSON with white space, text
// that is not JSON, bytes that are not UTF-8, empty, none) and its
// metadata, and a time past year 9999, which has no JSON form, fails the
// answer instead of sending a body a consumer cannot read.
func TestReceiveAnswerEncoding(t *testing.T) {
	at := time.Date(2026, 11, 29, 19, 0, 0, 123456000, time.UTC)
	deliveries := []*drover.Delivery{
		{ID: 1, Payload: []byte(`{"a": [1, 2], "b": "<&>"}`), PublishedAt: at, Attempt: 1},
		{ID: 2, Key: `room "1" \ <b>&` + "\x01\u2028é", Payload: []byte("not json"), Metadata: json.RawMessage(`{"trace": "x"}`), PublishedAt: at, Attempt: 3},
		{ID: 3, Key: "bad \xff utf-8", Payload: []byte("\"\xff\""), Metadata: json.RawMessage(`{}`), PublishedAt: at.In(time.FixedZone("x", 3600))},
		{ID: 4, Payload: []byte{}, PublishedAt: at},
		{ID: 5, PublishedAt: at, Attempt: 2},
		{ID: 6, Payload: []byte("7"), PublishedAt: at},
	}
	batches := []*drover.ReceivedBatch{
		{Receipt: "eyJ0IjoiYyJ9.bWFj", Dropped: 4, Deliveries: deliveries[:3]},
		{Receipt: "r2", Deliveries: deliveries[3:]},
	}
	got, err := appendBatches(nil, batches)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(got), "}\n") {
		t.Fatalf("answer %q does not end with a newline", got)
	}

	// The answer as encoding/json wrote it before.
	type deliveryJSON struct {
		ID            int64           `json:"id"`
		Key           string          `json:"key,omitempty"`
		Payload       json.RawMessage `json:"payload,omitempty"`
		PayloadBase64 *[]byte         `json:"payload_base64,omitempty"`
		Metadata      json.RawMessage `json:"metadata,omitempty"`
		PublishedAt   time.Time       `json:"published_at"`
		Attempt       int             `json:"attempt"`
	}
	type batchJSON struct {
		Receipt  string         `json:"receipt"`
		Dropped  int64          `json:"dropped"`
		Messages []deliveryJSON `json:"messages"`
	}
	var want []batchJSON
	for _, b := range batches {
		bj := batchJSON{Receipt: b.Receipt, Dropped: b.Dropped, Messages: []deliveryJSON{}}
		for _, d := range b.Deliveries {
			m := deliveryJSON{ID: d.ID, Key: d.Key, PublishedAt: d.PublishedAt, Attempt: d.Attempt}
			m.Payload, m.PayloadBase64, m.Metadata = payloadJSON(d.Payload, d.Metadata)
			bj.Messages = append(bj.Messages, m)
		}
		want = append(want, bj)
	}
	ref, err := json.Marshal(map[string]any{"batches": want})
	if err != nil {
		t.Fatal(err)
	}
	var gotV, wantV any
	if err := json.Unmarshal(got, &gotV); err != nil {
		t.Fatalf("the answer is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(ref, &wantV); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotV, wantV) {
		t.Fatalf("answer\n%s\ndecodes otherwise than encoding/json's\n%s", got, ref)
	}

	far := []*drover.ReceivedBatch{{Receipt: "r", Deliveries: []*drover.Delivery{{ID: 9, PublishedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}}}
	if _, err := appendBatches(nil, far); err == nil || !strings.Contains(err.Error(), "published_at") {
		t.Fatalf("a time past year 9999 encoded (%v), want an error naming published_at", err)
	}
}
