package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/bench/pgstore"
	"github.com/droverhq/drover/internal/app/bench/report"
	"github.com/droverhq/drover/internal/app/bench/stats"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// topicClient is what the fanout scenario calls of a drover.Client.
type topicClient interface {
	workerClient
	CreateTopic(ctx context.Context, name string, opts *drover.TopicOpts) (*drover.Topic, error)
	Publish(ctx context.Context, topic string, msgs ...drover.Message) ([]int64, error)
	CreateSubscription(ctx context.Context, topic, name string, opts *drover.SubscriptionOpts) (bool, error)
	DeleteSubscription(ctx context.Context, topic, name string) (bool, error)
	SubscriptionLags(ctx context.Context, topics ...string) ([]drovertype.SubscriptionLag, error)
}

// fanoutOptions are the knobs of `drover bench fanout`, shaped after the
// chat server of issue 24's seed: rooms (topics) × members (subscriptions).
type fanoutOptions struct {
	messages, topics, subscriptions, publishers, batch, consumers, batchSize, lanes int
	processes                                                                       []int
	// rate paces publishing at this many messages per second (0: as fast
	// as the publishers go), to read latency below the maximum rate.
	rate int
	// inProcess runs the consumer clients in the bench process instead of
	// as `drover bench fanout-consumer` processes (profiling).
	inProcess bool
	// fault is "" or "kill-worker": SIGKILL one consumer process half way
	// through publishing and start a replacement.
	fault string
	lease time.Duration
	// lagEvery is how often the run samples every subscription's lag (0:
	// never), for max_lag and the plot.
	lagEvery time.Duration
	// backlog publishes every message before the consumers start, and
	// measures their consumption alone (bench shards).
	backlog bool
	// via is client (drover bench fanout-consumer processes), python or
	// typescript (the SDK's consumers through drover serve's API, run by
	// sdk: fanoutsdk.go).
	via string
	sdk sdk
}

// FanoutReport is the JSON of `drover bench fanout`: one point per count of
// consumer clients.
type FanoutReport struct {
	Scenario string        `json:"scenario"`
	Driver   string        `json:"driver"`
	Command  string        `json:"command"`
	Settings string        `json:"settings"`
	Points   []FanoutPoint `json:"points"`
	// Notes say what the cost figures include.
	Notes []string `json:"notes,omitempty"`
	// The top-level figures are those of the first point, so that a run
	// with one point reads as flat keys.
	FanoutPoint
}

// FanoutPoint is one run of the scenario with Clients consumer processes
// (or clients in the bench process with --in-process).
type FanoutPoint struct {
	Clients          int     `json:"clients"`
	Processes        bool    `json:"processes"`
	Killed           int     `json:"killed"`
	Messages         int64   `json:"messages"`
	Deliveries       int64   `json:"deliveries"`
	Seconds          float64 `json:"seconds"`
	PublishedPerSec  float64 `json:"published_per_sec"`
	DeliveriesPerSec float64 `json:"deliveries_per_sec"`
	// LatencyMs is publish to handler start.
	LatencyMs stats.Percentiles `json:"latency_ms"`
	// Lost counts (message, subscription) pairs never delivered, Duplicates
	// deliveries past the first, both from the per-delivery ledger.
	Lost       int64 `json:"lost"`
	Duplicates int64 `json:"duplicates"`
	// MaxLag is the largest lag of any subscription in the samples taken
	// every --lag-every from the start of publishing until every message
	// was acked, and Lag those samples: a consumer that keeps up holds it
	// near the publish batch times the lanes in flight; one that falls
	// behind lets it grow with the run.
	MaxLag int64              `json:"max_lag"`
	Lag    []report.LagSample `json:"lag,omitempty"`
	// Via is how the consumers reached the store (client, python,
	// typescript); DeliveriesPerSecPerProcess divides the rate by the
	// consumer processes, and ConsumerCPUUsPerDelivery is their own CPU
	// (not the bench's or an API server's) per delivery.
	Via                        string   `json:"via,omitempty"`
	DeliveriesPerSecPerProcess float64  `json:"deliveries_per_sec_per_process,omitempty"`
	ConsumerCPUUsPerDelivery   *float64 `json:"consumer_cpu_us_per_delivery,omitempty"`
	FanoutCost
}

// FanoutCost is what one delivery, and one published message, cost per
// resource from the start of publishing until the last ack (cost.go): the
// store's CPU, the client's (the bench process, which publishes, and the
// consumer processes), the WAL written; and on PostgreSQL the rows the
// store wrote, from its statistics, per table. Delivering writes no row
// per delivery: a lane's cursor moves once per batch, so rows per delivery
// stay far below one.
type FanoutCost struct {
	StoreCPUUsPerDelivery  *float64 `json:"store_cpu_us_per_delivery,omitempty"`
	ClientCPUUsPerDelivery *float64 `json:"client_cpu_us_per_delivery,omitempty"`
	WALBytesPerDelivery    *float64 `json:"wal_bytes_per_delivery,omitempty"`
	StoreCPUUsPerMessage   *float64 `json:"store_cpu_us_per_message,omitempty"`
	ClientCPUUsPerMessage  *float64 `json:"client_cpu_us_per_message,omitempty"`
	WALBytesPerMessage     *float64 `json:"wal_bytes_per_message,omitempty"`
	// RowsWritten counts the rows inserted, updated and deleted per table
	// over the run; RowsPerDelivery is their sum per delivery.
	RowsWritten     map[string]int64 `json:"rows_written,omitempty"`
	RowsPerDelivery *float64         `json:"rows_written_per_delivery,omitempty"`
}

