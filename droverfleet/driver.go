package droverfleet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Executor implements droverdriver.Driver: the fleet's statements outside
// any transaction, with the stored periodic definitions, which a caller's
// transaction does not reach (they live on shard 0 alone).
func (f *Driver[TTx]) Executor() droverdriver.Executor { return outer{f.exec} }

// Name implements droverdriver.Driver: the shards' store.
func (f *Driver[TTx]) Name() string { return f.c.shards[0].d.Name() }

// Schema implements droverdriver.Driver: shard 0's schema.
func (f *Driver[TTx]) Schema() string { return f.c.shards[0].d.Schema() }

// Migrations implements droverdriver.Driver: every shard runs the same
// binary's migrations.
func (f *Driver[TTx]) Migrations() []drovertype.Migration { return f.c.shards[0].d.Migrations() }

// MigrateTx implements droverdriver.Driver: fn runs once, with a
// migrator over every shard's migration transaction, held open together:
// its version is the lowest of the shards', and a migration applies on
// each shard not past it yet. The transactions commit together, shard by
// shard, once fn returns (each shard's migration lock is taken in shard
// order, so two fleets migrating at once do not deadlock); then the
// shards not attached yet are attached.
func (f *Driver[TTx]) MigrateTx(ctx context.Context, fn func(ctx context.Context, m droverdriver.Migrator) error) error {
	theirs := map[int]string{}
	for _, m := range f.Migrations() {
		theirs[m.Version] = m.SQL
	}
	fm := &fleetMigrator{theirs: theirs}
	var ends []func(error) error
	endAll := func(err error) error {
		for i, end := range ends {
			if err != nil {
				_ = end(errRollback)
			} else if cerr := end(nil); cerr != nil {
				err = fmt.Errorf("shard %d: commit migrations: %w", i, cerr)
			}
		}
		return err
	}
	for i, s := range f.c.shards {
		own := map[int]drovertype.Migration{}
		for _, m := range s.d.Migrations() {
			own[m.Version] = m
		}
		m, end, err := hold(ctx, 0, func(ctx context.Context, fn func(droverdriver.Migrator) error) error {
			return s.d.MigrateTx(ctx, func(_ context.Context, m droverdriver.Migrator) error { return fn(m) })
		})
		if err != nil {
			return endAll(fmt.Errorf("shard %d: %w", i, err))
		}
		ends = append(ends, end)
		fm.shards = append(fm.shards, shardMigrator{m, own})
	}
	if err := endAll(fn(ctx, fm)); err != nil {
		return err
	}
	return f.attachMigrated(ctx)
}

// fleetMigrator migrates every shard in step.
type fleetMigrator struct {
	theirs map[int]string
	shards []shardMigrator
}

func (m *fleetMigrator) Version(ctx context.Context) (int, error) {
	low := -1
	for i, s := range m.shards {
		v, err := s.Version(ctx)
		if err != nil {
			return 0, fmt.Errorf("shard %d: %w", i, err)
		}
		if low < 0 || v < low {
			low = v
		}
	}
	return low, nil
}

// Apply applies mig on every shard not past it: for a migration of
// Migrations (shard 0's, in shard 0's schema), the shard's own migration
// of that version; any other as it is.
func (m *fleetMigrator) Apply(ctx context.Context, mig drovertype.Migration) error {
	for i, s := range m.shards {
		v, err := s.Version(ctx)
		if err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
		if mig.Version <= v {
			continue
		}
		apply := mig
		if own, ok := s.own[mig.Version]; ok && m.theirs[mig.Version] == mig.SQL {
			apply = own
		}
		if err := s.Apply(ctx, apply); err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
	}
	return nil
}

// shardMigrator is one shard's migrator, with the shard's own migrations
// by version.
type shardMigrator struct {
	droverdriver.Migrator
	own map[int]drovertype.Migration
}

