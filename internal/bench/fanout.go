package bench

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/bench/stats"
	"github.com/droverhq/drover/internal/storeurl"
)

// topicClient is what the fanout scenario calls of a drover.Client.
type topicClient interface {
	workerClient
	CreateTopic(ctx context.Context, name string, opts *drover.TopicOpts) (*drover.Topic, error)
	Publish(ctx context.Context, topic string, msgs ...drover.Message) ([]int64, error)
	CreateSubscription(ctx context.Context, topic, name string, opts *drover.SubscriptionOpts) (bool, error)
}

// fanoutOptions are the knobs of `drover bench fanout`, shaped after the
// chat server of issue 24's seed: rooms (topics) × members (subscriptions).
type fanoutOptions struct {
	messages, topics, subscriptions, publishers, batch, consumers, batchSize, lanes int
	processes                                                                       []int
}

// FanoutReport is the JSON of `drover bench fanout`: one point per count of
// consumer clients.
type FanoutReport struct {
	Scenario string        `json:"scenario"`
	Driver   string        `json:"driver"`
	Command  string        `json:"command"`
	Settings string        `json:"settings"`
	Points   []FanoutPoint `json:"points"`
	// The top-level figures are those of the first point, so that a run
	// with one point reads as flat keys.
	FanoutPoint
}

// FanoutPoint is one run of the scenario with Clients consumer clients.
type FanoutPoint struct {
	Clients          int     `json:"clients"`
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
}

func newFanoutCommand(env func() Env) *cobra.Command {
	o := fanoutOptions{messages: 100_000, topics: 20, subscriptions: 50, publishers: 50, batch: 100,
		consumers: 1, batchSize: 500, lanes: 4, processes: []int{1}}
	var processes, jsonPath, cpuProfile string
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
			for _, out := range []struct{ flag, path string }{{"--json", jsonPath}, {"--cpuprofile", cpuProfile}} {
				if err := checkOutputPath(out.flag, out.path); err != nil {
					return err
				}
			}
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			return runFanout(cmd.Context(), env(), o, jsonPath, keep)
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
	f.StringVar(&processes, "processes", "1", "consumer clients per point, a list (1,2,4); each is a client of its own in the bench process")
	f.StringVar(&jsonPath, "json", "", "write the machine-readable report to this file")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the bench process to this file (go tool pprof)")
	f.BoolVar(&keep, "keep", false, "keep the bench's own schema (or ./"+benchFile+") after the run")
	return cmd
}

func runFanout(ctx context.Context, env Env, o fanoutOptions, jsonPath string, keep bool) error {
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
	rep := &FanoutReport{Scenario: "fanout", Driver: store.Driver.Name(), Command: commandLine(bt.Target),
		Settings: fmt.Sprintf("%d topics × %d subscriptions, %d lanes, %d publishers × %d messages per publish, batches of %d, %d consumers per subscription per client",
			o.topics, o.subscriptions, o.lanes, o.publishers, o.batch, o.batchSize, o.consumers)}
	for _, k := range o.processes {
		pt, err := fanoutPoint(ctx, store, pub.(topicClient), o, k)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "clients %d: %.0f published/s, %.0f deliveries/s, latency p50 %.1f ms p95 %.1f ms p99 %.1f ms, lost %d, duplicates %d\n",
			k, pt.PublishedPerSec, pt.DeliveriesPerSec, pt.LatencyMs.P50, pt.LatencyMs.P95, pt.LatencyMs.P99, pt.Lost, pt.Duplicates)
		rep.Points = append(rep.Points, pt)
	}
	rep.FanoutPoint = rep.Points[0]
	if jsonPath != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	for _, pt := range rep.Points {
		if pt.Lost > 0 {
			return fmt.Errorf("fanout with %d clients lost %d deliveries", pt.Clients, pt.Lost)
		}
	}
	return nil
}