// fanoutCost turns the readings around a run into costs per delivery and
// per message.
func fanoutCost(before, after costSample, rowsBefore, rowsAfter map[string]int64, deliveries, messages int64) FanoutCost {
	d, m := perJob(before, after, deliveries), perJob(before, after, messages)
	c := FanoutCost{StoreCPUUsPerDelivery: d.StoreCPUUsPerJob, ClientCPUUsPerDelivery: d.ClientCPUUsPerJob, WALBytesPerDelivery: d.WALBytesPerJob,
		StoreCPUUsPerMessage: m.StoreCPUUsPerJob, ClientCPUUsPerMessage: m.ClientCPUUsPerJob, WALBytesPerMessage: m.WALBytesPerJob}
	if rowsBefore == nil || rowsAfter == nil || deliveries <= 0 {
		return c
	}
	c.RowsWritten = map[string]int64{}
	var sum int64
	for table, n := range rowsAfter {
		if n -= rowsBefore[table]; n > 0 {
			c.RowsWritten[table] = n
			sum += n
		}
	}
	v := float64(int64(float64(sum)/float64(deliveries)*10000+0.5)) / 10000
	c.RowsPerDelivery = &v
	return c
}

// String is the cost in one line, for the bench's output: what was
// measured, per delivery.
func (c FanoutCost) String() string {
	var parts []string
	add := func(name string, v *float64, unit string) {
		if v != nil {
			parts = append(parts, fmt.Sprintf("%s %.2f %s", name, *v, unit))
		}
	}
	add("store CPU", c.StoreCPUUsPerDelivery, "µs")
	add("client CPU", c.ClientCPUUsPerDelivery, "µs")
	add("WAL", c.WALBytesPerDelivery, "B")
	if c.RowsPerDelivery != nil {
		parts = append(parts, fmt.Sprintf("rows written %.3f", *c.RowsPerDelivery))
	}
	if len(parts) == 0 {
		return "not measured"
	}
	return strings.Join(parts, ", ")
}

// rowsWritten reads the store's row counts, nil when it has none. A
// PostgreSQL backend holds its counts back while it flushed less than a
// second ago, and once idle sends them only ten seconds later, or when it
// exits: so the bench's own connections are closed first (consumer
// processes have exited or not started), and the counts read until they
// stop moving.
func rowsWritten(ctx context.Context, store *storeurl.Store) map[string]int64 {
	rc, ok := pgstore.Of(store.Driver)
	if !ok {
		return nil
	}
	rc.ResetPool()
	rows, err := rc.RowsWritten(ctx)
	if err != nil {
		return nil
	}
	for moved, deadline := time.Now(), time.Now().Add(5*time.Second); time.Since(moved) < 1200*time.Millisecond && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		again, err := rc.RowsWritten(ctx)
		if err != nil {
			return nil
		}
		if !maps.Equal(again, rows) {
			rows, moved = again, time.Now()
		}
	}
	return rows
}

