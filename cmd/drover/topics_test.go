package main

import (
	"encoding/json"
	"strings"
	"testing"
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