// fanoutPoint publishes o.messages over fresh topics and subscriptions
// consumed by k clients, and counts every delivery in a ledger: one
// counter per (subscription, message).
func fanoutPoint(ctx context.Context, store *storeurl.Store, pub topicClient, o fanoutOptions, k int) (FanoutPoint, error) {
	id := make([]byte, 3)
	_, _ = rand.Read(id)
	prefix := "fan" + hex.EncodeToString(id)
	perTopic := (o.messages + o.topics - 1) / o.topics
	// ledger[t][s][i] counts deliveries of message i of topic t to
	// subscription s.
	ledger := make([][][]uint8, o.topics)
	var subs []*drover.Subscription
	lat := stats.NewLatency()
	var delivered atomic.Int64
	for t := range o.topics {
		topic := fmt.Sprintf("%s-%d", prefix, t)
		if _, err := pub.CreateTopic(ctx, topic, &drover.TopicOpts{Lanes: o.lanes}); err != nil {
			return FanoutPoint{}, err
		}
		ledger[t] = make([][]uint8, o.subscriptions)
		for s := range o.subscriptions {
			name := fmt.Sprintf("m%d", s)
			if _, err := pub.CreateSubscription(ctx, topic, name, nil); err != nil {
				return FanoutPoint{}, err
			}
			row := make([]uint8, perTopic)
			ledger[t][s] = row
			subs = append(subs, drover.Subscribe(topic, name, func(ctx context.Context, batch []*drover.Delivery) error {
				now := time.Now().UnixNano()
				for _, d := range batch {
					seq := binary.LittleEndian.Uint64(d.Payload)
					at := int64(binary.LittleEndian.Uint64(d.Payload[8:]))
					lat.Record(time.Duration(now - at))
					// Each lane of a subscription is held by one batch at
					// a time, and a message lives in one lane: no two
					// goroutines write one counter at once.
					row[seq/uint64(o.topics)]++
				}
				delivered.Add(int64(len(batch)))
				return nil
			}, o.consumers, o.batchSize))
		}
	}
	var clients []workerClient
	defer func() {
		for _, c := range clients {
			_ = c.Stop(context.WithoutCancel(ctx))
		}
	}()
	for range k {
		c, err := storeurl.NewClient[workerClient](store, &drover.Config{Logger: discardLogger(), Subscriptions: subs})
		if err != nil {
			return FanoutPoint{}, err
		}
		if err := c.Start(ctx); err != nil {
			return FanoutPoint{}, err
		}
		clients = append(clients, c)
	}
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.publishers)
	for range o.publishers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msgs := make([]drover.Message, 0, o.batch)
			for {
				first := next.Add(int64(o.batch)) - int64(o.batch)
				if first >= int64(o.messages) {
					return
				}
				// One Publish per topic of the messages in this batch.
				byTopic := map[int][]drover.Message{}
				now := uint64(time.Now().UnixNano())
				for seq := first; seq < min(first+int64(o.batch), int64(o.messages)); seq++ {
					p := make([]byte, 16)
					binary.LittleEndian.PutUint64(p, uint64(seq))
					binary.LittleEndian.PutUint64(p[8:], now)
					t := int(seq % int64(o.topics))
					byTopic[t] = append(byTopic[t], drover.Message{Payload: p})
				}
				for t, m := range byTopic {
					msgs = append(msgs[:0], m...)
					if _, err := pub.Publish(ctx, fmt.Sprintf("%s-%d", prefix, t), msgs...); err != nil {
						errs <- err
						return
					}
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
	want := int64(o.messages) * int64(o.subscriptions)
	// Wait for every delivery, or for the count to stop moving for 30 s.
	last, lastAt := int64(-1), time.Now()
	for delivered.Load() < want {
		if n := delivered.Load(); n != last {
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
	for _, c := range clients {
		_ = c.Stop(ctx)
	}
	clients = nil
	pt := FanoutPoint{Clients: k, Messages: int64(o.messages), Deliveries: delivered.Load(), Seconds: took.Seconds(),
		PublishedPerSec: float64(o.messages) / published.Seconds(), DeliveriesPerSec: float64(delivered.Load()) / took.Seconds(),
		LatencyMs: lat.Snapshot()}
	for t := range ledger {
		for s := range ledger[t] {
			for i, n := range ledger[t][s] {
				if i*o.topics+t >= o.messages {
					continue // past the last message
				}
				switch {
				case n == 0:
					pt.Lost++
				case n > 1:
					pt.Duplicates += int64(n - 1)
				}
			}
		}
	}
	return pt, nil
}
