package main

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/storeurl"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestTopicsCommands runs `drover topics` end to end on both stores:
// create a topic and a subscription, publish from arguments, list, and
// read the lag the published messages make.
func TestTopicsCommands(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f := b.setup(t).migrated(t)
			if out := f.mustRun(t, "topics", "create", "chat", "--lanes", "4"); !strings.Contains(out, "topic chat: 4 lanes") {
				t.Fatalf("create printed %q", out)
			}
			f.mustRun(t, "topics", "subscribe", "chat", "bot", "--from-earliest")
			ids := strings.Fields(f.mustRun(t, "topics", "publish", "chat", "--key", "k", "hello", "world"))
			if len(ids) != 2 {
				t.Fatalf("publish printed %v, want two IDs", ids)
			}
			var topics []struct {
				Name          string
				Lanes         int
				Subscriptions []string
			}
			if err := json.Unmarshal([]byte(f.mustRun(t, "topics", "list", "--json")), &topics); err != nil {
				t.Fatal(err)
			}
			if len(topics) != 1 || topics[0].Name != "chat" || topics[0].Lanes != 4 || strings.Join(topics[0].Subscriptions, ",") != "bot" {
				t.Fatalf("list: %+v", topics)
			}
			var lag []struct {
				Subscription string
				Pending      int64
			}
			if err := json.Unmarshal([]byte(f.mustRun(t, "topics", "lag", "chat", "--json")), &lag); err != nil {
				t.Fatal(err)
			}
			if len(lag) != 1 || lag[0].Subscription != "bot" || lag[0].Pending != 2 {
				t.Fatalf("lag: %+v", lag)
			}
			if r := f.run(t, "topics", "publish", "nope", "x"); r.code == exitOK {
				t.Fatalf("publish to a missing topic succeeded: %s", r)
			}
		})
	}
}

// TestTopicsUnsubscribe deletes a subscription from the CLI: the topic
// keeps its other subscriptions, and a second unsubscribe of the same
// name fails naming the subscription and its topic.
func TestTopicsUnsubscribe(t *testing.T) {
	t.Parallel()
	f := setupSQLite(t).migrated(t)
	f.mustRun(t, "topics", "create", "chat")
	f.mustRun(t, "topics", "subscribe", "chat", "bot")
	f.mustRun(t, "topics", "subscribe", "chat", "audit")
	if out := f.mustRun(t, "topics", "unsubscribe", "chat", "bot"); strings.TrimSpace(out) != "subscription bot of chat deleted" {
		t.Fatalf("unsubscribe printed %q", out)
	}
	var topics []struct{ Subscriptions []string }
	if err := json.Unmarshal([]byte(f.mustRun(t, "topics", "list", "--json")), &topics); err != nil {
		t.Fatal(err)
	}
	if len(topics) != 1 || strings.Join(topics[0].Subscriptions, ",") != "audit" {
		t.Fatalf("subscriptions after unsubscribe: %+v, want audit alone", topics)
	}
	r := f.run(t, "topics", "unsubscribe", "chat", "bot")
	if r.code != exitFailure || !strings.Contains(r.stderr, `subscription "bot" of topic "chat" not found`) {
		t.Fatalf("unsubscribe of a deleted subscription:\n%s", r)
	}
}

// TestTopicsNotFoundNamesTheTopic: every topics command given a topic
// that is not stored fails naming it (issue 38: subscribe said "topic not
// found" alone, and lag printed an empty table).
func TestTopicsNotFoundNamesTheTopic(t *testing.T) {
	t.Parallel()
	f := setupSQLite(t).migrated(t)
	for _, args := range [][]string{
		{"topics", "subscribe", "nosuch", "x"},
		{"topics", "unsubscribe", "nosuch", "x"},
		{"topics", "delete", "nosuch"},
		{"topics", "publish", "nosuch", "hello"},
		{"topics", "lag", "nosuch"},
	} {
		r := f.run(t, args...)
		if r.code != exitFailure || !strings.Contains(r.stderr, `topic not found: "nosuch"`) {
			t.Errorf("drover %s:\n%s\nwant a failure naming the topic", strings.Join(args, " "), r)
		}
	}
}

