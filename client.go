// Package drover is a job queue for fleets of workers: typed jobs, batched
// claims and completions, leases with fencing, and a store that is either
// PostgreSQL (droverpg) or an embedded SQLite file (droversqlite).
//
// A client inserts jobs and, when it has queues configured, works them:
//
//	workers := drover.NewWorkers()
//	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, j *drover.Job[EmailArgs]) error {
//		return send(ctx, j.Args)
//	}))
//	client, err := drover.NewClient(droverpg.New(pool), &drover.Config{
//		Queues:  map[string]drover.QueueConfig{drover.DefaultQueue: {MaxWorkers: 100}},
//		Workers: workers,
//	})
package drover

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/completer"
	"github.com/droverhq/drover/internal/engine"
	"github.com/droverhq/drover/internal/leadership"
	"github.com/droverhq/drover/internal/lease"
	"github.com/droverhq/drover/internal/maintenance"
	"github.com/droverhq/drover/internal/notifier"
	"github.com/droverhq/drover/internal/producer"
	"github.com/droverhq/drover/internal/validate"
)

// Defaults for Config.
const (
	JobTimeoutDefault         = time.Minute
	LeaseDurationDefault      = 30 * time.Second
	StopTimeoutDefault        = 10 * time.Second
	CompletedRetentionDefault = 24 * time.Hour
	CancelledRetentionDefault = 7 * 24 * time.Hour
	DiscardedRetentionDefault = 7 * 24 * time.Hour
	PruneIntervalDefault      = time.Minute
	LeaderTTLDefault          = 15 * time.Second
	// PollOnlyInterval is the default PollInterval with PollOnly: polls
	// then carry every wake-up, so they come often; a poll that finds
	// nothing costs one index probe.
	PollOnlyInterval = 100 * time.Millisecond
)

