package drover_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/droverhq/drover"
)

type RenderArgs struct {
	Scene string `json:"scene"`
}

func (RenderArgs) Kind() string { return "render" }

// Example_routing sends jobs to a kind of worker: two clients work the
// same queue, one a GPU worker with labels, one a CPU worker. A job that
// asks for a GPU with 48 GB runs on the GPU client only; a plain job runs
// on either; a job no live worker can take waits, and says so.
func Example_routing() {
	ctx := context.Background()
	d, cleanup := exampleStore(ctx)
	defer cleanup()

	var mu sync.Mutex
	ranOn := map[string]string{}
	var wg sync.WaitGroup
	worker := func(name string, w drover.WorkerConfig) *drover.Client[*sql.Tx] {
		workers := drover.NewWorkers()
		drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[RenderArgs]) error {
			mu.Lock()
			ranOn[j.Args.Scene] = name
			mu.Unlock()
			wg.Done()
			return nil
		}))
		c, err := drover.NewClient(d, &drover.Config{
			ID:      name,
			Queues:  map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 2}},
			Workers: workers,
			Worker:  w,
			Logger:  slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		})
		if err != nil {
			panic(err)
		}
		if err := c.Start(ctx); err != nil {
			panic(err)
		}
		return c
	}
	gpu := worker("gpu-1", drover.WorkerConfig{Type: "gpu", Labels: map[string]string{"vram": "48g"}})
	cpu := worker("cpu-1", drover.WorkerConfig{Type: "cpu"})

	wg.Add(2)
	if _, err := gpu.InsertMany(ctx, []drover.InsertManyParams{
		{Args: RenderArgs{Scene: "forest"}, Opts: &drover.InsertOpts{WorkerType: "gpu", WorkerLabels: map[string]string{"vram": "48g"}}},
		{Args: RenderArgs{Scene: "thumbnail"}, Opts: &drover.InsertOpts{WorkerType: "cpu"}},
	}); err != nil {
		panic(err)
	}
	// No worker has an 80 GB GPU: the job waits, reported as unroutable.
	big, err := gpu.Insert(ctx, RenderArgs{Scene: "city"}, &drover.InsertOpts{WorkerType: "gpu",
		WorkerLabels: map[string]string{"vram": "80g"}})
	if err != nil {
		panic(err)
	}
	wg.Wait()
	stored, err := gpu.JobGet(ctx, big.ID)
	if err != nil {
		panic(err)
	}
	unroutable, err := gpu.Unroutable(ctx)
	if err != nil {
		panic(err)
	}
	for _, c := range []*drover.Client[*sql.Tx]{gpu, cpu} {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := c.Stop(stopCtx); err != nil {
			panic(err)
		}
		cancel()
	}
	scenes := make([]string, 0, len(ranOn))
	for s := range ranOn {
		scenes = append(scenes, s)
	}
	sort.Strings(scenes)
	for _, s := range scenes {
		fmt.Println(s, "ran on", ranOn[s])
	}
	fmt.Println("city is", stored.State, "and unroutable:", stored.Unroutable)
	fmt.Println("unroutable jobs:", unroutable[0].Jobs, "waiting for", unroutable[0].Routing.Labels)
	// Output:
	// forest ran on gpu-1
	// thumbnail ran on cpu-1
	// city is available and unroutable: true
	// unroutable jobs: 1 waiting for map[vram:80g]
}
