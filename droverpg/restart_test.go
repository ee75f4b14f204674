package droverpg_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/testdb"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestSurvivesServerRestart stops PostgreSQL (fast shutdown) while a client
// works, keeps it down for a moment, starts it again, and checks that the
// client reconnects on its own and that every job completes.
func TestSurvivesServerRestart(t *testing.T) {
	if os.Getenv(testdb.EnvURL) != "" {
		t.Skip("restarts the server: needs the throwaway cluster, not " + testdb.EnvURL)
	}
	ctx := context.Background()
	cluster := testdb.Cluster(t)
	const jobs = 3000
	client := startSleepers(t, jobs, 5)

	// Let it work a little, then take the server away mid-run.
	waitCompleted(t, client, 200)
	if err := cluster.StopServer(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the outage itself
	if err := cluster.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	waitCompleted(t, client, jobs)
	counts, err := client.JobCountByState(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if counts[drovertype.JobStateAvailable]+counts[drovertype.JobStateRunning]+counts[drovertype.JobStateDiscarded] != 0 {
		t.Fatalf("jobs left behind or discarded after the restart: %v", counts)
	}
}

// waitCompleted polls until at least n jobs are completed, tolerating the
// errors of an outage.
func waitCompleted(t *testing.T, c *drover.Client[pgx.Tx], n int64) {
	t.Helper()
	var counts map[drovertype.JobState]int64
	var err error
	if !waitfor.Within(60*time.Second, func() bool {
		counts, err = c.JobCountByState(context.Background(), "")
		return err == nil && counts[drovertype.JobStateCompleted] >= n
	}) {
		t.Fatalf("fewer than %d jobs completed after 60s: %v (last error %v)", n, counts, err)
	}
}
