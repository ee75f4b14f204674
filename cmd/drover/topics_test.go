package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/storeurl"
	"github.com/droverhq/drover/internal/waitfor"
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