func newFanoutCommand(env func() Env) *cobra.Command {
	o := fanoutOptions{messages: 100_000, topics: 20, subscriptions: 50, publishers: 50, batch: 100,
		consumers: 1, batchSize: 500, lanes: 4, processes: []int{1}, lease: 5 * time.Second, lagEvery: 250 * time.Millisecond}
	var processes, jsonPath, plotPath, cpuProfile, python, node, nodeProject string
	var keep bool
	cmd := &cobra.Command{
		Use:   "fanout",
		Short: "Publish --messages over --topics topics of --subscriptions subscriptions each; check every delivery from a ledger",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if processes != "" {
				var err error
				if o.processes, err = parseInts("--processes", processes, 1); err != nil {
					return err
				}
			}
			if o.messages < 1 || o.topics < 1 || o.subscriptions < 1 || o.publishers < 1 || o.batch < 1 || len(o.processes) == 0 {
				return usagef("--messages, --topics, --subscriptions, --publishers, --batch and --processes must be positive")
			}
			if o.fault != "" && o.fault != "kill-worker" {
				return usagef("--fault %q: the only fault is kill-worker", o.fault)
			}
			if o.fault != "" && o.inProcess {
				return usagef("--fault kill-worker needs consumer processes, not --in-process")
			}
			if err := o.fanoutSDK(cmd.Context(), python, node, nodeProject); err != nil {
				return err
			}
			if o.via != viaClient && o.inProcess {
				return usagef("--via %s runs SDK consumer processes, not --in-process", o.via)
			}
			if plotPath != "" && o.lagEvery <= 0 {
				return usagef("--plot draws the lag samples: --lag-every must be positive")
			}
			if ext := strings.ToLower(filepath.Ext(plotPath)); plotPath != "" && ext != ".svg" {
				return usagef("--plot %s: only SVG is drawn, use a .svg path", plotPath)
			}
			if err := checkOutputPaths([2]string{"--json", jsonPath}, [2]string{"--plot", plotPath}, [2]string{"--cpuprofile", cpuProfile}); err != nil {
				return err
			}
			stop, err := startProfiles(cpuProfile, "", cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer stop()
			return runFanout(cmd.Context(), env(), o, jsonPath, plotPath, keep)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.messages, "messages", o.messages, "messages published in all, per point")
	f.IntVar(&o.topics, "topics", o.topics, "topics (rooms) the messages are spread over, round robin")
	f.IntVar(&o.subscriptions, "subscriptions", o.subscriptions, "subscriptions (members) of each topic")
	f.IntVar(&o.publishers, "publishers", o.publishers, "publisher goroutines")
	f.IntVar(&o.batch, "batch", o.batch, "messages per Publish call")
	f.IntVar(&o.lanes, "lanes", o.lanes, "lanes of each topic")
	f.IntVar(&o.consumers, "consumers", o.consumers, "batches of one subscription a client handles at once")
	f.IntVar(&o.batchSize, "batch-size", o.batchSize, "messages per delivered batch")
	f.StringVar(&processes, "processes", "1", "consumer processes per point, a list (1,2,4): each a `drover bench fanout-consumer` serving every subscription")
	f.BoolVar(&o.inProcess, "in-process", false, "run the consumers as clients in the bench process instead of processes")
	f.StringVar(&o.via, "via", viaClient, "the consumer processes: client (drover bench fanout-consumer), python or typescript (the SDK's consumer, through drover serve's API served from the bench process)")
	f.BoolVar(&o.backlog, "backlog", false, "publish every message before the consumers start, and measure their consumption alone")
	f.StringVar(&python, "python", "", "the Python that runs --via python consumers, with the SDK installed (default $"+pythonEnv+", else python3)")
	f.StringVar(&node, "node", "", "the node that runs --via typescript consumers (default $"+nodeEnv+", else node)")
	f.StringVar(&nodeProject, "node-project", "", "a directory where `npm install ./sdk/typescript` was run (default $"+nodeProjEnv+", else the current directory)")
	f.IntVar(&o.rate, "rate", 0, "publish at most this many messages per second in all (0: as fast as possible)")
	f.StringVar(&o.fault, "fault", "", "kill-worker: SIGKILL one consumer process half way through publishing, and start another")
	f.DurationVar(&o.lease, "lease", o.lease, "lane lease of the consumers: how soon a killed consumer's lanes are delivered again")
	f.DurationVar(&o.lagEvery, "lag-every", o.lagEvery, "sample every subscription's lag this often, for max_lag and --plot (0: never; one lag statement per sample)")
	f.StringVar(&jsonPath, "json", "", "write the machine-readable report to this file")
	f.StringVar(&plotPath, "plot", "", "draw the largest subscription lag over time, one line per point, to this .svg file")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the bench process to this file (go tool pprof)")
	f.BoolVar(&keep, "keep", false, "keep the bench's own schema (or ./"+benchFile+") after the run")
	return cmd
}

func runFanout(ctx context.Context, env Env, o fanoutOptions, jsonPath, plotPath string, keep bool) error {
	bt, err := resolveTarget(&env)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stderr, bt.describe(keep))
	maxConns := 0
	if bt.Target.Kind == storeurl.Postgres {
		maxConns = max(8, o.publishers/4+4*maxOf(o.processes))
	}
	store, err := storeurl.Open(ctx, bt.Target, storeurl.Options{Schema: env.Schema, AutoMigrate: true, MaxConns: maxConns,
		Logf: func(f string, a ...any) { fmt.Fprintf(env.Stderr, f+"\n", a...) }})
	if err != nil {
		return err
	}
	defer bt.cleanup(ctx, store, keep, env.Stderr)
	pub, err := storeurl.NewClient[topicClient](store, &drover.Config{Logger: discardLogger()})
	if err != nil {
		return err
	}
	meter := newCostMeter(ctx, bt.Target)
	defer meter.close()
	rep := &FanoutReport{Scenario: "fanout", Driver: store.Driver.Name(), Command: commandLine(bt.Target),
		Settings: fmt.Sprintf("%d topics × %d subscriptions, %d lanes, %d publishers × %d messages per publish, batches of %d, %d consumers per subscription per client, rate %d/s (0: unpaced)",
			o.topics, o.subscriptions, o.lanes, o.publishers, o.batch, o.batchSize, o.consumers, o.rate)}
	for _, k := range o.processes {
		// Each point starts from the same store: the last point's lanes
		// deleted (fanoutPoint) and, on PostgreSQL, the dead rows of its
		// lane updates vacuumed and a checkpoint taken, outside the
		// measured interval; a later point paid for an earlier one's
		// bloat (4 processes after 1 and 2: 1.2M deliveries/s, alone 2.5M).
		if s, ok := pgstore.Of(store.Driver); ok {
			if err := s.Settle(ctx); err != nil {
				return err
			}
		}
		pt, err := fanoutPoint(ctx, env, store, pub, meter, o, k)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "consumers %d: %.0f published/s, %.0f deliveries/s, latency p50 %.1f ms p95 %.1f ms p99 %.1f ms, max lag %d, lost %d, duplicates %d\n",
			k, pt.PublishedPerSec, pt.DeliveriesPerSec, pt.LatencyMs.P50, pt.LatencyMs.P95, pt.LatencyMs.P99, pt.MaxLag, pt.Lost, pt.Duplicates)
		fmt.Fprintf(env.Stdout, "  cost per delivery: %s\n", pt.FanoutCost)
		if pt.ConsumerCPUUsPerDelivery != nil {
			fmt.Fprintf(env.Stdout, "  --via %s: %.0f deliveries/s per consumer process, consumer processes' CPU %.2f µs per delivery\n",
				pt.Via, pt.DeliveriesPerSecPerProcess, *pt.ConsumerCPUUsPerDelivery)
		}
		rep.Points = append(rep.Points, pt)
	}
	rep.FanoutPoint = rep.Points[0]
	rep.Notes = meter.notes
	if jsonPath != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if plotPath != "" {
		runs := make([]report.LagRun, len(rep.Points))
		for i, pt := range rep.Points {
			runs[i] = report.LagRun{Name: fmt.Sprintf("%d consumers", pt.Clients), Samples: pt.Lag}
		}
		svg := report.LagSVG("fanout: largest subscription lag over time", rep.Driver+" · "+rep.Settings, runs)
		if err := os.WriteFile(plotPath, svg, 0o644); err != nil {
			return err
		}
	}
	for _, pt := range rep.Points {
		if pt.Lost > 0 {
			return fmt.Errorf("fanout with %d consumers lost %d deliveries", pt.Clients, pt.Lost)
		}
	}
	return nil
}