// Config configures a Client. The zero value of every field picks its
// default.
type Config struct {
	// ID names this client in leases and leadership; default
	// host-pid-random. It must be unique among running clients.
	ID string
	// Queues this client works, with their concurrency. A client with no
	// queues only inserts and inspects.
	Queues map[string]QueueConfig
	// Workers handle jobs by kind. When set, inserting a kind without a
	// worker fails before anything is stored.
	Workers *Workers
	Logger  *slog.Logger
	// MaxAttempts is the default for jobs inserted without one.
	MaxAttempts int
	// JobTimeout cancels a handler's context after this long, unless the
	// job or its worker says otherwise. Negative: no timeout.
	JobTimeout time.Duration
	// LeaseDuration is how long a claimed job stays held without a
	// heartbeat. Running jobs are heartbeaten every third of it, so it only
	// bounds how soon a dead worker's jobs come back.
	LeaseDuration time.Duration
	// RescueInterval is how often the leader returns expired leases;
	// default a quarter of LeaseDuration, at most 15 s.
	RescueInterval time.Duration
	// PollInterval is the fallback fetch interval when no notification
	// arrives; default chosen by the driver, or PollOnlyInterval with
	// PollOnly. Each poll is one statement for all the client's idle
	// queues where the driver reads them at once
	// (droverdriver.QueuesDueExecutor), a claim per queue otherwise.
	PollInterval time.Duration
	// PollOnly makes producers find new jobs by polling alone, without a
	// listening connection. Use it where LISTEN cannot work: behind
	// PgBouncer in transaction pooling mode (which hands each transaction
	// to any server connection, so notifications never reach the
	// listener), or where a connection per process is one too many.
	PollOnly bool
	// StopTimeout is how long Stop waits for running jobs before cancelling
	// their contexts.
	StopTimeout time.Duration
	// Retention of finished jobs by final state. Negative keeps them
	// forever; -1 is not special beyond that. Completed jobs are kept 24 h
	// by default so that JobGet and the ledger of a bench can read them.
	CompletedRetention time.Duration
	// DeleteCompleted deletes a job in the statement that completes it,
	// instead of keeping it among the finished jobs for CompletedRetention:
	// a completion then writes one row instead of two (measured on
	// PostgreSQL: +10% for the statements alone, +4% for a whole noop
	// burn-down; docs/design/scale-out-notes.md, "Deleting completed jobs"), at the price of its
	// history (JobGet, JobList and the dashboard no longer find it). Jobs
	// that store a result, belong to a batch or a workflow, or hold a
	// unique key are kept regardless, because what comes after them reads
	// their rows. Failed, cancelled and discarded jobs are always kept.
	DeleteCompleted    bool
	CancelledRetention time.Duration
	DiscardedRetention time.Duration
	PruneInterval      time.Duration
	// RetryPolicy returns how long to wait before attempt+1 after attempt
	// failed; default attempt⁴ seconds plus jitter.
	RetryPolicy func(attempt int) time.Duration
	// LeaderTTL bounds how long maintenance pauses when the leader dies.
	LeaderTTL time.Duration
	// TracerProvider turns on OpenTelemetry tracing: inserts carry the
	// caller's trace context in the job's metadata, and each run gets a
	// span linked to it. Nil (the default) leaves tracing off.
	TracerProvider trace.TracerProvider
	// PeriodicJobs are inserted on their schedules by the leader; see
	// PeriodicJob (periodic.go).
	PeriodicJobs []*PeriodicJob
	// PeriodicReloadInterval is how often the leader reads the periodic
	// jobs stored in the database (PeriodicJobs; periodic_store.go), so
	// that one created, changed or paused from another process takes
	// effect; changes made through this client apply at once. Default
	// PeriodicReloadIntervalDefault.
	PeriodicReloadInterval time.Duration
	// Subscriptions this client consumes (subscribe.go), each with the
	// retry queue of its failed messages.
	Subscriptions []*Subscription
	// Worker says what the client's workers are, for routed jobs
	// (routing.go): a name, a type and labels. The zero value is a plain
	// worker, which takes plain jobs only with the plain claim statement.
	Worker WorkerConfig
	// HistoryRetention is how long the leader keeps the stored history
	// behind the dashboard's charts (history.go): a sample of every
	// queue, kind and subscription each minute, merged into hourly ones
	// after HistoryMinutesKept and dropped after HistoryRetention.
	// Default HistoryRetentionDefault; negative records no history.
	HistoryRetention time.Duration
	// Clock, when set, is the time the client reads wherever a job's time
	// is decided, instead of the system clock: the run_at of jobs inserted
	// without one, the time a failed attempt is retried at, which jobs its
	// claims take as due (droverdriver.ClaimParams.Now), and the time the
	// operator's actions (retry, cancel, discard, bulk) stamp. Tests set a
	// drovertest.Clock, frozen and moved forward by the test, so that
	// scheduled and retried jobs come due when it says (drovertest.Drain).
	// Leases, heartbeats, timeouts, maintenance and periodic schedules keep
	// the system clock. Nil: the system clock everywhere.
	Clock Clock
}

// Clock tells a client the time (Config.Clock).
type Clock interface {
	Now() time.Time
}

// QueueConfig configures one queue of a client.
type QueueConfig struct {
	// MaxWorkers is how many jobs of the queue run at once in this client.
	MaxWorkers int
	// ClaimMax caps the jobs of one claim statement; default 500.
	ClaimMax int

	// order: cluster-wide limits (docs/ordering-and-limits.md). They are
	// queue settings stored in the database, applied by every claim of
	// every client and remote worker; when any of these fields is set,
	// Start writes them to the store (as QueueSetLimits does), replacing
	// the queue's stored limits. Leaving them unset keeps what is stored:
	// lift a limit with QueueSetLimits (or drover queues).

	// GlobalMaxWorkers caps the queue's jobs running at once across every
	// client (0: no cap). Jobs a client prefetched count as running.
	GlobalMaxWorkers int
	// RateLimit caps how many of the queue's jobs start per RatePeriod
	// across every client, with bursts of up to RateLimit (0: no limit).
	RateLimit  int
	RatePeriod time.Duration
	// StrictOrder, when set, puts the queue in strict order with at most
	// this many jobs running at once (QueueSetStrictOrder): Start stores
	// it like the limits. 0 keeps what is stored.
	StrictOrder int
}