// TestTopicsPeek: peek prints the newest messages of a topic and consumes
// nothing; --follow prints those published while it runs, until its
// context ends (Ctrl-C), and exits 0.
func TestTopicsPeek(t *testing.T) {
	t.Parallel()
	f := setupSQLite(t).migrated(t)
	f.mustRun(t, "topics", "create", "chat", "--lanes", "2")
	f.mustRun(t, "topics", "subscribe", "chat", "bot", "--from-earliest")
	ids := strings.Fields(f.mustRun(t, "topics", "publish", "chat", "one", "two", "three"))
	out := f.mustRun(t, "topics", "peek", "chat", "--limit", "2")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], ids[1]+"\t") || !strings.HasSuffix(lines[0], "\ttwo") ||
		!strings.HasSuffix(lines[1], "\tthree") {
		t.Fatalf("peek --limit 2 printed:\n%s\nwant two and three", out)
	}
	var m struct {
		ID      int64  `json:"id"`
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal([]byte(f.mustRun(t, "topics", "tail", "chat", "--limit", "1", "--json")), &m); err != nil ||
		m.Payload != "three" || strconv.FormatInt(m.ID, 10) != ids[2] {
		t.Fatalf("tail --json: %+v, %v", m, err)
	}
	var lag []struct{ Pending int64 }
	if err := json.Unmarshal([]byte(f.mustRun(t, "topics", "lag", "chat", "--json")), &lag); err != nil || len(lag) != 1 || lag[0].Pending != 3 {
		t.Fatalf("lag after peeking: %+v, %v; want 3 pending", lag, err)
	}
	if r := f.run(t, "topics", "peek", "chat", "--limit", "0"); r.code != exitUsage {
		t.Fatalf("peek --limit 0:\n%s", r)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, []string{"--database-url", f.url, "--schema", f.schema, "topics", "peek", "chat", "--limit", "1", "--follow"},
			&stdout, io.Discard, func(k string) string { return f.env[k] })
	}()
	waitfor.Cond(t, "peek --follow prints the newest message", func() bool { return strings.Contains(stdout.String(), "\tthree\n") })
	f.mustRun(t, "topics", "publish", "chat", "four")
	waitfor.Cond(t, "peek --follow prints the message published since", func() bool { return strings.Contains(stdout.String(), "\tfour\n") })
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("peek --follow exited %d after its context ended", code)
	}
	if got := stdout.String(); strings.Count(got, "\n") != 2 || strings.Contains(got, "\ttwo\n") {
		t.Fatalf("peek --follow printed:\n%s\nwant three, then four", got)
	}
}

// TestTopicsLanesCommands shows a subscription's lanes with their holder,
// and frees a held lane: its next delivery counts as an attempt.
func TestTopicsLanesCommands(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := b.setup(t).migrated(t)
			f.mustRun(t, "topics", "create", "chat", "--lanes", "2")
			f.mustRun(t, "topics", "subscribe", "chat", "bot", "--from-earliest")
			f.mustRun(t, "topics", "publish", "chat", "--key", "k", "hello")
			st, _ := f.open(t)
			consumer, err := storeurl.NewClient[interface {
				Receive(ctx context.Context, p drover.ReceiveParams) ([]*drover.ReceivedBatch, error)
			}](st, nil)
			if err != nil {
				t.Fatal(err)
			}
			var held []*drover.ReceivedBatch
			waitfor.Cond(t, "a batch received", func() bool {
				held, err = consumer.Receive(ctx, drover.ReceiveParams{Topic: "chat", Subscription: "bot", Owner: "w1"})
				if err != nil {
					t.Fatal(err)
				}
				return len(held) == 1
			})
			var lanes []struct {
				Lane    int
				Pending int64
				Holder  string
				Attempt int
			}
			if err := json.Unmarshal([]byte(f.mustRun(t, "topics", "lanes", "chat", "bot", "--json")), &lanes); err != nil {
				t.Fatal(err)
			}
			lane := -1
			for _, l := range lanes {
				if l.Holder == "w1" && l.Pending == 1 && l.Attempt == 1 {
					lane = l.Lane
				}
			}
			if len(lanes) != 2 || lane < 0 {
				t.Fatalf("lanes %+v, want two, one held by w1 with the message pending", lanes)
			}
			if out := f.mustRun(t, "topics", "lanes", "chat", "bot"); !strings.Contains(out, "HOLDER") || !strings.Contains(out, "w1") {
				t.Fatalf("lanes printed %q", out)
			}
			if out := f.mustRun(t, "topics", "release-lane", "chat", "bot", strconv.Itoa(lane)); !strings.Contains(out, "released") {
				t.Fatalf("release-lane printed %q", out)
			}
			if out := f.mustRun(t, "topics", "release-lane", "chat", "bot", strconv.Itoa(lane)); !strings.Contains(out, "was not held") {
				t.Fatalf("a second release-lane printed %q", out)
			}
			waitfor.Cond(t, "the batch delivered again", func() bool {
				held, err = consumer.Receive(ctx, drover.ReceiveParams{Topic: "chat", Subscription: "bot", Owner: "w2"})
				if err != nil {
					t.Fatal(err)
				}
				return len(held) == 1
			})
			if d := held[0].Deliveries; len(d) != 1 || d[0].Attempt != 2 {
				t.Fatalf("delivered again: %+v, want attempt 2", d)
			}
			for _, args := range [][]string{{"lanes", "chat", "typo"}, {"release-lane", "chat", "bot", "7"}, {"release-lane", "chat", "bot", "x"}} {
				if r := f.run(t, append([]string{"topics"}, args...)...); r.code == exitOK {
					t.Fatalf("topics %v succeeded: %s", args, r)
				}
			}
		})
	}
}

