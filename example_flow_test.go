package drover_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
)

// exampleStore opens a migrated SQLite store in a temporary directory.
func exampleStore(ctx context.Context) (*droversqlite.Driver, func()) {
	dir, _ := os.MkdirTemp("", "drover-example")
	d, err := droversqlite.Open(ctx, filepath.Join(dir, "app.db"))
	if err != nil {
		panic(err)
	}
	if _, err := drover.Migrate(ctx, d); err != nil {
		panic(err)
	}
	return d, func() { d.Close(); os.RemoveAll(dir) }
}

type FetchArgs struct {
	URL string `json:"url"`
}

func (FetchArgs) Kind() string { return "fetch" }

type CountWordsArgs struct{}

func (CountWordsArgs) Kind() string { return "count_words" }

// ExampleClient_InsertChain runs two steps in sequence: the second starts
// only once the first completed, and reads the first one's result.
func ExampleClient_InsertChain() {
	ctx := context.Background()
	d, cleanup := exampleStore(ctx)
	defer cleanup()

	done := make(chan struct{})
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[FetchArgs]) error {
		return j.SetResult(map[string]string{"body": "to be or not to be"})
	}))
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[CountWordsArgs]) error {
		defer close(done)
		parents, err := j.ParentResults(ctx)
		if err != nil {
			return err
		}
		fmt.Printf("parent %s: %s\n", parents[0].Kind, parents[0].Result)
		return j.SetResult(6)
	}))
	client, err := drover.NewClient(d, &drover.Config{
		Queues:  map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 10}},
		Workers: workers,
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		panic(err)
	}
	ids, err := client.InsertChain(ctx, []drover.InsertManyParams{
		{Args: FetchArgs{URL: "https://example.com"}},
		{Args: CountWordsArgs{}},
	})
	if err != nil {
		panic(err)
	}
	second, _ := client.JobGet(ctx, ids[1])
	fmt.Println("before start, step 2 is", second.State)

	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	<-done
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil {
		panic(err)
	}
	res, _ := client.JobResult(ctx, ids[1])
	fmt.Println("step 2:", res.State, string(res.Result))
	// Output:
	// before start, step 2 is pending
	// parent fetch: {"body":"to be or not to be"}
	// step 2: completed 6
}

type SimulateArgs struct {
	Seed int `json:"seed"`
}

func (SimulateArgs) Kind() string { return "simulate" }

type ReportArgs struct{}

func (ReportArgs) Kind() string { return "report" }

// ExampleClient_InsertBatch inserts a batch of runs with a callback that
// runs once, when the last run ended, and sums the stored results.
func ExampleClient_InsertBatch() {
	ctx := context.Background()
	d, cleanup := exampleStore(ctx)
	defer cleanup()

	var client *drover.Client[*sql.Tx]
	done := make(chan struct{})
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[SimulateArgs]) error {
		return j.SetResult(j.Args.Seed * j.Args.Seed)
	}))
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[ReportArgs]) error {
		defer close(done)
		sum := 0
		err := client.BatchResults(ctx, j.BatchID, func(r drovertype.JobResult) error {
			var v int
			if err := json.Unmarshal(r.Result, &v); err != nil {
				return err
			}
			sum += v
			return nil
		})
		fmt.Println("sum of squares:", sum)
		return err
	}))
	client, err := drover.NewClient(d, &drover.Config{
		Queues:  map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 10}},
		Workers: workers,
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		panic(err)
	}
	runs := make([]drover.InsertManyParams, 100)
	for i := range runs {
		runs[i] = drover.InsertManyParams{Args: SimulateArgs{Seed: i}}
	}
	batch, err := client.InsertBatch(ctx, runs, &drover.BatchOpts{Callback: ReportArgs{}})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	<-done
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil {
		panic(err)
	}
	b, _ := client.BatchGet(ctx, batch.ID)
	fmt.Printf("total %d, completed %d, finished %t\n", b.Total, b.Completed, b.Finished())
	// Output:
	// sum of squares: 328350
	// total 100, completed 100, finished true
}