func (c *Config) withDefaults(d droverdriver.Driver) (*Config, error) {
	cfg := *c
	if cfg.ID == "" {
		host, _ := os.Hostname()
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		cfg.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
	}
	cfg.Logger = cmp.Or(cfg.Logger, slog.Default())
	cfg.MaxAttempts = cmp.Or(cfg.MaxAttempts, DefaultMaxAttempts)
	cfg.JobTimeout = cmp.Or(cfg.JobTimeout, JobTimeoutDefault)
	cfg.LeaseDuration = cmp.Or(cfg.LeaseDuration, LeaseDurationDefault)
	cfg.RescueInterval = cmp.Or(cfg.RescueInterval, min(cfg.LeaseDuration/4, 15*time.Second))
	if cfg.PollInterval == 0 {
		cfg.PollInterval = d.PollInterval()
		if cfg.PollOnly {
			cfg.PollInterval = min(cfg.PollInterval, PollOnlyInterval)
		}
	}
	cfg.StopTimeout = cmp.Or(cfg.StopTimeout, StopTimeoutDefault)
	cfg.CompletedRetention = cmp.Or(cfg.CompletedRetention, CompletedRetentionDefault)
	cfg.CancelledRetention = cmp.Or(cfg.CancelledRetention, CancelledRetentionDefault)
	cfg.DiscardedRetention = cmp.Or(cfg.DiscardedRetention, DiscardedRetentionDefault)
	cfg.PruneInterval = cmp.Or(cfg.PruneInterval, PruneIntervalDefault)
	if cfg.RetryPolicy == nil {
		cfg.RetryPolicy = DefaultRetryPolicy
	}
	cfg.LeaderTTL = cmp.Or(cfg.LeaderTTL, LeaderTTLDefault)
	cfg.PeriodicReloadInterval = cmp.Or(cfg.PeriodicReloadInterval, PeriodicReloadIntervalDefault)
	cfg.HistoryRetention = cmp.Or(cfg.HistoryRetention, HistoryRetentionDefault)
	if cfg.MaxAttempts < 1 {
		return nil, invalidf("config: MaxAttempts %d must be at least 1", cfg.MaxAttempts)
	}
	// The ID is every claimed job's lease owner: one the store cannot hold
	// would fail every claim of the client.
	if err := validate.Owner(cfg.ID); err != nil {
		return nil, fmt.Errorf("config: ID: %w", err)
	}
	if cfg.LeaseDuration < 100*time.Millisecond {
		return nil, invalidf("config: LeaseDuration %s is too short (minimum 100ms)", cfg.LeaseDuration)
	}
	for name, q := range cfg.Queues {
		if err := validate.Queue(name); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		if q.MaxWorkers < 1 || q.MaxWorkers > 100_000 {
			return nil, invalidf("config: queue %q: MaxWorkers %d must be between 1 and 100000", name, q.MaxWorkers)
		}
		if q.ClaimMax < 0 {
			return nil, invalidf("config: queue %q: ClaimMax %d must not be negative", name, q.ClaimMax)
		}
		if err := checkQueueLimits(name, q); err != nil {
			return nil, err
		}
		if q.StrictOrder < 0 || q.StrictOrder > 1_000_000 {
			return nil, invalidf("config: queue %q: StrictOrder %d must be between 0 and 1000000", name, q.StrictOrder)
		}
	}
	if err := validateWorker(cfg.Worker.Name, cfg.Worker.Type, cfg.Worker.Labels); err != nil {
		return nil, fmt.Errorf("config: worker: %w", err)
	}
	if len(cfg.Queues) > 0 && cfg.Workers == nil {
		return nil, invalidf("config: queues are configured but no Workers are")
	}
	return &cfg, nil
}

// order: periodic jobs are parsed in NewClient, next to withDefaults.

// DefaultRetryPolicy waits attempt⁴ seconds plus up to 10% jitter (1 s, 16 s,
// 81 s, 4 min, …, about 4.5 days at attempt 25), so that a struggling
// dependency gets room to recover and retries of many jobs spread out.
func DefaultRetryPolicy(attempt int) time.Duration {
	base := math.Pow(float64(attempt), 4)
	jitter := base * 0.1 * mrand.Float64()
	return time.Duration((base + jitter) * float64(time.Second))
}

