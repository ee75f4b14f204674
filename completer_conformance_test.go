package drover_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/completer"
	"github.com/droverhq/drover/internal/engine"
)

// TestCompleterSplitsARefusedFlush runs the completer on a real store with
// a flush in which one completed result carries output the store may
// refuse (PostgreSQL's jsonb takes no \u0000; SQLite stores it). Whatever
// the store does with that one result, every other result of the flush
// must land and the completer must return: a refused result is written as
// a discarded attempt that names the refusal instead.
func TestCompleterSplitsARefusedFlush(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := remoteSetup(t, s)
		ctx := context.Background()
		const total, poison = 64, 21
		jobs := make([]drover.InsertManyParams, total)
		for i := range jobs {
			jobs[i] = drover.InsertManyParams{Args: drover.RawArgs{KindName: "remote", JSON: json.RawMessage(`{}`)}}
		}
		if _, err := b.client.InsertMany(ctx, jobs); err != nil {
			t.Fatal(err)
		}
		rows, err := b.d.Executor().JobClaim(ctx, droverdriver.ClaimParams{Queue: drover.DefaultQueue, Max: total, Owner: "test", Lease: time.Minute})
		if err != nil || len(rows) != total {
			t.Fatalf("claimed %d jobs (%v), want %d", len(rows), err, total)
		}
		c := completer.New(engine.Finisher{Executor: b.d.Executor()}, completer.Config{BatchSize: total, Logger: slog.New(slog.DiscardHandler)})
		var poisonID int64
		for i, r := range rows {
			res := droverdriver.Result{ID: r.ID, Attempt: r.Attempt, LeaseToken: r.LeaseToken, Outcome: droverdriver.OutcomeCompleted, Output: []byte(`{"ok":true}`)}
			if i == poison {
				res.Output, poisonID = []byte(`{"s":"\u0000"}`), r.ID
			}
			c.Submit(res)
		}
		c.Close()
		c.Run(ctx)

		for _, r := range rows {
			row, err := b.client.JobGet(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case r.ID != poisonID && row.State != drovertype.JobStateCompleted:
				t.Fatalf("job %d is %s, want completed", r.ID, row.State)
			case r.ID == poisonID && row.State == drovertype.JobStateDiscarded:
				if len(row.Errors) != 1 || !strings.Contains(row.Errors[0].Error, "the store refused this attempt's result") {
					t.Fatalf("refused job %d: errors %+v, want one naming the refusal", r.ID, row.Errors)
				}
			case r.ID == poisonID && row.State != drovertype.JobStateCompleted:
				t.Fatalf("job %d with the refused output is %s, want discarded (refused) or completed (stored)", r.ID, row.State)
			}
		}
		if s.name != "sqlite" { // PostgreSQL, alone or as a fleet
			if row, _ := b.client.JobGet(ctx, poisonID); row.State != drovertype.JobStateDiscarded {
				t.Fatalf("PostgreSQL stored output with \\u0000: job %d is %s", poisonID, row.State)
			}
		}
	})
}