// fanoutPoint publishes o.messages over fresh topics and subscriptions
// consumed by k consumer processes (or clients), and counts every delivery
// in a ledger: one counter per (subscription, message). Consumer processes
// append each batch they handle to a ledger file before it is acked, so a
// killed one's deliveries count too (a redelivered batch is a duplicate,
// never a loss).
func fanoutPoint(ctx context.Context, env Env, store *storeurl.Store, pub topicClient, meter *costMeter, o fanoutOptions, k int) (FanoutPoint, error) {
	id := make([]byte, 3)
	_, _ = rand.Read(id)
	prefix := "fan" + hex.EncodeToString(id)
	perTopic := fanoutPerTopic(o)
	// ledger[t][s][i] counts deliveries of message i of topic t to
	// subscription s.
	ledger := make([][][]uint8, o.topics)
	for t := range o.topics {
		topic := fanoutTopic(prefix, t)
		if _, err := pub.CreateTopic(ctx, topic, &drover.TopicOpts{Lanes: o.lanes}); err != nil {
			return FanoutPoint{}, err
		}
		ledger[t] = make([][]uint8, o.subscriptions)
		for s := range o.subscriptions {
			if _, err := pub.CreateSubscription(ctx, topic, fanoutSub(s), nil); err != nil {
				return FanoutPoint{}, err
			}
			ledger[t][s] = make([]uint8, perTopic)
		}
	}
	lat := stats.NewLatency()
	var cons fanoutConsumers
	if o.inProcess {
		cons = &localConsumers{store: store, o: o, prefix: prefix, k: k, ledger: ledger, lat: lat}
	} else {
		dir, err := os.MkdirTemp("", "drover-fanout-")
		if err != nil {
			return FanoutPoint{}, err
		}
		defer os.RemoveAll(dir)
		pc := &procConsumers{env: env, o: o, prefix: prefix, dir: dir}
		if o.via != viaClient {
			if pc.api, err = startAPI(store, o.lease, nil); err != nil {
				return FanoutPoint{}, err
			}
			defer func() { _ = pc.api.stop(context.Background()) }()
		}
		cons = pc
		// With --backlog the consumer processes start once every message
		// is published (below): started before, they consumed while the
		// publishers ran, and the rate counted what was left. A kill needs
		// them while publishing.
		if !o.backlog || o.fault == "kill-worker" {
			if err := pc.spawnAll(k); err != nil {
				return FanoutPoint{}, err
			}
		}
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = cons.stop()
		}
	}()
	if !o.backlog {
		if err := cons.start(ctx); err != nil {
			return FanoutPoint{}, err
		}
	}
	rowsBefore := rowsWritten(ctx, store)
	cost := meter.start(ctx, cons.pids())
	consumerCPU := processesCPU("/proc", cons.pids())
	start := time.Now()
	sampler := startLagSampler(ctx, pub, prefix, o, start)
	defer func() { _, _ = sampler.stop() }() // for the error paths; stop is idempotent
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.publishers)
	killAt := int64(o.messages / 2)
	killed := 0
	var killOnce sync.Once
	for range o.publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each publish carries messages of one topic (a room's
			// messages, in a chat server): one write per topic, however
			// many topics.
			msgs := make([]drover.Message, 0, o.batch)
			for {
				first := next.Add(int64(o.batch)) - int64(o.batch)
				if first >= int64(o.messages) {
					return
				}
				if o.fault == "kill-worker" && first >= killAt {
					killOnce.Do(func() {
						if err := cons.(*procConsumers).killOne(); err != nil {
							errs <- err
						}
						killed++
					})
				}
				if o.rate > 0 {
					due := start.Add(time.Duration(float64(first) / float64(o.rate) * float64(time.Second)))
					if wait := time.Until(due); wait > 0 {
						time.Sleep(wait)
					}
				}
				t := int(first/int64(o.batch)) % o.topics
				now := uint64(time.Now().UnixNano())
				msgs = msgs[:0]
				for i := range int64(o.batch) {
					// Message seq of topic t is the i-th of the batch;
					// batches are numbered per topic by first/batch/topics.
					seq := (first/int64(o.batch)/int64(o.topics))*int64(o.batch) + i
					if seq >= int64(perTopic) || fanoutSeq(t, int(seq), o) >= o.messages {
						break
					}
					p := make([]byte, 16)
					binary.LittleEndian.PutUint64(p, uint64(seq))
					binary.LittleEndian.PutUint64(p[8:], now)
					msgs = append(msgs, drover.Message{Payload: p})
				}
				if len(msgs) == 0 {
					continue
				}
				if _, err := pub.Publish(ctx, fanoutTopic(prefix, t), msgs...); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	published := time.Since(start)
	close(errs)
	if err := <-errs; err != nil {
		return FanoutPoint{}, err
	}
	if o.backlog {
		// Every message waits: what is measured from here on is their
		// consumption alone.
		rowsBefore = rowsWritten(ctx, store)
		if pc, ok := cons.(*procConsumers); ok && len(pc.pids()) == 0 {
			if err := pc.spawnAll(k); err != nil {
				return FanoutPoint{}, err
			}
		}
		if err := cons.start(ctx); err != nil {
			return FanoutPoint{}, err
		}
		cost, start = meter.start(ctx, cons.pids()), time.Now()
		consumerCPU = processesCPU("/proc", cons.pids())
	}
	want := int64(o.messages) * int64(o.subscriptions)
	// Wait until every subscription acked every message (no lag), or for
	// the deliveries to stop moving for 30 s.
	last, lastAt := int64(-1), time.Now()
	for {
		n := cons.delivered()
		if n >= want {
			if pending, err := fanoutPending(ctx, pub, prefix, o.topics); err == nil && pending == 0 {
				break
			}
		}
		if n != last {
			last, lastAt = n, time.Now()
		} else if time.Since(lastAt) > 30*time.Second {
			break
		}
		select {
		case <-ctx.Done():
			return FanoutPoint{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	took := time.Since(start)
	costAfter := meter.sample(ctx, cons.pids())
	consumerCPU = processesCPU("/proc", cons.pids()) - consumerCPU
	lag, err := sampler.stop()
	if err != nil {
		return FanoutPoint{}, fmt.Errorf("sampling lag: %w", err)
	}
	stopped = true
	if err := cons.stop(); err != nil {
		return FanoutPoint{}, err
	}
	if err := cons.collect(ledger, lat); err != nil {
		return FanoutPoint{}, err
	}
	rowsAfter := rowsWritten(ctx, store)
	pt := FanoutPoint{Clients: k, Processes: !o.inProcess, Killed: killed, Messages: int64(o.messages), Seconds: took.Seconds(),
		PublishedPerSec: float64(o.messages) / published.Seconds(), LatencyMs: lat.Snapshot(), Lag: lag, MaxLag: report.MaxLag(lag)}
	for t := range ledger {
		for s := range ledger[t] {
			for i, n := range ledger[t][s] {
				if fanoutSeq(t, i, o) >= o.messages {
					continue // past the last message
				}
				pt.Deliveries += int64(n)
				switch {
				case n == 0:
					pt.Lost++
				case n > 1:
					pt.Duplicates += int64(n - 1)
				}
			}
		}
	}
	pt.DeliveriesPerSec = float64(pt.Deliveries) / took.Seconds()
	if !o.inProcess {
		pt.Via, pt.DeliveriesPerSecPerProcess = o.via, round2(pt.DeliveriesPerSec/float64(k))
		if pt.Deliveries > 0 && killed == 0 {
			us := round2(float64(consumerCPU.Microseconds()) / float64(pt.Deliveries))
			pt.ConsumerCPUUsPerDelivery = &us
		}
	}
	pt.FanoutCost = fanoutCost(cost.before, costAfter, rowsBefore, rowsAfter, pt.Deliveries, pt.Messages)
	for t := range o.topics {
		for s := range o.subscriptions {
			if _, err := pub.DeleteSubscription(ctx, fanoutTopic(prefix, t), fanoutSub(s)); err != nil {
				return FanoutPoint{}, err
			}
		}
	}
	return pt, nil
}

// fanoutSeq is the global number of message i of topic t: publishes take
// batches of o.batch consecutive numbers, topic by topic in turn.
func fanoutSeq(t, i int, o fanoutOptions) int {
	return (i/o.batch*o.topics+t)*o.batch + i%o.batch
}

func fanoutTopic(prefix string, t int) string { return fmt.Sprintf("%s-%d", prefix, t) }

func fanoutSub(s int) string { return fmt.Sprintf("m%d", s) }

// fanoutLag reads the lag of every subscription of the run's topics, in
// one statement.
func fanoutLag(ctx context.Context, c topicClient, prefix string, topics int) ([]drovertype.SubscriptionLag, error) {
	names := make([]string, topics)
	for t := range topics {
		names[t] = fanoutTopic(prefix, t)
	}
	return c.SubscriptionLags(ctx, names...)
}

// fanoutPending is the number of messages of the run's topics that some
// subscription has not acked.
func fanoutPending(ctx context.Context, c topicClient, prefix string, topics int) (int64, error) {
	lag, err := fanoutLag(ctx, c, prefix, topics)
	var n int64
	for _, l := range lag {
		n += l.Pending
	}
	return n, err
}

// lagSampler reads every subscription's lag of the run's topics every
// o.lagEvery, in a goroutine of its own so that a slow read delays the
// next sample rather than the publishers.
type lagSampler struct {
	cancel  context.CancelFunc
	done    chan struct{}
	samples []report.LagSample
	err     error
}

func startLagSampler(ctx context.Context, c topicClient, prefix string, o fanoutOptions, start time.Time) *lagSampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &lagSampler{cancel: cancel, done: make(chan struct{})}
	if o.lagEvery <= 0 {
		close(s.done)
		return s
	}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(o.lagEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			m, err := fanoutMaxLag(ctx, c, prefix, o.topics)
			if ctx.Err() != nil {
				return // stopped mid-read: the sample is incomplete
			}
			if err != nil {
				s.err = err
				return
			}
			s.samples = append(s.samples, report.LagSample{Seconds: time.Since(start).Seconds(), MaxLag: m})
		}
	}()
	return s
}

// stop ends the sampling and returns the samples taken.
func (s *lagSampler) stop() ([]report.LagSample, error) {
	s.cancel()
	<-s.done
	return s.samples, s.err
}

// fanoutMaxLag is the largest lag of any subscription of the run's topics.
func fanoutMaxLag(ctx context.Context, c topicClient, prefix string, topics int) (int64, error) {
	lag, err := fanoutLag(ctx, c, prefix, topics)
	var m int64
	for _, l := range lag {
		m = max(m, l.Pending)
	}
	return m, err
}

// fanoutPerTopic bounds the messages of one topic: publishes take batches
// of o.batch, topic by topic in turn.
func fanoutPerTopic(o fanoutOptions) int {
	batches := (o.messages + o.batch - 1) / o.batch
	return (batches + o.topics - 1) / o.topics * o.batch
}

// fanoutSubscriptions are the run's subscriptions with handlers that pass
// each batch to record with the topic's and subscription's indexes.
func fanoutSubscriptions(o fanoutOptions, prefix string, record func(t, s int, batch []*drover.Delivery)) []*drover.Subscription {
	var subs []*drover.Subscription
	for t := range o.topics {
		for s := range o.subscriptions {
			subs = append(subs, drover.Subscribe(fanoutTopic(prefix, t), fanoutSub(s), func(ctx context.Context, batch []*drover.Delivery) error {
				record(t, s, batch)
				return nil
			}, o.consumers, o.batchSize))
		}
	}
	return subs
}

// fanoutConsumers are the consumers of one point.
type fanoutConsumers interface {
	// start returns once every consumer serves its subscriptions.
	start(ctx context.Context) error
	// delivered counts deliveries handled so far, duplicates included.
	delivered() int64
	stop() error
	// collect adds the deliveries to ledger and their latencies to lat.
	collect(ledger [][][]uint8, lat *stats.Latency) error
	// pids are the consumer processes running now (none in-process),
	// whose CPU the client's cost includes.
	pids() []int
}

// localConsumers are clients in the bench process.
type localConsumers struct {
	store   *storeurl.Store
	o       fanoutOptions
	prefix  string
	k       int
	ledger  [][][]uint8
	lat     *stats.Latency
	count   atomic.Int64
	clients []workerClient
}

func (l *localConsumers) start(ctx context.Context) error {
	subs := fanoutSubscriptions(l.o, l.prefix, func(t, s int, batch []*drover.Delivery) {
		now := time.Now().UnixNano()
		row := l.ledger[t][s]
		for _, d := range batch {
			seq := binary.LittleEndian.Uint64(d.Payload)
			l.lat.Record(time.Duration(now - int64(binary.LittleEndian.Uint64(d.Payload[8:]))))
			// Each lane of a subscription is held by one batch at a time,
			// and a message lives in one lane: no two goroutines write one
			// counter at once.
			row[seq]++
		}
		l.count.Add(int64(len(batch)))
	})
	for range l.k {
		c, err := storeurl.NewClient[workerClient](l.store, &drover.Config{Logger: discardLogger(), Subscriptions: subs, LeaseDuration: l.o.lease})
		if err != nil {
			return err
		}
		if err := c.Start(ctx); err != nil {
			return err
		}
		l.clients = append(l.clients, c)
	}
	return nil
}

func (l *localConsumers) delivered() int64 { return l.count.Load() }

func (l *localConsumers) stop() error {
	var errs []error
	for _, c := range l.clients {
		errs = append(errs, c.Stop(context.Background()))
	}
	l.clients = nil
	return errors.Join(errs...)
}

func (l *localConsumers) collect([][][]uint8, *stats.Latency) error { return nil }

func (l *localConsumers) pids() []int { return nil }

// procConsumers are `drover bench fanout-consumer` processes, each writing
// its deliveries to a ledger file of its own in dir.
type procConsumers struct {
	env    Env
	o      fanoutOptions
	prefix string
	dir    string
	// api serves SDK consumers (--via python|typescript), nil otherwise.
	api *apiServer

	mu    sync.Mutex
	procs []*consumerProc
}

type consumerProc struct {
	cmd       *exec.Cmd
	ledger    string
	ready     bool
	delivered int64
	killed    bool
	exited    chan struct{}
	err       error
}

// spawnAll starts k consumer processes, stopping those it started when one
// cannot start.
func (p *procConsumers) spawnAll(k int) error {
	for range k {
		if err := p.spawn(); err != nil {
			_ = p.stop()
			return err
		}
	}
	return nil
}

// spawn starts one more consumer process.
func (p *procConsumers) spawn() error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own binary to start consumers: %w", err)
	}
	p.mu.Lock()
	ledger := filepath.Join(p.dir, fmt.Sprintf("ledger-%d.bin", len(p.procs)))
	p.mu.Unlock()
	var cmd *exec.Cmd
	if p.api != nil {
		if cmd, err = p.sdkConsumerCommand(ledger); err != nil {
			return err
		}
	} else {
		cmd = exec.Command(self, "bench", "fanout-consumer", "--schema", p.env.Schema,
			"--prefix", p.prefix, "--topics", strconv.Itoa(p.o.topics), "--subscriptions", strconv.Itoa(p.o.subscriptions),
			"--consumers", strconv.Itoa(p.o.consumers), "--batch-size", strconv.Itoa(p.o.batchSize),
			"--lease", p.o.lease.String(), "--ledger", ledger)
		// The URL travels in the environment, as for `drover worker`
		// (procFleet.spawn).
		cmd.Env = append(os.Environ(), "DATABASE_URL="+p.env.DatabaseURL, "DROVER_DATABASE_URL="+p.env.DatabaseURL)
	}
	cmd.Stderr = p.env.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start consumer process: %w", err)
	}
	c := &consumerProc{cmd: cmd, ledger: ledger, exited: make(chan struct{})}
	p.mu.Lock()
	p.procs = append(p.procs, c)
	p.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var line fanoutConsumerStats
			if json.Unmarshal(sc.Bytes(), &line) == nil {
				p.mu.Lock()
				c.ready, c.delivered = line.Ready, line.Delivered
				p.mu.Unlock()
			}
		}
		c.err = cmd.Wait()
		close(c.exited)
	}()
	return nil
}

