package drover_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

type ChargeArgs struct {
	Customer string `json:"customer"`
	Step     string `json:"step"`
}

func (ChargeArgs) Kind() string { return "charge" }

// Example_key runs the jobs of one customer one at a time in insert order,
// however many workers the queue has: Key makes them a FIFO group, like an
// SQS message group. Jobs of other keys run in parallel.
func Example_key() {
	ctx := context.Background()
	d, cleanup := exampleStore(ctx)
	defer cleanup()

	var mu sync.Mutex
	var steps []string
	var wg sync.WaitGroup
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[ChargeArgs]) error {
		mu.Lock()
		steps = append(steps, j.Args.Step)
		mu.Unlock()
		wg.Done()
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
	var jobs []drover.InsertManyParams
	for _, step := range []string{"authorize", "capture", "receipt"} {
		jobs = append(jobs, drover.InsertManyParams{
			Args: ChargeArgs{Customer: "c-42", Step: step},
			Opts: &drover.InsertOpts{Key: "customer:c-42"},
		})
	}
	wg.Add(len(jobs))
	ids, err := client.InsertMany(ctx, jobs)
	if err != nil {
		panic(err)
	}
	second, _ := client.JobGet(ctx, ids[1])
	fmt.Println("before work, the second job is", second.State)

	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	wg.Wait()
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil {
		panic(err)
	}
	fmt.Println(steps)
	// Output:
	// before work, the second job is blocked
	// [authorize capture receipt]
}

// Example_keyRate caps how often the jobs of one key start, across every
// process: here one sync per customer per minute. The first job is
// claimable at once; the next ones wait for their tokens as scheduled jobs.
func Example_keyRate() {
	ctx := context.Background()
	d, cleanup := exampleStore(ctx)
	defer cleanup()
	client, err := drover.NewClient(d, nil) // insert only
	if err != nil {
		panic(err)
	}
	opts := &drover.InsertOpts{Key: "customer:c-42", KeyLimit: 3, KeyRate: 1, KeyRatePeriod: time.Minute}
	for range 3 {
		row, err := client.Insert(ctx, ChargeArgs{Customer: "c-42", Step: "sync"}, opts)
		if err != nil {
			panic(err)
		}
		stored, err := client.JobGet(ctx, row.ID)
		if err != nil {
			panic(err)
		}
		fmt.Println(stored.State, stored.RunAt.Sub(row.CreatedAt).Round(time.Minute))
	}
	// Output:
	// available 0s
	// scheduled 1m0s
	// scheduled 2m0s
}

type AccountReportArgs struct {
	Account int `json:"account"`
}

func (AccountReportArgs) Kind() string { return "account_report" }

// Example_uniqueKey skips a second insert while the first job with the same
// unique key has not finished: the insert succeeds and says so. Once the
// job finishes, the key is free again (see Example_uniqueStates to keep it).
func Example_uniqueKey() {
	ctx := context.Background()
	d, cleanup := exampleStore(ctx)
	defer cleanup()
	client, err := drover.NewClient(d, nil) // insert only
	if err != nil {
		panic(err)
	}
	opts := &drover.InsertOpts{UniqueKey: "account:7", UniquePeriod: time.Hour}
	first, err := client.Insert(ctx, AccountReportArgs{Account: 7}, opts)
	if err != nil {
		panic(err)
	}
	second, err := client.Insert(ctx, AccountReportArgs{Account: 7}, opts)
	if err != nil {
		panic(err)
	}
	fmt.Println("first stored:", first.ID > 0, "duplicate:", first.UniqueSkippedAsDuplicate)
	fmt.Println("second stored:", second.ID > 0, "duplicate:", second.UniqueSkippedAsDuplicate)
	// Output:
	// first stored: true duplicate: false
	// second stored: false duplicate: true
}

// Example_uniqueStates allows at most one completed report per account:
// listing completed among UniqueStates keeps the key held by the job once
// it completed, so a second request is skipped, while a failed report
// (discarded or cancelled) would free the key for another try. Adding
// UniquePeriod: 24 * time.Hour would make it one per account and day.
func Example_uniqueStates() {
	ctx := context.Background()
	d, cleanup := exampleStore(ctx)
	defer cleanup()

	done := make(chan struct{})
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[AccountReportArgs]) error {
		fmt.Println("report for account", j.Args.Account)
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
	opts := &drover.InsertOpts{
		UniqueKey:    "account:7",
		UniqueStates: append(drovertype.UnfinishedStates(), drovertype.JobStateCompleted),
	}
	first, err := client.Insert(ctx, AccountReportArgs{Account: 7}, opts)
	if err != nil {
		panic(err)
	}
	<-done
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil { // writes the result before returning
		panic(err)
	}
	job, err := client.JobGet(ctx, first.ID)
	if err != nil {
		panic(err)
	}
	again, err := client.Insert(ctx, AccountReportArgs{Account: 7}, opts)
	if err != nil {
		panic(err)
	}
	fmt.Println("first:", job.State, "again, duplicate:", again.UniqueSkippedAsDuplicate)
	// Output:
	// report for account 7
	// first: completed again, duplicate: true
}

// ExamplePeriodicJob inserts a job at every tick of a cron schedule. Only
// the elected leader among the clients inserts it, once per tick.
func ExamplePeriodicJob() {
	ctx := context.Background()
	d, cleanup := exampleStore(ctx)
	defer cleanup()

	ran := make(chan int, 1)
	workers := drover.NewWorkers()
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[AccountReportArgs]) error {
		select {
		case ran <- j.Args.Account:
		default:
		}
		return nil
	}))
	client, err := drover.NewClient(d, &drover.Config{
		Queues:  map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 1}},
		Workers: workers,
		Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		PeriodicJobs: []*drover.PeriodicJob{{
			Name:     "nightly-report",
			Schedule: "0 3 * * *", // 03:00 every day
			Construct: func() (drover.Args, *drover.InsertOpts) {
				return AccountReportArgs{Account: 1}, nil
			},
			RunOnStart: true, // and once when a leader starts
			// A leader that starts after downtime also inserts the ticks
			// missed since the last one any leader inserted, up to 7.
			MissedTicks: 7,
		}},
	})
	if err != nil {
		panic(err)
	}
	if err := client.Start(ctx); err != nil {
		panic(err)
	}
	fmt.Println("report for account", <-ran)
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Stop(stopCtx); err != nil {
		panic(err)
	}
	// Output:
	// report for account 1
}
