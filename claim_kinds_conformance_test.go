package drover_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// TestClaimOnlyKnownKinds inserts, ahead of a job the client can run, a job
// of a kind it has no worker for, and checks that the client leaves it
// alone: still available, no attempt spent, no error recorded, for a
// process that can run it.
func TestClaimOnlyKnownKinds(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		b := setup(t, s, 4)
		ctx := context.Background()
		inserter := s.newClient(t, b.d, &drover.Config{})
		ids, err := inserter.InsertMany(ctx, []drover.InsertManyParams{
			{Args: drover.RawArgs{KindName: "test.elsewhere", JSON: json.RawMessage(`{}`)}, Opts: &drover.InsertOpts{Priority: 1}},
			{Args: noopArgs{}, Opts: &drover.InsertOpts{Priority: 2}},
		})
		if err != nil {
			t.Fatal(err)
		}
		b.start(t)
		// The known job sorts after the other in claim order, so the
		// claim that took it would have taken the other first.
		waitState(t, b.client, ids[1], drovertype.JobStateCompleted)
		other, err := b.client.JobGet(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if other.State != drovertype.JobStateAvailable || other.Attempt != 0 || len(other.Errors) != 0 {
			t.Fatalf("job of a kind without a worker: state %s, attempt %d, errors %v; want available, 0, none",
				other.State, other.Attempt, other.Errors)
		}
	})
}
