package droverpg_test

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

type sleepArgs struct {
	Ms int `json:"ms"`
}

func (sleepArgs) Kind() string { return "test.sleep" }

// startSleepers migrates a schema of its own, inserts jobs jobs that each
// sleep ms milliseconds, and starts a client with short leases working them.
func startSleepers(t *testing.T, jobs, ms int) *drover.Client[pgx.Tx] {
	t.Helper()
	ctx := context.Background()
	d := migrated(t)
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[sleepArgs]) error {
		time.Sleep(time.Duration(j.Args.Ms) * time.Millisecond)
		return nil
	}))
	client, err := drover.NewClient(d, &drover.Config{
		Queues:        map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 20}},
		Workers:       workers,
		Logger:        slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 1})),
		LeaseDuration: 2 * time.Second,
		PollInterval:  100 * time.Millisecond,
		LeaderTTL:     2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	params := make([]drover.InsertManyParams, jobs)
	for i := range params {
		params[i] = drover.InsertManyParams{Args: sleepArgs{Ms: ms}}
	}
	if _, err := client.InsertMany(ctx, params); err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(stopCtx)
	})
	return client
}

// TestSurvivesTerminatedBackends kills every connection the client holds,
// repeatedly, while it works: the client must reconnect on its own and
// every job must still complete, none lost.
func TestSurvivesTerminatedBackends(t *testing.T) {
	ctx := context.Background()
	const jobs = 3000
	client := startSleepers(t, jobs, 10)

	// A separate pool so that the killer is not killed with the client.
	adminCfg, err := pgxpool.ParseConfig(testdb.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	adminCfg.ConnConfig.RuntimeParams["application_name"] = "drover-test-admin"
	admin, err := pgxpool.NewWithConfig(ctx, adminCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	kills := 0
	deadline := time.Now().Add(60 * time.Second)
	for {
		counts, err := client.JobCountByState(ctx, "")
		if err == nil && counts[drovertype.JobStateCompleted] == jobs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs did not all complete after %d rounds of killed backends: %v (err %v)", kills, counts, err)
		}
		if kills < 10 {
			var n int
			// Only this client's connections: they are the ones in this
			// database that are not the admin pool's own.
			err := admin.QueryRow(ctx, `
				SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND backend_type = 'client backend'
				  AND pid <> pg_backend_pid() AND application_name <> 'drover-test-admin'`).Scan(&n)
			if err != nil {
				t.Fatal(err)
			}
			kills++
		}
		time.Sleep(100 * time.Millisecond)
	}
	if kills < 8 {
		t.Fatalf("only %d rounds of kills happened before completion; the test proved nothing", kills)
	}
	counts, err := client.JobCountByState(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if counts[drovertype.JobStateAvailable]+counts[drovertype.JobStateRunning]+counts[drovertype.JobStateDiscarded] != 0 {
		t.Fatalf("jobs left behind or discarded: %v", counts)
	}
	t.Logf("%d jobs completed through %d rounds of terminated backends", jobs, kills)
}