// Client inserts, inspects and works jobs. TTx is the transaction type of
// the driver (pgx.Tx for droverpg, *sql.Tx for droversqlite), used by
// InsertTx.
type Client[TTx any] struct {
	config *Config
	driver droverdriver.TxDriver[TTx]
	// exec is the driver's executor, read once: every statement the client
	// runs outside a caller's transaction goes through it.
	exec droverdriver.Executor

	mu        sync.Mutex
	started   bool
	stopFetch context.CancelFunc
	stopBG    context.CancelFunc
	producers map[string]*producer.Producer
	tracker   *lease.Tracker
	completer *completer.Completer
	prodWG    sync.WaitGroup
	bgWG      sync.WaitGroup
	metrics   *clientMetrics
	// jobMetrics counts the attempts this client ran by queue and kind
	// (metrics.go).
	jobMetrics jobMetricsTable
	periodic   []periodicEntry
	// periodicSet manages stored periodic jobs (periodic_store.go).
	periodicSet *PeriodicJobSet
	// remote serves remote workers (remote.go).
	remote *Remote
	// store is the store as processes around the client see it (store.go).
	store *Store
	// subs are the subscriptions this client consumes, by "topic/name";
	// topicLanes caches each topic's lane count (topics.go).
	subs       map[string]*Subscription
	topicLanes sync.Map
	// settings caches the queues' stored settings for every claim of the
	// client, its producers' and remote workers' (internal/engine).
	settings engine.Settings
	// combiner joins the concurrent one-job claims of remote workers
	// (Remote.Claim) into one statement per group (engine.Combiner).
	combiner engine.Combiner
	// topics consumes subs; nil without subscriptions.
	topics *topicConsumer
	// core is the topic consumer core that topics and remote consumers
	// share (consume.go); nil when the driver has no topics.
	core *topicCore
	// receiptKeyCache is the store's key of remote consumers' receipts,
	// once read (receive.go).
	receiptKeyMu    sync.Mutex
	receiptKeyCache []byte
	// identity is what the client's claims say of its workers (routing.go).
	identity *identity
	// signals are its services' test signals (testsignals.go), off
	// unless a test turned them on.
	signals testSignals
}

// NewClient returns a client on d. Nothing runs until Start.
func NewClient[TTx any](d droverdriver.TxDriver[TTx], config *Config) (*Client[TTx], error) {
	if d == nil {
		return nil, errors.New("drover: driver is nil")
	}
	if config == nil {
		config = &Config{}
	}
	cfg, err := config.withDefaults(d)
	if err != nil {
		return nil, err
	}
	periodic, err := parsePeriodic(cfg.PeriodicJobs)
	if err != nil {
		return nil, err
	}
	c := &Client[TTx]{config: cfg, driver: d, exec: d.Executor(), metrics: &clientMetrics{}, periodic: periodic, identity: newIdentity(cfg)}
	c.remote = &Remote{exec: c.exec, config: cfg, metrics: c.metrics, claim: c.claimRemote}
	c.store = &Store{driver: d, exec: c.exec, config: cfg}
	c.periodicSet = c.newPeriodicSet()
	if err := c.prepareSubscriptions(); err != nil {
		return nil, err
	}
	if te, ok := c.exec.(droverdriver.TopicExecutor); ok {
		c.core = &topicCore{exec: c.exec, te: te, metrics: c.metrics, retryDelay: cfg.RetryPolicy, logger: cfg.Logger}
	}
	if c.topics, err = c.newTopicConsumer(); err != nil {
		return nil, err
	}
	return c, nil
}

// ID is the client's identity in leases and leadership.
func (c *Client[TTx]) ID() string { return c.config.ID }