func (p *procConsumers) start(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ready := 0
		p.mu.Lock()
		for _, c := range p.procs {
			select {
			case <-c.exited:
				p.mu.Unlock()
				return fmt.Errorf("consumer process exited during start-up: %v", c.err)
			default:
			}
			if c.ready {
				ready++
			}
		}
		n := len(p.procs)
		p.mu.Unlock()
		if ready == n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d consumer processes started within 30s", ready, n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (p *procConsumers) pids() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for _, c := range p.procs {
		if !c.killed {
			out = append(out, c.cmd.Process.Pid)
		}
	}
	return out
}

func (p *procConsumers) delivered() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n int64
	for _, c := range p.procs {
		n += c.delivered
	}
	return n
}

// killOne SIGKILLs the oldest live consumer and starts a replacement: the
// lanes it held come back when their leases expire.
func (p *procConsumers) killOne() error {
	p.mu.Lock()
	var victim *consumerProc
	for _, c := range p.procs {
		if !c.killed {
			victim = c
			break
		}
	}
	if victim != nil {
		victim.killed = true
	}
	p.mu.Unlock()
	if victim == nil {
		return errors.New("no live consumer process to kill")
	}
	if err := victim.cmd.Process.Kill(); err != nil {
		return err
	}
	return p.spawn()
}

