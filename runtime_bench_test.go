package drover_test

import (
	"context"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// BenchmarkRuntimeNoop measures what a client's runtime costs per noop job
// (claim hand-out, tracker, dispatch, timeout, args decoding, the handler
// call, the completer), apart from any store: claims and finishes go to
// an in-memory store that hands out rows as a driver would and accepts
// every result. It reports the process's CPU per job (cpu-ns/job), which
// on a shared machine is steadier than the wall time per op, and
// allocations per job.
//
//	go test -run '^$' -bench RuntimeNoop -benchtime 400000x -count 5 .
func BenchmarkRuntimeNoop(b *testing.B) {
	for _, bc := range []struct {
		name    string
		workers int
	}{
		{"workers=1000", 1000},
		{"workers=50", 50},
	} {
		b.Run(bc.name, func(b *testing.B) {
			store := newMemStore(b.N)
			workers := drover.NewWorkers()
			drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[benchNoopArgs]) error {
				if j.Args.Seq < 0 {
					return ctx.Err()
				}
				return nil
			}))
			client, err := drover.NewClient[struct{}](memDriver{exec: store}, &drover.Config{
				Queues:   map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: bc.workers}},
				Workers:  workers,
				Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
				PollOnly: true,
			})
			if err != nil {
				b.Fatal(err)
			}
			// The drover binary's collector target (cmd/drover), which the
			// bench's client CPU is measured with.
			defer debug.SetGCPercent(debug.SetGCPercent(400))
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU()
			if err := client.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			select {
			case <-store.done:
			case <-time.After(5 * time.Minute):
				b.Fatalf("%d of %d jobs finished", store.finished.Load(), b.N)
			}
			b.StopTimer()
			used := processCPU() - cpu
			st := client.Stats()
			b.ReportMetric(float64(st.ClaimedJobs)/float64(max(1, st.Claims)), "jobs/claim")
			b.ReportMetric(float64(st.FlushedResults)/float64(max(1, st.Flushes)), "jobs/flush")
			if err := client.Stop(context.Background()); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/job")
		})
	}
}

type benchNoopArgs struct {
	Seq int64 `json:"seq"`
	At  int64 `json:"at,omitempty"`
}

func (benchNoopArgs) Kind() string { return "bench.noop" }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// memDriver is the driver of BenchmarkRuntimeNoop, whose executor is a
// memStore. Methods the benchmark does not reach are left to the embedded
// nil interface (they would panic).
type memDriver struct {
	droverdriver.TxDriver[struct{}]
	exec *memStore
}

func (d memDriver) Executor() droverdriver.Executor          { return d.exec }
func (memDriver) Name() string                               { return "memory" }
func (memDriver) Schema() string                             { return "" }
func (memDriver) PollInterval() time.Duration                { return time.Millisecond }
func (memDriver) NewListener() droverdriver.Listener         { return nil }
func (memDriver) SchemaVersion(context.Context) (int, error) { return 1, nil }
func (memDriver) Migrations() []drovertype.Migration {
	return []drovertype.Migration{{Version: 1}}
}

// memStore is the executor of BenchmarkRuntimeNoop: it hands out n noop
// jobs and counts their results. Methods the benchmark does not reach are
// left to the embedded nil interface (they would panic).
type memStore struct {
	droverdriver.Executor
	n        int64
	mu       sync.Mutex
	claimed  int64
	finished atomic.Int64
	done     chan struct{}
	once     sync.Once
	args     []byte
}

func newMemStore(n int) *memStore {
	return &memStore{n: int64(n), done: make(chan struct{}), args: []byte(`{"seq":123456,"at":0}`)}
}

func (s *memStore) LeaderElect(context.Context, droverdriver.LeaderParams) (bool, error) {
	return false, nil
}

// WorkerSeen and WorkerGone accept the client's row of the worker registry
// and its removal, which the client writes as it starts and stops.
func (s *memStore) WorkerSeen(context.Context, []drovertype.WorkerRecord) error { return nil }
func (s *memStore) WorkerGone(context.Context, string, string) error            { return nil }

func (s *memStore) QueueSettingsGet(context.Context, string) (*drovertype.QueueSettings, error) {
	return nil, nil
}

func (s *memStore) JobHeartbeat(_ context.Context, p droverdriver.HeartbeatParams) (droverdriver.HeartbeatResult, error) {
	return droverdriver.HeartbeatResult{}, nil
}

func (s *memStore) JobClaim(_ context.Context, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	s.mu.Lock()
	start := s.claimed
	s.claimed = min(s.n, start+int64(p.Max))
	end := s.claimed
	s.mu.Unlock()
	token := drovertype.NewLeaseToken()
	now := time.Now()
	rows := make([]*drovertype.JobRow, 0, end-start)
	for id := start + 1; id <= end; id++ {
		rows = append(rows, &drovertype.JobRow{ID: id, State: drovertype.JobStateRunning, Queue: p.Queue,
			Kind: "bench.noop", EncodedArgs: s.args, Metadata: []byte("{}"), Tags: []string{}, Attempt: 1, MaxAttempts: 25,
			CreatedAt: now, RunAt: now, AttemptedAt: &now, LeaseOwner: p.Owner, LeaseToken: token})
	}
	return rows, nil
}

func (s *memStore) JobFinishMany(_ context.Context, p droverdriver.FinishParams) (droverdriver.FinishResult, error) {
	if s.finished.Add(int64(len(p.Results))) >= s.n {
		s.once.Do(func() { close(s.done) })
	}
	return droverdriver.FinishResult{All: true}, nil
}
