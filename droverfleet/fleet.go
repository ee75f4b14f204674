// Package droverfleet makes one Drover store of several databases
// (shards): a Driver that composes the shards' own drivers through the
// droverdriver contract and implements that contract itself, so that a
// Client, drover serve and the CLI run on a fleet unchanged.
//
// Every job lives on one shard, decided once when it is inserted, and its
// ID names the shard (droverdriver.ShardOf): shard i draws its IDs from
// i << 48 on. Each method of the contract is one of four kinds:
//
//   - placed: an insert goes to the shard its job's constraints name (a
//     key, a unique key, a pinned queue, the stored parents of a
//     workflow) or, without any, to the next shard in turn;
//   - routed: a call about jobs by ID goes to the shards of those IDs;
//   - fanned out: lists, searches, counts and claims ask every shard and
//     merge, lists in ID order (shards' ID ranges do not overlap, so a
//     keyset page walks the shards in order);
//   - broadcast: queue settings and the worker registry are written to
//     every shard, since each shard's statements read their own copy.
//
// A shard that cannot be reached stalls only its own jobs: claims,
// heartbeats and the leader's maintenance skip it (with a backoff, logged
// once) while the other shards work, and inserts free to go anywhere go
// to a shard that answers. docs/scaling.md ("Past one PostgreSQL") is the
// guide: what holds across shards, placement, adding and draining a shard.
package droverfleet

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Driver is a fleet of shards of transaction type TTx (pgx.Tx for
// PostgreSQL). Create it with New. It implements droverdriver.TxDriver;
// its Executor implements PeriodicExecutor when its shards do.
type Driver[TTx any] struct {
	c    *core
	exec *exec // the statements outside any transaction, reached through Executor
	txs  []droverdriver.TxDriver[TTx]
}

var _ droverdriver.TxDriver[struct{}] = (*Driver[struct{}])(nil)

// Options configure a fleet.
type Options struct {
	// Logger reports shards that stop answering and come back; nil
	// discards.
	Logger *slog.Logger
}

// recordTTL is how long a shard's record (its drain flag) is trusted
// before a placement reads it again: a drain set by another process
// takes effect within it.
const recordTTL = 5 * time.Second

// settingsTTL is how long a queue's pinning (whether it is limited or in
// strict order) is trusted, as long as the engine's settings cache.
const settingsTTL = time.Second

// core is what every executor of a fleet shares: the shards, their
// records and health, and the placement state.
type core struct {
	shards []*shard
	log    *slog.Logger

	mu        sync.Mutex
	fleet     string // the fleet's name, "" until a record was read
	keyShards int    // from the records; 0 until one was read
	checked   time.Time
	refresh   sync.Mutex // one reader of the records at a time

	spread atomic.Uint64 // the rotation of unconstrained inserts
	claims atomic.Uint64 // the rotation of claims

	pinMu sync.Mutex
	pins  map[string]pin

	// patient is held by a fleet's transaction that runs again after it
	// gave up waiting for a shard (multiTx): one such at a time, which
	// waits for its shards as long as it takes, so that transactions
	// that keep meeting the same way still all end.
	patient sync.Mutex
}

// pin is what a placement knows of a queue's settings.
type pin struct {
	limited bool
	at      time.Time
}

// shard is one database of the fleet.
type shard struct {
	idx int
	d   droverdriver.Driver
	sx  droverdriver.ShardExecutor

	mu       sync.Mutex
	rec      *droverdriver.ShardRecord
	downTill time.Time
	backoff  time.Duration
	downErr  error
	readErr  error // why the record could not be read, nil once it was

	obs observed // what this process saw of it (health.go)
}

// New returns a fleet of shards, in their order: shard i is shards[i],
// forever (a job's ID names its shard by position). Every shard must be
// a store that can be a shard (droverdriver.ShardExecutor), migrated to
// the same schema (Migrate does both). New reads each shard's record and
// refuses a shard recorded at another position or in another fleet; a
// shard it cannot reach is left to be read once it answers, so that a
// process starts while one shard is down. A fleet of one shard behaves as
// that shard alone, except that it checks the shard's record.
//
// Each shard needs a connection pool of its own, as it has when each is a
// database: a migration or a transaction of the fleet's holds one shard's
// connection while it opens the next shard's, and on one shared pool the
// connections it waits for can all be held by work waiting for it.
func New[TTx any](ctx context.Context, shards []droverdriver.TxDriver[TTx], opts Options) (*Driver[TTx], error) {
	if len(shards) == 0 {
		return nil, errors.New("droverfleet: no shards")
	}
	if len(shards) > droverdriver.MaxShards {
		return nil, fmt.Errorf("droverfleet: %d shards, at most %d (IDs must stay below 2^53)", len(shards), droverdriver.MaxShards)
	}
	c := &core{log: opts.Logger, pins: map[string]pin{}}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	for i, d := range shards {
		sx, ok := d.Executor().(droverdriver.ShardExecutor)
		if !ok {
			return nil, fmt.Errorf("droverfleet: shard %d: the %s driver cannot be a shard (it does not implement droverdriver.ShardExecutor)", i, d.Name())
		}
		c.shards = append(c.shards, &shard{idx: i, d: d, sx: sx})
	}
	// Processes start their turns at random shards, so that short-lived
	// ones (a CLI insert each) do not all place on the same shard.
	var r [8]byte
	_, _ = rand.Read(r[:])
	c.spread.Store(binary.LittleEndian.Uint64(r[:]))
	c.claims.Store(binary.LittleEndian.Uint64(r[:]) >> 7)
	if err := c.readRecords(ctx, true); err != nil {
		return nil, err
	}
	f := &Driver[TTx]{c: c, txs: shards}
	f.exec = &exec{c: c, on: func(_ context.Context, i int) (droverdriver.Executor, error) { return c.shards[i].d.Executor(), nil }}
	return f, nil
}

// readRecords reads the record of every shard (of those up, unless all is
// set: a shard in its backoff would hold a placement up), checks each against its position and the others'
// fleet, and learns the fleet's name and key shards. A shard that cannot
// be reached is marked down; a record that does not match is an error.
func (c *core) readRecords(ctx context.Context, all bool) error {
	c.refresh.Lock()
	defer c.refresh.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(c.shards))
	now := time.Now()
	for _, s := range c.shards {
		if !all && !s.up(now) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			start := time.Now()
			rec, err := s.sx.ShardGet(rctx)
			if err == nil {
				s.obs.answered(time.Since(start), start)
			}
			s.mu.Lock()
			s.readErr = err
			s.mu.Unlock()
			if err != nil {
				// Down, or not migrated yet: placements wait for its
				// record, and Attach reports what stops it.
				c.failed(s, err)
				return
			}
			c.ok(s)
			if rec == nil {
				return // not attached yet: Attach records it
			}
			if rec.Index != s.idx {
				errs[s.idx] = fmt.Errorf("droverfleet: the database given as shard %d is shard %d of fleet %s: list the shards in the order they were attached", s.idx, rec.Index, rec.Fleet)
				return
			}
			s.mu.Lock()
			s.rec = rec
			s.mu.Unlock()
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checked = time.Now()
	for _, s := range c.shards {
		s.mu.Lock()
		rec := s.rec
		s.mu.Unlock()
		if rec == nil {
			continue
		}
		if c.fleet == "" {
			c.fleet, c.keyShards = rec.Fleet, rec.KeyShards
		} else if rec.Fleet != c.fleet {
			return fmt.Errorf("droverfleet: shard %d belongs to fleet %s, shard 0's fleet is %s: a database can be a shard of one fleet only", s.idx, rec.Fleet, c.fleet)
		}
	}
	return nil
}

// Attach records every shard that has no record yet as the shard of its
// position, moving its IDs into the shard's range (ShardAttach): shard 0
// first, which names the fleet and fixes how many shards keys are spread
// over (every shard given when it is first attached), then the others,
// which take both from it. A shard appended to the list later is
// attached the same way and takes new placements at once; keys stay where
// they are. Migrate calls it after migrating every shard.
func (f *Driver[TTx]) Attach(ctx context.Context) error {
	c := f.c
	if err := c.readRecords(ctx, true); err != nil {
		return err
	}
	for _, s := range c.shards {
		s.mu.Lock()
		known := s.rec != nil
		s.mu.Unlock()
		if known {
			continue
		}
		c.mu.Lock()
		name, keys := c.fleet, c.keyShards
		c.mu.Unlock()
		if name == "" {
			if s.idx != 0 {
				return fmt.Errorf("droverfleet: shard 0 has no record: attach shard 0 first")
			}
			var b [8]byte
			_, _ = rand.Read(b[:])
			name, keys = hex.EncodeToString(b[:]), len(c.shards)
		}
		rec, err := s.sx.ShardAttach(ctx, droverdriver.ShardRecord{Fleet: name, Index: s.idx, KeyShards: keys})
		if err != nil {
			return fmt.Errorf("droverfleet: attach shard %d: %w", s.idx, err)
		}
		if s.idx == 0 && rec.Index == 0 {
			// Another process attached shard 0 first: its name is the
			// fleet's.
			name, keys = rec.Fleet, rec.KeyShards
		}
		if rec.Index != s.idx || rec.Fleet != name {
			return fmt.Errorf("droverfleet: shard %d was attached meanwhile as shard %d of fleet %s", s.idx, rec.Index, rec.Fleet)
		}
		s.mu.Lock()
		s.rec = rec
		s.mu.Unlock()
		c.mu.Lock()
		c.fleet, c.keyShards = name, keys
		c.mu.Unlock()
	}
	return nil
}

// SetDraining sets or clears shard i's drain flag: a draining shard takes
// no new placements but those its keys and pinned queues need (see
// docs/scaling.md), while workers finish what it holds. Once it holds no
// job, it can leave the fleet's list if it is the last shard (IDs name
// shards by position).
func (f *Driver[TTx]) SetDraining(ctx context.Context, i int, draining bool) error {
	if i < 0 || i >= len(f.c.shards) {
		return fmt.Errorf("droverfleet: no shard %d (the fleet has %d)", i, len(f.c.shards))
	}
	s := f.c.shards[i]
	if err := s.sx.ShardSetDraining(ctx, draining); err != nil {
		return fmt.Errorf("shard %d: %w", i, err)
	}
	s.mu.Lock()
	if s.rec != nil {
		s.rec.Draining = draining
	}
	s.mu.Unlock()
	return nil
}

// ShardStatus is one shard as a fleet sees it.
type ShardStatus struct {
	Index int
	// Record is the shard's record, nil until it was read (the shard was
	// never attached, or has not answered yet).
	Record *droverdriver.ShardRecord
	// Down is set from the call that found the shard unreachable to the
	// next call it answered, with the error it gave.
	Down error
}

// Shards reports every shard's record and health.
func (f *Driver[TTx]) Shards() []ShardStatus {
	out := make([]ShardStatus, len(f.c.shards))
	for i, s := range f.c.shards {
		s.mu.Lock()
		out[i] = ShardStatus{Index: i}
		if s.rec != nil {
			r := *s.rec
			out[i].Record = &r
		}
		if s.backoff != 0 {
			out[i].Down = s.downErr
		}
		s.mu.Unlock()
	}
	return out
}

// failed marks s down for a backoff when err says it could not be
// reached, logging the first failure.
func (c *core) failed(s *shard, err error) bool {
	if !c.unreachable(s, err) {
		return false
	}
	s.obs.unreachableNow(err)
	s.mu.Lock()
	first := s.backoff == 0
	s.backoff = min(max(2*s.backoff, 100*time.Millisecond), 5*time.Second)
	s.downTill = time.Now().Add(s.backoff)
	s.downErr = err
	s.mu.Unlock()
	if first {
		c.log.Warn("shard unreachable: its jobs wait, the other shards go on", "shard", s.idx, "error", err)
	}
	return true
}

// ok clears s's backoff after it answered.
func (c *core) ok(s *shard) {
	s.mu.Lock()
	was := s.backoff != 0
	s.backoff, s.downTill, s.downErr = 0, time.Time{}, nil
	s.mu.Unlock()
	if was {
		c.log.Info("shard answers again", "shard", s.idx)
	}
}

// unreachable reports whether err says that shard s could not be reached
// rather than that a statement failed.
func (c *core) unreachable(s *shard, err error) bool {
	if err == nil {
		return false
	}
	if ur, ok := s.d.Executor().(droverdriver.UnavailableReporter); ok && ur.Unavailable(err) {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// up reports whether s is not in a backoff.
func (s *shard) up(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !now.Before(s.downTill)
}

// placeable reports whether s takes placements free to go anywhere: it
// is attached, not draining and not down.
func (s *shard) placeable(now time.Time) bool { return s.attached() && s.up(now) }

// attached reports whether s is attached and not draining, up or not: a
// caller's transaction on it reaches it whatever its health.
func (s *shard) attached() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rec != nil && !s.rec.Draining
}

// ready makes sure the fleet knows its key shards (from any record),
// reading the records again when they are older than recordTTL.
func (c *core) ready(ctx context.Context) (int, error) {
	c.mu.Lock()
	keys, stale := c.keyShards, time.Since(c.checked) > recordTTL
	c.mu.Unlock()
	if stale || keys == 0 {
		if err := c.readRecords(ctx, false); err != nil {
			return 0, err
		}
		c.mu.Lock()
		keys = c.keyShards
		c.mu.Unlock()
	}
	if keys == 0 {
		for _, s := range c.shards {
			s.mu.Lock()
			err := s.readErr
			s.mu.Unlock()
			if errors.Is(err, droverdriver.ErrSchemaMissing) {
				return 0, fmt.Errorf("shard %d: %w", s.idx, err)
			}
		}
		return 0, errors.New("droverfleet: no shard has a record yet (run drover migrate, which attaches the shards, or Driver.Attach)")
	}
	return keys, nil
}

// hashOn returns the shard of the first keys shards that parts hash to,
// by jump consistent hashing: raising keys moves the fewest placements.
func hashOn(keys int, parts ...string) int {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	return jump(h.Sum64(), keys)
}

// jump is Lamping and Veach's jump consistent hash of key over n buckets.
func jump(key uint64, n int) int {
	var b, j int64 = -1, 0
	for j < int64(n) {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return int(b)
}

// topicRetryPrefix starts the queue of a topic's retry jobs
// (drover.RetryQueue): their keys live with the topic, where the
// subscription's acks insert them.
const topicRetryPrefix = "topic:"

// keyShard is where the jobs of (queue, key) live: a topic's retry jobs
// with their topic.
func keyShard(keys int, queue, key string) int {
	if topic, ok := strings.CutPrefix(queue, topicRetryPrefix); ok {
		return topicShard(keys, topic)
	}
	return hashOn(keys, "key", queue, key)
}

// topicShard is where a topic lives, with its subscriptions, lanes and
// messages.
func topicShard(keys int, topic string) int { return hashOn(keys, "topic", topic) }

// uniqueShard is where the jobs holding a unique key live: unique keys
// are held per kind, and per queue too with UniqueByQueue.
func uniqueShard(keys int, p *droverdriver.InsertParams) int {
	q := ""
	if p.UniqueByQueue {
		q = p.Queue
	}
	return hashOn(keys, "unique", p.Kind, q, p.UniqueKey)
}

// queueShard is where a pinned queue's jobs live.
func queueShard(keys int, queue string) int { return hashOn(keys, "queue", queue) }

// pinned reports whether queue is limited or in strict order, which pins
// its new jobs to one shard, from a cache of settingsTTL.
func (c *core) pinned(ctx context.Context, keys int, queue string) (bool, error) {
	c.pinMu.Lock()
	p, ok := c.pins[queue]
	c.pinMu.Unlock()
	if ok && time.Since(p.at) < settingsTTL {
		return p.limited, nil
	}
	s, err := c.settingsGet(ctx, keys, queue)
	if err != nil {
		return false, err
	}
	c.pinMu.Lock()
	c.pins[queue] = pin{limited: s.Limited(), at: time.Now()}
	c.pinMu.Unlock()
	return s.Limited(), nil
}

// settingsGet reads queue's settings from its pinned shard, or from the
// next shard that answers: every shard holds a copy.
func (c *core) settingsGet(ctx context.Context, keys int, queue string) (*drovertype.QueueSettings, error) {
	first := queueShard(keys, queue)
	var err error
	for k := range c.shards {
		s := c.shards[(first+k)%len(c.shards)]
		if !s.up(time.Now()) {
			continue
		}
		var st *drovertype.QueueSettings
		if st, err = s.d.Executor().QueueSettingsGet(ctx, queue); err == nil {
			return st, nil
		}
		if !c.failed(s, err) {
			return nil, err
		}
	}
	if err == nil {
		err = errors.New("every shard is down")
	}
	return nil, fmt.Errorf("read settings of queue %s: %w", queue, err)
}

// forget drops what the fleet cached of queue's settings.
func (c *core) forget(queue string) {
	c.pinMu.Lock()
	delete(c.pins, queue)
	c.pinMu.Unlock()
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