// stop sends SIGTERM (a graceful stop: lanes released, acks written) and
// waits for every process.
func (p *procConsumers) stop() error {
	p.mu.Lock()
	procs := slices.Clone(p.procs)
	p.mu.Unlock()
	for _, c := range procs {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
	}
	var errs []error
	for _, c := range procs {
		select {
		case <-c.exited:
			if c.err != nil && !c.killed {
				errs = append(errs, fmt.Errorf("consumer %d: %w", c.cmd.Process.Pid, c.err))
			}
		case <-time.After(fleetStopTimeout):
			_ = c.cmd.Process.Kill()
			errs = append(errs, fmt.Errorf("consumer %d did not stop in time; killed", c.cmd.Process.Pid))
		}
	}
	return errors.Join(errs...)
}

// collect reads every ledger file: records of (topic, subscription, n)
// followed by n pairs of (message seq, latency in µs), little endian.
func (p *procConsumers) collect(ledger [][][]uint8, lat *stats.Latency) error {
	for _, c := range p.procs {
		b, err := os.ReadFile(c.ledger)
		if err != nil {
			return err
		}
		for len(b) >= 8 {
			t, s, n := int(binary.LittleEndian.Uint16(b)), int(binary.LittleEndian.Uint16(b[2:])), int(binary.LittleEndian.Uint32(b[4:]))
			b = b[8:]
			if len(b) < 8*n || t >= len(ledger) || s >= len(ledger[t]) {
				break // a record cut short by a kill
			}
			for range n {
				seq, us := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:])
				b = b[8:]
				if int(seq) < len(ledger[t][s]) && ledger[t][s][seq] < 255 {
					ledger[t][s][seq]++
				}
				lat.Record(time.Duration(us) * time.Microsecond)
			}
		}
	}
	return nil
}