// Start begins working the configured queues. It fails if the store is not
// migrated. Background loops run until Stop.
func (c *Client[TTx]) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("drover: client already started")
	}
	if err := checkSchema(ctx, c.driver); err != nil {
		return err
	}
	if err := c.storeConfiguredLimits(ctx); err != nil {
		return err
	}
	cfg := c.config
	log := cfg.Logger

	fetchCtx, stopFetch := context.WithCancel(context.Background())
	bgCtx, stopBG := context.WithCancel(context.Background())
	c.stopFetch, c.stopBG = stopFetch, stopBG
	c.tracker = lease.NewTracker()
	c.completer = completer.New(engine.Finisher{Executor: c.exec}, completer.Config{
		Logger: log,
		OnFlushed: func(results []droverdriver.Result, accepted []int64, took time.Duration) {
			c.tracker.RemoveResults(results)
			c.metrics.flushed(len(results), len(accepted), took)
			c.wakeLimited(results) // order: finished jobs free room under queue limits
		},
		// A result the completer gives up on leaves the tracker, so that
		// the heartbeat stops extending its lease and the rescuer takes
		// the job back once it expires.
		OnDropped: func(r droverdriver.Result) { c.tracker.Remove(r.ID, r.Attempt) },
	})
	c.completer.TestSignals = c.signals.Completer
	c.producers = make(map[string]*producer.Producer, len(cfg.Queues))
	// Producers claim only the kinds this client has workers for: a job
	// of another kind waits for a process that can run it, rather than
	// spending an attempt here.
	var kinds []string
	if cfg.Workers != nil {
		kinds = cfg.Workers.Kinds()
		slices.Sort(kinds)
	}
	// order: with the store's read of every queue at once, the client
	// polls for its producers (pollQueues).
	poller := c.queuesPoller()
	producerPoll := cfg.PollInterval
	if poller != nil {
		producerPoll = 0
	}
	head, _ := c.exec.(droverdriver.HeadClaimer)
	fromHead := head != nil && head.ClaimsFromHead()
	for name, q := range cfg.Queues {
		c.producers[name] = producer.New(c.exec, c.tracker, c.completer.Submit, c.runJob, producer.Config{
			Queue: name, MaxWorkers: q.MaxWorkers, ClaimMax: q.ClaimMax, Owner: cfg.ID, Claim: c.claimAsWorker,
			Lease: cfg.LeaseDuration, PollInterval: producerPoll, Logger: log, OnRan: c.jobMetrics.forQueue(name, kinds).observeRun,
			Kinds: kinds, FromHead: fromHead,
		})
		c.producers[name].TestSignals = c.signals.Producer
	}

	if len(c.producers) > 0 {
		// routing: the client's row of the worker registry, written before
		// its first claim and at every heartbeat.
		if err := c.registerWorker(ctx); err != nil {
			stopFetch()
			stopBG()
			return err
		}
	}
	c.goBG(func() { c.completer.Run(bgCtx) })
	if len(c.producers) > 0 {
		c.goBG(func() {
			(&lease.Heartbeat{Exec: c.exec, Tracker: c.tracker, Lease: cfg.LeaseDuration,
				Interval: min(cfg.LeaseDuration/3, engine.WorkerSeenEvery), Logger: log, Seen: c.registerWorker}).Run(bgCtx)
		})
		if l := c.driver.NewListener(); l != nil && !cfg.PollOnly {
			c.goBG(func() {
				(&notifier.Notifier{Listener: l, Wake: c.wake, WakeAll: c.wakeAll, Logger: log}).Run(bgCtx)
			})
		}
	}
	c.goBG(func() { c.runElector(bgCtx) })
	if err := c.startTopics(fetchCtx, &c.prodWG); err != nil {
		stopFetch()
		stopBG()
		c.bgWG.Wait()
		return err
	}
	for _, p := range c.producers {
		c.prodWG.Add(1)
		go func() {
			defer c.prodWG.Done()
			p.Run(fetchCtx)
		}()
	}
	if poller != nil && len(c.producers) > 0 {
		c.prodWG.Add(1)
		go func() {
			defer c.prodWG.Done()
			c.pollQueues(fetchCtx, poller)
		}()
	}
	c.started = true
	log.Info("drover client started", "id", cfg.ID, "driver", c.driver.Name(), "queues", len(c.producers))
	return nil
}

func (c *Client[TTx]) goBG(fn func()) {
	c.bgWG.Add(1)
	go func() {
		defer c.bgWG.Done()
		fn()
	}()
}