// attachMigrated attaches the shards once every one has the record table:
// a migration up to an earlier version leaves them as they are.
func (f *Driver[TTx]) attachMigrated(ctx context.Context) error {
	for _, s := range f.c.shards {
		if _, err := s.sx.ShardGet(ctx); errors.Is(err, droverdriver.ErrSchemaMissing) {
			return nil
		}
	}
	return f.Attach(ctx)
}

// SchemaVersion implements droverdriver.Driver: the lowest version among
// the shards that answer, so that a process starts while a shard is down
// and still refuses a fleet that is partly behind.
func (f *Driver[TTx]) SchemaVersion(ctx context.Context) (int, error) {
	vs, err := everywhere(ctx, f.exec, true, func(ctx context.Context, _ droverdriver.Executor, i int) ([]int, error) {
		v, err := f.c.shards[i].d.SchemaVersion(ctx)
		return []int{v}, err
	})
	if err != nil {
		return 0, err
	}
	return slices.Min(vs), nil
}

// PollInterval implements droverdriver.Driver.
func (f *Driver[TTx]) PollInterval() time.Duration { return f.c.shards[0].d.PollInterval() }

// Close implements droverdriver.Driver. The shards stay open: they are the
// caller's, who closes each.
func (f *Driver[TTx]) Close() error { return nil }

// Shard returns shard i's own driver, for what concerns one database
// (its pool, its migrations).
func (f *Driver[TTx]) Shard(i int) droverdriver.TxDriver[TTx] { return f.txs[i] }

// UnwrapExecutor implements droverdriver.TxDriver: statements run in tx,
// on the shard tx is on, which the executor learns by reading the shard
// record through tx at its first statement. An insert in tx goes to that
// shard when its placement allows and fails otherwise (a keyed job whose
// key lives on another shard). When the shards are schemas of one
// database, tx reaches all of them, and its inserts are placed as any.
func (f *Driver[TTx]) UnwrapExecutor(tx TTx) droverdriver.Executor {
	u := &userTx[TTx]{f: f, tx: tx}
	return &exec{c: f.c, user: true, on: u.on, reach: u.reach}
}

// userTx finds and reaches the shards of a caller's transaction.
type userTx[TTx any] struct {
	f    *Driver[TTx]
	tx   TTx
	once sync.Once
	idx  []int
	err  error
	mu   sync.Mutex
	exs  map[int]droverdriver.Executor
}

// reach reads the shard record through the transaction once per distinct
// schema of the fleet's shards: each shard with its schema, in a
// savepoint when there are several schemas, since the tables of a schema
// that is not in the transaction's database do not exist there.
func (u *userTx[TTx]) reach(ctx context.Context) ([]int, error) {
	u.once.Do(func() {
		bySchema := map[string]int{}
		var order []string
		for i, d := range u.f.txs {
			if _, ok := bySchema[d.Schema()]; !ok {
				bySchema[d.Schema()] = i
				order = append(order, d.Schema())
			}
		}
		seen := map[int]bool{}
		for _, schema := range order {
			ex := u.f.txs[bySchema[schema]].UnwrapExecutor(u.tx)
			var rec *droverdriver.ShardRecord
			read := func(ctx context.Context, ex droverdriver.Executor) error {
				sx, ok := ex.(droverdriver.ShardExecutor)
				if !ok {
					return fmt.Errorf("droverfleet: the %s driver cannot be a shard", u.f.Name())
				}
				var err error
				rec, err = sx.ShardGet(ctx)
				return err
			}
			var err error
			if len(order) == 1 {
				err = read(ctx, ex)
			} else if err = ex.Tx(ctx, read); err != nil {
				continue // not this schema's database
			}
			if err != nil {
				u.err = err
				return
			}
			if rec == nil || rec.Index >= len(u.f.txs) {
				continue
			}
			u.f.c.mu.Lock()
			fleet := u.f.c.fleet
			u.f.c.mu.Unlock()
			if fleet != "" && rec.Fleet != fleet {
				continue
			}
			seen[rec.Index] = true
		}
		if len(seen) == 0 {
			u.err = fmt.Errorf("droverfleet: the transaction is on no shard of this fleet (begin it on a shard's pool)")
			return
		}
		u.idx = sortedKeys(seen)
	})
	return u.idx, u.err
}