// fanoutConsumerStats is the line a consumer process prints every 100 ms.
type fanoutConsumerStats struct {
	Ready     bool  `json:"ready"`
	Delivered int64 `json:"delivered"`
}

// newFanoutConsumerCommand is `drover bench fanout-consumer`, the process
// `bench fanout` starts --processes copies of: one client serving every
// subscription of the run, which appends each batch to its ledger file
// before returning (so before the ack), with one write.
func newFanoutConsumerCommand(env func() Env) *cobra.Command {
	o := fanoutOptions{}
	var prefix, ledgerPath string
	cmd := &cobra.Command{
		Use:    "fanout-consumer",
		Short:  "A consumer process of bench fanout (started by it)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e := env()
			target, err := storeurl.Parse(e.DatabaseURL, "--database-url")
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			store, err := storeurl.Open(ctx, target, storeurl.Options{Schema: e.Schema})
			if err != nil {
				return err
			}
			defer store.Close()
			f, err := os.OpenFile(ledgerPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			var mu sync.Mutex
			var delivered atomic.Int64
			var werr error
			subs := fanoutSubscriptions(o, prefix, func(t, s int, batch []*drover.Delivery) {
				now := time.Now().UnixNano()
				b := make([]byte, 8, 8+8*len(batch))
				binary.LittleEndian.PutUint16(b, uint16(t))
				binary.LittleEndian.PutUint16(b[2:], uint16(s))
				binary.LittleEndian.PutUint32(b[4:], uint32(len(batch)))
				for _, d := range batch {
					us := (now - int64(binary.LittleEndian.Uint64(d.Payload[8:]))) / 1000
					b = binary.LittleEndian.AppendUint32(b, uint32(binary.LittleEndian.Uint64(d.Payload)))
					b = binary.LittleEndian.AppendUint32(b, uint32(max(us, 0)))
				}
				mu.Lock()
				if _, err := f.Write(b); err != nil && werr == nil {
					werr = err
				}
				mu.Unlock()
				delivered.Add(int64(len(batch)))
			})
			c, err := storeurl.NewClient[workerClient](store, &drover.Config{Logger: discardLogger(), Subscriptions: subs, LeaseDuration: o.lease})
			if err != nil {
				return err
			}
			if err := c.Start(ctx); err != nil {
				// A consumer told to stop while it was still starting (the
				// replacement of a killed one, at the end of a short run)
				// has nothing to report: that is a clean exit, not a
				// failure of the run.
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			enc := json.NewEncoder(e.Stdout)
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for ctx.Err() == nil {
				_ = enc.Encode(fanoutConsumerStats{Ready: true, Delivered: delivered.Load()})
				select {
				case <-ctx.Done():
				case <-tick.C:
				}
			}
			err = c.Stop(context.Background())
			_ = enc.Encode(fanoutConsumerStats{Ready: true, Delivered: delivered.Load()})
			mu.Lock()
			defer mu.Unlock()
			return errors.Join(err, werr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&prefix, "prefix", "", "topic name prefix of the run")
	fl.IntVar(&o.topics, "topics", 20, "topics of the run")
	fl.IntVar(&o.subscriptions, "subscriptions", 50, "subscriptions of each topic")
	fl.IntVar(&o.consumers, "consumers", 1, "batches of one subscription handled at once")
	fl.IntVar(&o.batchSize, "batch-size", 500, "messages per batch")
	fl.DurationVar(&o.lease, "lease", 5*time.Second, "lane lease")
	fl.StringVar(&ledgerPath, "ledger", "", "append deliveries to this file")
	return cmd
}