// wake wakes the producer of queue for a notification of the store. A
// notice that the queue's settings changed (droverdriver.SettingsNotice)
// also drops them from the cache, and wakes the producer so that a queue
// just resumed is claimed from at once.
func (c *Client[TTx]) wake(queue string) int {
	if strings.HasPrefix(queue, droverdriver.TopicWakePrefix) {
		// A publish: the consumer leases whatever it has room for, so
		// it reports no room that would stop others from being woken.
		if c.topics != nil {
			c.topics.Wake(strings.TrimPrefix(queue, droverdriver.TopicWakePrefix))
		}
		return 0
	}
	if q, ok := droverdriver.SettingsQueue(queue); ok {
		c.settings.Forget(q)
		queue = q
	}
	if p, ok := c.producers[queue]; ok {
		return p.Wake()
	}
	return 0
}

// claim is every claim of the client: its producers' and remote workers'.
func (c *Client[TTx]) claim(ctx context.Context, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	return c.claimIn(ctx, c.exec, p)
}

// claimRemote is a remote worker's claim: as claim, but combined with the
// concurrent claims of other remote workers that ask the same.
func (c *Client[TTx]) claimRemote(ctx context.Context, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	if c.config.Clock != nil {
		p.Now = c.config.Clock.Now()
	}
	return c.combiner.Claim(ctx, c.exec, &c.settings, p)
}

// claimIn claims in ex (the client's store, or a caller's transaction),
// under the client's Clock when it has one.
func (c *Client[TTx]) claimIn(ctx context.Context, ex droverdriver.Executor, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	if c.config.Clock != nil {
		p.Now = c.config.Clock.Now()
	}
	return engine.Claim(ctx, ex, &c.settings, p)
}

// now is the time by the client's Clock, or the system clock without one.
func (c *Client[TTx]) now() time.Time {
	if c.config.Clock != nil {
		return c.config.Clock.Now()
	}
	return time.Now()
}

func (c *Client[TTx]) wakeAll() {
	for _, p := range c.producers {
		p.Wake()
	}
	if c.topics != nil {
		c.topics.Wake("")
	}
}

// runElector campaigns for leadership and runs maintenance while leader.
func (c *Client[TTx]) runElector(ctx context.Context) {
	cfg := c.config
	var stopMaint context.CancelFunc
	var maintWG sync.WaitGroup
	e := &leadership.Elector{
		Exec: c.exec, ID: cfg.ID, TTL: cfg.LeaderTTL, Logger: cfg.Logger,
		OnChange: func(leader bool) {
			if !leader {
				if stopMaint != nil {
					stopMaint()
					maintWG.Wait()
					stopMaint = nil
				}
				cfg.Logger.Info("maintenance leadership lost", "id", cfg.ID)
				return
			}
			cfg.Logger.Info("maintenance leadership gained", "id", cfg.ID)
			var mctx context.Context
			mctx, stopMaint = context.WithCancel(ctx)
			rescuer := &maintenance.Rescuer{Exec: c.exec, Interval: cfg.RescueInterval, Logger: cfg.Logger,
				OnRescued: func(n int) { c.metrics.rescued.Add(int64(n)) }, TestSignals: c.signals.Rescuer}
			pruner := &maintenance.Pruner{Exec: c.exec, Interval: cfg.PruneInterval, Logger: cfg.Logger,
				Completed: cfg.CompletedRetention, Cancelled: cfg.CancelledRetention, Discarded: cfg.DiscardedRetention,
				TestSignals: c.signals.Pruner}
			// order: the promoter frees keys whose slot no finish released.
			promoter := &maintenance.Promoter{Exec: c.exec, Interval: cfg.RescueInterval, Logger: cfg.Logger, TestSignals: c.signals.Promoter}
			// order: the leader inserts the periodic jobs.
			store, _ := c.exec.(droverdriver.PeriodicExecutor)
			sched := &scheduler{entries: c.periodic, logger: cfg.Logger, ticks: c.exec, store: store,
				reload: cfg.PeriodicReloadInterval, nudge: c.periodicSet.nudge, signals: c.signals.Periodic,
				insert: func(ctx context.Context, jobs []InsertManyParams) ([]int64, error) {
					return c.insertMany(ctx, c.exec, jobs)
				}}
			// routing: the absent-worker policies of jobs aimed at worker
			// names, and the registry's forgotten workers.
			router := &maintenance.Router{Exec: c.exec, Interval: cfg.RescueInterval, Logger: cfg.Logger, TestSignals: c.signals.Router}
			maintWG.Add(5)
			go func() { defer maintWG.Done(); router.Run(mctx) }()
			go func() { defer maintWG.Done(); rescuer.Run(mctx) }()
			go func() { defer maintWG.Done(); pruner.Run(mctx) }()
			go func() { defer maintWG.Done(); promoter.Run(mctx) }()
			go func() { defer maintWG.Done(); sched.run(mctx) }()
			// The history behind the dashboard's charts, when kept.
			if cfg.HistoryRetention > 0 {
				te, _ := c.exec.(droverdriver.TopicExecutor)
				recorder := &maintenance.HistoryRecorder{Exec: c.exec, Topics: te, Retention: cfg.HistoryRetention, Logger: cfg.Logger,
					TestSignals: c.signals.History}
				maintWG.Add(1)
				go func() { defer maintWG.Done(); recorder.Run(mctx) }()
			}
			// order: the leader rotates and drops topic generations, when
			// the store has topics.
			if te, ok := c.exec.(droverdriver.TopicExecutor); ok {
				retainer := &maintenance.TopicRetainer{Exec: te, Interval: min(cfg.PruneInterval, topicRetainInterval), Logger: cfg.Logger,
					TestSignals: c.signals.TopicRetainer}
				maintWG.Add(1)
				go func() { defer maintWG.Done(); retainer.Run(mctx) }()
				// A publisher's transaction left open is logged, with its
				// session.
				watch := &maintenance.PublisherWatch{Exec: te, Interval: topicRetainInterval, StallAfter: PublisherStallAfter, Logger: cfg.Logger,
					TestSignals: c.signals.PublisherWatch}
				maintWG.Add(1)
				go func() { defer maintWG.Done(); watch.Run(mctx) }()
			}
		},
	}
	e.Run(ctx)
	if stopMaint != nil {
		stopMaint()
		maintWG.Wait()
	}
}

