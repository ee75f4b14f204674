package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverprom"
	"github.com/droverhq/drover/internal/app/bench/stats"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// pickup records insert→start latency of bench jobs run in this process;
// each measured run installs a fresh recorder.
var pickup atomic.Pointer[stats.Latency]

func init() { pickup.Store(stats.NewLatency()) }

func discardLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// NewWorkerCommand returns `drover worker`: a worker process that runs
// Drover's built-in bench job kind until SIGINT or SIGTERM, then stops
// gracefully. The bench's scale scenarios start several of them; users can
// run it to try Drover out against their own store.
func NewWorkerCommand(env func() Env) *cobra.Command {
	var (
		cfg         workerConfig
		statsEvery  time.Duration
		stopTimeout time.Duration
		metricsAddr string
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a worker process for Drover's built-in job kind (drover.bench)",
		Long: "Run a worker process that works jobs of Drover's built-in kind drover.bench (noop, sleep or\n" +
			"CPU work as its args say) until SIGINT or SIGTERM, then stops gracefully: running jobs\n" +
			"finish within --stop-timeout or are released for other workers at once.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e := env()
			if cfg.Concurrency < 1 {
				return usagef("--concurrency %d: must be at least 1", cfg.Concurrency)
			}
			e.fleetOK = true // a worker of a fleet claims from every shard
			target, err := e.target()
			if err != nil {
				return err
			}
			// Listen before the store opens, so that a port in use fails
			// the command before it claims anything.
			var metricsLn net.Listener
			if metricsAddr != "" {
				if metricsLn, err = net.Listen("tcp", metricsAddr); err != nil {
					return fmt.Errorf("--metrics-addr: %w", err)
				}
				defer metricsLn.Close()
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			store, err := storeurl.Open(ctx, target, storeurl.Options{Schema: e.Schema, AutoMigrate: target.Kind == storeurl.SQLite,
				Logf: func(f string, a ...any) { e.Logger.Info(fmt.Sprintf(f, a...)) }})
			if err != nil {
				return err
			}
			defer store.Close()
			ccfg := cfg.clientConfig(store)
			ccfg.Logger = e.Logger
			ccfg.StopTimeout = stopTimeout
			client, err := storeurl.NewClient[workerClient](store, ccfg)
			if err != nil {
				return err
			}
			if err := client.Start(ctx); err != nil {
				return err
			}
			if metricsLn != nil {
				stopMetrics := serveMetrics(metricsLn, client, store.Driver, e.Logger)
				defer stopMetrics()
			}
			e.Logger.Info("worker started", "id", client.ID(), "queue", cfg.Queue, "concurrency", cfg.Concurrency)
			enc := json.NewEncoder(e.Stdout)
			report := func() {
				if statsEvery > 0 {
					_ = enc.Encode(workerStats{Stats: client.Stats(), P99Ms: pickup.Load().Snapshot().P99, Ready: true})
				}
			}
			report()
			var tick <-chan time.Time
			if statsEvery > 0 {
				t := time.NewTicker(statsEvery)
				defer t.Stop()
				tick = t.C
			}
		loop:
			for {
				select {
				case <-ctx.Done():
					break loop
				case <-tick:
					report()
				}
			}
			e.Logger.Info("worker stopping")
			sctx, cancel := context.WithTimeout(context.Background(), stopTimeout+10*time.Second)
			defer cancel()
			err = client.Stop(sctx)
			report()
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Queue, "queue", "bench", "queue to work")
	f.IntVar(&cfg.Concurrency, "concurrency", 100, "jobs run at once")
	f.IntVar(&cfg.ClaimMax, "claim-max", 0, "cap on jobs per claim statement (0: default)")
	f.IntVar(&cfg.GlobalLimit, "global-limit", 0, "cap on the queue's running jobs across every worker (0: none)")
	f.DurationVar(&cfg.Lease, "lease", 30*time.Second, "lease of a claimed job; a dead worker's jobs return after it")
	f.BoolVar(&cfg.DeleteCompleted, "delete-completed", false, "delete plain jobs as they complete instead of keeping them among the finished jobs (Config.DeleteCompleted)")
	f.BoolVar(&cfg.PollOnly, "poll-only", false, "find jobs by polling alone, without LISTEN (needed behind PgBouncer in transaction pooling mode)")
	f.DurationVar(&statsEvery, "stats", 0, "print cumulative counters as a JSON line this often (0: never); durations are in milliseconds, under keys ending in _ms")
	f.StringVar(&metricsAddr, "metrics-addr", "", "serve Prometheus metrics of the jobs this worker runs on this address, at /metrics (e.g. 127.0.0.1:9090; empty: off)")
	f.DurationVar(&stopTimeout, "stop-timeout", 10*time.Second, "on SIGTERM, how long running jobs may finish before they are interrupted and released")
	return cmd
}

// serveMetrics serves the client's figures (droverprom), its store's
// shards' when the store is a fleet, the Go runtime's and the process's at
// /metrics on ln until the returned function is called.
func serveMetrics(ln net.Listener, client droverprom.Source, store droverdriver.Driver, log *slog.Logger) (stop func()) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(droverprom.NewCollector(client), collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if fleet, ok := store.(droverfleet.HealthReporter); ok {
		reg.MustRegister(droverprom.NewShardCollector(fleet))
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	log.Info("metrics listening", "addr", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}
}
