package server_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/internal/app/server"
)

// BenchmarkTopicReceiveAck measures what drover serve spends per topic
// delivery to a remote consumer on SQLite: a backlog of b.N messages of 16
// bytes (the fan-out bench's payloads: bytes that are not JSON, delivered
// in base64) on 8 lanes, received 8 batches of 1,000 at a time and each
// receive's batches acknowledged in one ack, as the SDKs' consumers do. It
// reports the process's CPU per delivery (cpu-ns/delivery): the server,
// the store, and this benchmark's client, which reads only the receipts.
//
//	go test ./internal/app/server -run '^$' -bench TopicReceiveAck -benchtime 60000x -count 5
func BenchmarkTopicReceiveAck(b *testing.B) {
	ctx := context.Background()
	d, err := droversqlite.Open(ctx, filepath.Join(b.TempDir(), "drover.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	if _, err := drover.Migrate(ctx, d); err != nil {
		b.Fatal(err)
	}
	client, err := drover.NewClient(d, &drover.Config{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	secret, tok, err := server.NewToken("bench", []server.Scope{server.ScopeWork})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(server.Config{Client: client, Tokens: []server.Token{tok}, Logger: quietLogger(), SampleInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	if _, err := client.CreateTopic(ctx, "bench", &drover.TopicOpts{Lanes: 8}); err != nil {
		b.Fatal(err)
	}
	if _, err := client.CreateSubscription(ctx, "bench", "s", nil); err != nil {
		b.Fatal(err)
	}
	msgs := make([]drover.Message, 0, 1000)
	for i := 0; i < b.N; i += len(msgs) {
		msgs = msgs[:0]
		for j := i; j < min(b.N, i+1000); j++ {
			p := make([]byte, 16)
			binary.LittleEndian.PutUint64(p, uint64(j))
			binary.LittleEndian.PutUint64(p[8:], uint64(time.Now().UnixNano()))
			msgs = append(msgs, drover.Message{Payload: p})
		}
		if _, err := client.Publish(ctx, "bench", msgs...); err != nil {
			b.Fatal(err)
		}
	}
	post := func(path string, body any, out any) {
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", hs.URL+"/v1/topics/bench/subscriptions/s/"+path, bytes.NewReader(raw))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d %s", path, resp.StatusCode, got)
		}
		if err := json.Unmarshal(got, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := benchCPU()
	delivered := 0
	for delivered < b.N {
		var got struct {
			Batches []struct {
				Receipt  string
				Messages []struct{ ID int64 }
			}
		}
		post("receive", map[string]any{"worker": "w", "max_batches": 8, "batch_size": 1000}, &got)
		if len(got.Batches) == 0 {
			b.Fatalf("%d of %d delivered, then a receive found none", delivered, b.N)
		}
		acks := make([]map[string]any, len(got.Batches))
		for i, bt := range got.Batches {
			acks[i] = map[string]any{"receipt": bt.Receipt}
			delivered += len(bt.Messages)
		}
		var ok struct{ Accepted []bool }
		post("ack", map[string]any{"acks": acks}, &ok)
	}
	b.StopTimer()
	b.ReportMetric(float64((benchCPU()-cpu).Nanoseconds())/float64(delivered), "cpu-ns/delivery")
}

func benchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