// Stop shuts the client down gracefully: it stops fetching, releases jobs
// claimed but not started, waits for running jobs up to Config.StopTimeout
// (or ctx's deadline, whichever is first), then cancels their contexts and
// releases them too, writes every result, and resigns leadership. Released
// jobs are claimable by other clients at once, without waiting for a lease
// to expire. If ctx ends before handlers return, Stop returns ctx's error
// and those jobs come back when their leases expire.
func (c *Client[TTx]) Stop(ctx context.Context) error {
	c.mu.Lock()
	if !c.started {
		c.mu.Unlock()
		return errors.New("drover: client not started")
	}
	c.started = false
	c.mu.Unlock()

	c.stopFetch()
	prodDone := make(chan struct{})
	go func() { c.prodWG.Wait(); close(prodDone) }()

	soft := time.NewTimer(c.config.StopTimeout)
	defer soft.Stop()
	var err error
	select {
	case <-prodDone:
	case <-soft.C:
		c.tracker.Stop(lease.ErrShutdown)
	case <-ctx.Done():
		c.tracker.Stop(lease.ErrShutdown)
	}
	select {
	case <-prodDone:
	case <-ctx.Done():
		err = ctx.Err()
	}

	if err == nil {
		// Every producer has returned, so nothing submits any more.
		c.completer.Close()
		select {
		case <-c.completer.Done():
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	c.stopBG()
	c.bgWG.Wait()
	if len(c.producers) > 0 {
		// routing: the worker leaves the registry; jobs aimed at it are
		// reported unroutable from now on, rather than a minute later.
		_, name := c.identity.get()
		gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if gone := c.exec.WorkerGone(gctx, name, c.config.ID); gone != nil {
			c.config.Logger.Warn("drover: unregister worker", "error", gone)
		}
		cancel()
	}
	c.config.Logger.Info("drover client stopped", "id", c.config.ID)
	return err
}

// checkSchema fails with an actionable message when the store is behind
// or ahead of this binary.
func checkSchema(ctx context.Context, d droverdriver.Driver) error {
	v, err := d.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	return droverdriver.CheckSchemaVersion(d.Schema(), v, droverdriver.LatestVersion(d))
}