// TestTopicsCreateAndDelete: `drover topics create` says whether it
// created the topic, leaves an identical one (flags left out match any)
// and refuses one stored with other lanes; `drover topics delete` removes
// the topic with its subscriptions and messages, and fails for a topic
// that does not exist.
func TestTopicsCreateAndDelete(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f := b.setup(t).migrated(t)
			if out := f.mustRun(t, "topics", "create", "chat", "--lanes", "4"); !strings.Contains(out, "(created)") {
				t.Fatalf("create printed %q", out)
			}
			for _, args := range [][]string{{"topics", "create", "chat"}, {"topics", "create", "chat", "--lanes", "4"}} {
				if out := f.mustRun(t, args...); !strings.Contains(out, "4 lanes") || !strings.Contains(out, "(exists already)") {
					t.Fatalf("%v printed %q", args, out)
				}
			}
			if r := f.run(t, "topics", "create", "chat", "--lanes", "8"); r.code == exitOK || !strings.Contains(r.stderr, "stored with 4 lanes") {
				t.Fatalf("create with other lanes: %s", r)
			}
			f.mustRun(t, "topics", "subscribe", "chat", "bot", "--from-earliest")
			f.mustRun(t, "topics", "publish", "chat", "hello")
			if out := f.mustRun(t, "topics", "delete", "chat"); !strings.Contains(out, "topic chat deleted") {
				t.Fatalf("delete printed %q", out)
			}
			if out := f.mustRun(t, "topics", "list", "--json"); strings.TrimSpace(out) != "[]" {
				t.Fatalf("list after delete: %s", out)
			}
			if r := f.run(t, "topics", "delete", "chat"); r.code == exitOK || !strings.Contains(r.stderr, "not found") {
				t.Fatalf("delete of a missing topic: %s", r)
			}
		})
	}
}

// TestTopicsRewindCommand: `drover topics rewind --earliest` delivers a
// subscription's messages again and says how many; one without a point,
// with both, with a bad time or for an unknown subscription fails and moves
// nothing (issue 38).
func TestTopicsRewindCommand(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f := b.setup(t).migrated(t)
			f.mustRun(t, "topics", "create", "chat", "--lanes", "1")
			f.mustRun(t, "topics", "subscribe", "chat", "bot", "--from-earliest")
			f.mustRun(t, "topics", "publish", "chat", "one")
			f.mustRun(t, "topics", "publish", "chat", "two")
			for _, args := range [][]string{{"rewind", "chat", "bot"}, {"rewind", "chat", "bot", "--earliest", "--since", "1h"},
				{"rewind", "chat", "bot", "--since", "yesterday"}, {"rewind", "chat", "typo", "--earliest"}, {"rewind", "nope", "bot", "--earliest"}} {
				if r := f.run(t, append([]string{"topics"}, args...)...); r.code == exitOK {
					t.Fatalf("topics %v succeeded: %s", args, r)
				}
			}
			ctx := context.Background()
			st, _ := f.open(t)
			consumer, err := storeurl.NewClient[interface {
				Receive(ctx context.Context, p drover.ReceiveParams) ([]*drover.ReceivedBatch, error)
				AckBatches(ctx context.Context, topic, sub string, acks []drover.BatchAck) ([]bool, error)
			}](st, nil)
			if err != nil {
				t.Fatal(err)
			}
			receive := func() int {
				var got []*drover.ReceivedBatch
				waitfor.Cond(t, "a batch received", func() bool {
					got, err = consumer.Receive(ctx, drover.ReceiveParams{Topic: "chat", Subscription: "bot", Owner: "w1", BatchSize: 10})
					if err != nil {
						t.Fatal(err)
					}
					return len(got) == 1
				})
				if ok, err := consumer.AckBatches(ctx, "chat", "bot", []drover.BatchAck{{Receipt: got[0].Receipt}}); err != nil || !ok[0] {
					t.Fatalf("ack: %v, %v", ok, err)
				}
				return len(got[0].Deliveries)
			}
			if n := receive(); n != 2 {
				t.Fatalf("received %d messages, want 2", n)
			}
			if out := f.mustRun(t, "topics", "rewind", "chat", "bot", "--earliest"); !strings.Contains(out, "1 lanes moved back") || !strings.Contains(out, "2 messages to deliver") {
				t.Fatalf("rewind printed %q", out)
			}
			if n := receive(); n != 2 {
				t.Fatalf("after the rewind received %d messages, want both again", n)
			}
		})
	}
}
