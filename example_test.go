package drover_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droversqlite"
)

type GreetArgs struct {
	Name string `json:"name"`
}

func (GreetArgs) Kind() string { return "greet" }

// Example inserts a job into an embedded SQLite store and works it.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "drover-example")
	defer os.RemoveAll(dir)

	d, err := droversqlite.Open(ctx, filepath.Join(dir, "app.db"))
	if err != nil {
		panic(err)
	}
	defer d.Close()
	if _, err := drover.Migrate(ctx, d); err != nil {
		panic(err)
	}

	done := make(chan struct{})
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[GreetArgs]) error {
		fmt.Printf("hello, %s (attempt %d)\n", j.Args.Name, j.Attempt)
		close(done)
		return nil
	}))
	client, err := drover.NewClient(d, &drover.Config{
		Queues:  map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 10}},
		Workers: workers,
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	row, err := client.Insert(ctx, GreetArgs{Name: "Drover"}, nil)
	if err != nil {
		panic(err)
	}
	<-done
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil { // writes the result before returning
		panic(err)
	}
	job, err := client.JobGet(ctx, row.ID)
	if err != nil {
		panic(err)
	}
	fmt.Println(job.State)
	// Output:
	// hello, Drover (attempt 1)
	// completed
}