// on returns shard i's executor in the transaction.
func (u *userTx[TTx]) on(ctx context.Context, i int) (droverdriver.Executor, error) {
	idx, err := u.reach(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(idx, i) {
		return nil, fmt.Errorf("droverfleet: shard %d is not in this transaction (it is on shards %v)", i, idx)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.exs == nil {
		u.exs = map[int]droverdriver.Executor{}
	}
	if u.exs[i] == nil {
		u.exs[i] = u.f.txs[i].UnwrapExecutor(u.tx)
	}
	return u.exs[i], nil
}

// NewListener implements droverdriver.Driver: one listener over every
// shard's (see listener).
func (f *Driver[TTx]) NewListener() droverdriver.Listener {
	var ls []droverdriver.Listener
	var which []int
	for i, s := range f.c.shards {
		if l := s.d.NewListener(); l != nil {
			ls, which = append(ls, l), append(which, i)
		}
	}
	if len(ls) == 0 {
		return nil
	}
	return &listener{c: f.c, ls: ls, which: which}
}

// outer is the fleet's executor outside any transaction: exec, and the
// periodic definitions, which live on shard 0 with the leader and the
// ticks.
type outer struct{ *exec }

var _ droverdriver.PeriodicExecutor = outer{}

func (o outer) periodic() (droverdriver.PeriodicExecutor, error) {
	pe, ok := o.c.shards[first].d.Executor().(droverdriver.PeriodicExecutor)
	if !ok {
		return nil, droverdriver.ErrPeriodicUnsupported
	}
	return pe, nil
}

// PeriodicCreate implements droverdriver.PeriodicExecutor.
func (o outer) PeriodicCreate(ctx context.Context, p droverdriver.PeriodicParams) (*droverdriver.PeriodicRow, error) {
	pe, err := o.periodic()
	if err != nil {
		return nil, err
	}
	return pe.PeriodicCreate(ctx, p)
}

// PeriodicUpdate implements droverdriver.PeriodicExecutor.
func (o outer) PeriodicUpdate(ctx context.Context, p droverdriver.PeriodicParams) (*droverdriver.PeriodicRow, error) {
	pe, err := o.periodic()
	if err != nil {
		return nil, err
	}
	return pe.PeriodicUpdate(ctx, p)
}

// PeriodicRegister implements droverdriver.PeriodicExecutor.
func (o outer) PeriodicRegister(ctx context.Context, defs []droverdriver.PeriodicParams) error {
	pe, err := o.periodic()
	if err != nil {
		return err
	}
	return pe.PeriodicRegister(ctx, defs)
}

// PeriodicList implements droverdriver.PeriodicExecutor.
func (o outer) PeriodicList(ctx context.Context) ([]*droverdriver.PeriodicRow, error) {
	pe, err := o.periodic()
	if err != nil {
		return nil, err
	}
	return pe.PeriodicList(ctx)
}

// PeriodicSetPaused implements droverdriver.PeriodicExecutor.
func (o outer) PeriodicSetPaused(ctx context.Context, name string, paused bool, now time.Time) (*droverdriver.PeriodicRow, error) {
	pe, err := o.periodic()
	if err != nil {
		return nil, err
	}
	return pe.PeriodicSetPaused(ctx, name, paused, now)
}

// PeriodicDelete implements droverdriver.PeriodicExecutor.
func (o outer) PeriodicDelete(ctx context.Context, name string) (bool, error) {
	pe, err := o.periodic()
	if err != nil {
		return false, err
	}
	return pe.PeriodicDelete(ctx, name)
}
