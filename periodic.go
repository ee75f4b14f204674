package drover

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/droverhq/drover/droverdriver"
)

// PeriodicJob inserts a job on a schedule. Every client may carry the same
// periodic jobs; only the elected leader inserts them, and each insert
// carries a unique key naming its tick, so that a leader change cannot
// enqueue one tick twice while its job is unfinished.
//
// Ticks missed while no leader ran (downtime, a leader change) are skipped
// by default: the schedule resumes at the next tick after the leader
// starts, so a long outage never ends in a burst of stale jobs. Set
// RunOnStart to insert one job as soon as a leader takes over, or
// MissedTicks to insert the latest ticks missed.
type PeriodicJob struct {
	// Name identifies the periodic job in its jobs' unique keys and
	// metadata; it must be unique among a client's periodic jobs.
	Name string
	// Schedule is a standard five-field cron expression ("*/5 * * * *"),
	// optionally prefixed with CRON_TZ=Zone, or a descriptor such as
	// "@hourly" or "@every 90s", as github.com/robfig/cron/v3 parses them.
	Schedule string
	// Construct returns the args and options of the job for one tick. The
	// options' UniqueKey and UniquePeriod are set by the scheduler.
	Construct func() (Args, *InsertOpts)
	// RunOnStart inserts one job when a leader starts, besides the ticks.
	RunOnStart bool
	// MissedTicks, when positive, makes a new leader insert the ticks that
	// passed since the last tick any leader inserted (recorded in the
	// store), at most MissedTicks of them, the latest: a bounded catch-up
	// after downtime, each job keyed and tagged with its own tick. Zero
	// skips missed ticks.
	MissedTicks int
}

// MaxMissedTicks bounds PeriodicJob.MissedTicks: a catch-up inserts its
// jobs in one call.
const MaxMissedTicks = 1000

// periodicEntry is a validated PeriodicJob with its parsed schedule, or
// a stored definition (periodic_store.go) made into one.
type periodicEntry struct {
	job      *PeriodicJob
	schedule cron.Schedule
}

// parsePeriodic validates the periodic jobs of a config.
func parsePeriodic(jobs []*PeriodicJob) ([]periodicEntry, error) {
	seen := map[string]bool{}
	entries := make([]periodicEntry, 0, len(jobs))
	for i, j := range jobs {
		if j == nil || j.Name == "" || j.Construct == nil {
			return nil, invalidf("config: periodic job %d: Name and Construct are required", i+1)
		}
		if err := checkKey("periodic job name", j.Name); err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		if j.MissedTicks < 0 || j.MissedTicks > MaxMissedTicks {
			return nil, invalidf("config: periodic job %q: MissedTicks %d must be between 0 and %d", j.Name, j.MissedTicks, MaxMissedTicks)
		}
		if seen[j.Name] {
			return nil, invalidf("config: periodic job %q is defined twice", j.Name)
		}
		seen[j.Name] = true
		s, err := parseSchedule(j.Schedule)
		if err != nil {
			return nil, invalidf("config: periodic job %q: schedule %q: %v", j.Name, j.Schedule, err)
		}
		entries = append(entries, periodicEntry{job: j, schedule: s})
	}
	return entries, nil
}

// MinPeriodicEvery is the shortest interval of an "@every" schedule. The
// scheduler works in whole seconds (a cron expression's finest field is
// the minute): robfig/cron turns a shorter or fractional interval into a
// whole number of seconds without a word, so such a schedule is refused
// rather than run at another pace than the one written.
const MinPeriodicEvery = time.Second

// parseSchedule parses a periodic job's schedule as robfig/cron's
// standard parser does, refusing an "@every" interval shorter than
// MinPeriodicEvery or not a whole number of seconds, which that parser
// would silently change.
func parseSchedule(spec string) (cron.Schedule, error) {
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, err
	}
	fields := strings.Fields(spec)
	if len(fields) > 0 && (strings.HasPrefix(fields[0], "TZ=") || strings.HasPrefix(fields[0], "CRON_TZ=")) {
		fields = fields[1:]
	}
	if len(fields) == 2 && fields[0] == "@every" {
		d, err := time.ParseDuration(fields[1])
		switch {
		case err != nil:
			return nil, err
		case d < MinPeriodicEvery:
			return nil, fmt.Errorf("@every %s: the shortest interval is %s", d, MinPeriodicEvery)
		case d%time.Second != 0:
			return nil, fmt.Errorf("@every %s: give a whole number of seconds (the scheduler would run it every %s)", d, d.Truncate(time.Second))
		}
	}
	return sched, nil
}

// periodicTick is the metadata a periodic job is inserted with, so that
// the store shows which schedule and tick produced it.
type periodicTick struct {
	Periodic string    `json:"periodic"`
	Tick     time.Time `json:"tick"`
	// Triggered marks a job inserted by PeriodicJobSet.Trigger, not by
	// the schedule.
	Triggered bool `json:"triggered,omitempty"`
}

// scheduler inserts the periodic jobs while its client leads: the Go
// entries of its config, and the definitions stored in the database
// (periodic_store.go), which it reads again every reload interval and
// whenever its own client changes one (nudge). Paused ones insert
// nothing.
type scheduler struct {
	entries []periodicEntry
	insert  func(ctx context.Context, jobs []InsertManyParams) ([]int64, error)
	// ticks reads and records the last tick of each periodic job.
	ticks droverdriver.Executor
	// store holds the stored definitions; nil when the driver has none
	// (then only the Go entries run, as before migration 014).
	store  droverdriver.PeriodicExecutor
	reload time.Duration
	nudge  <-chan struct{}
	logger *slog.Logger
	// signals are the client's (testsignals.go).
	signals schedulerTestSignals
}

// active is an entry the scheduler runs, with its next tick.
type active struct {
	entry periodicEntry
	// spec is the schedule text, so that a reload keeps next only while
	// the schedule is unchanged.
	spec string
	next time.Time
}

// run inserts due jobs until ctx ends.
func (s *scheduler) run(ctx context.Context) {
	if len(s.entries) == 0 && s.store == nil {
		return
	}
	now := time.Now()
	s.register(ctx, now)
	paused, stored := s.load(ctx)
	// The catch-up reads the last ticks before the start-up runs record
	// theirs. Both are for the Go entries only: a stored definition has
	// neither option.
	due, ticks := s.missedTicks(ctx, now, paused)
	s.insertDue(ctx, due, now, ticks)
	due = nil
	for _, e := range s.entries {
		if e.job.RunOnStart && !paused[e.job.Name] {
			due = append(due, e)
		}
	}
	s.insertDue(ctx, due, now, nil)
	running := s.merge(nil, paused, stored, now)
	s.signals.Reloaded.Send(struct{}{})
	var reloadC <-chan time.Time
	if s.store != nil {
		t := time.NewTicker(s.reload)
		defer t.Stop()
		reloadC = t.C
	}
	for {
		var timerC <-chan time.Time
		var timer *time.Timer
		// A zero next is a schedule that never fires again (Feb 30th):
		// never due.
		var earliest time.Time
		for _, a := range running {
			if !a.next.IsZero() && (earliest.IsZero() || a.next.Before(earliest)) {
				earliest = a.next
			}
		}
		if !earliest.IsZero() {
			timer = time.NewTimer(time.Until(earliest))
			timerC = timer.C
		}
		reloaded := false
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-reloadC:
			reloaded = true
		case <-s.nudge:
			reloaded = true
		case <-timerC:
		}
		if timer != nil {
			timer.Stop()
		}
		now = time.Now()
		if reloaded {
			if paused, stored, ok := s.reloadStore(ctx); ok {
				running = s.merge(running, paused, stored, now)
			}
			s.signals.Reloaded.Send(struct{}{})
			continue
		}
		due = due[:0]
		ticks := make([]time.Time, 0, len(running))
		for _, a := range running {
			if !a.next.IsZero() && !a.next.After(now) {
				due = append(due, a.entry)
				ticks = append(ticks, a.next)
				// From now, not from the tick: a tick that came late
				// (a stalled process) is not followed by a burst.
				a.next = a.entry.schedule.Next(now)
			}
		}
		s.insertDue(ctx, due, now, ticks)
	}
}

// register records the Go entries in the store, so that every process
// lists them and can pause or trigger them. Each entry's job is
// constructed once for the record.
func (s *scheduler) register(ctx context.Context, now time.Time) {
	if s.store == nil || len(s.entries) == 0 {
		return
	}
	defs := make([]droverdriver.PeriodicParams, 0, len(s.entries))
	for _, e := range s.entries {
		args, opts := e.job.Construct()
		d := droverdriver.PeriodicParams{Name: e.job.Name, Schedule: e.job.Schedule, Now: now, Queue: DefaultQueue,
			Args: []byte("{}")}
		if args != nil {
			d.Kind = args.Kind()
			if b, err := json.Marshal(args); err == nil && len(b) > 0 && b[0] == '{' {
				d.Args = b
			}
		}
		if opts != nil {
			d.Queue = cmp.Or(opts.Queue, DefaultQueue)
			d.Priority, d.MaxAttempts, d.Tags = opts.Priority, opts.MaxAttempts, opts.Tags
		}
		defs = append(defs, d)
	}
	if err := s.store.PeriodicRegister(ctx, defs); err != nil && ctx.Err() == nil {
		s.logger.Error("registering the configured periodic jobs failed; they run but are not listed", "error", err)
	}
}

// load reads the stored definitions: the names paused (of either source)
// and the stored definitions to run. A failure logs and leaves only the
// Go entries, unpaused.
func (s *scheduler) load(ctx context.Context) (paused map[string]bool, stored []periodicEntry) {
	paused, stored, _ = s.reloadStore(ctx)
	return paused, stored
}

// reloadStore is load reporting whether the store answered.
func (s *scheduler) reloadStore(ctx context.Context) (paused map[string]bool, stored []periodicEntry, ok bool) {
	if s.store == nil {
		return nil, nil, true
	}
	rows, err := s.store.PeriodicList(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Error("reading the stored periodic jobs failed", "error", err)
		}
		return nil, nil, false
	}
	paused = map[string]bool{}
	for _, r := range rows {
		if r.Paused {
			paused[r.Name] = true
			continue
		}
		if r.Source != droverdriver.PeriodicSourceAPI {
			continue
		}
		e, err := storedEntry(r)
		if err != nil {
			s.logger.Error("stored periodic job skipped", "name", r.Name, "error", err)
			continue
		}
		stored = append(stored, e)
	}
	return paused, stored, true
}

// merge returns the entries to run: the Go entries and the stored ones,
// less the paused. An entry running before keeps its next tick while its
// schedule is unchanged; a new one starts at its next tick after now.
// A stored definition with the name of a Go entry is left out: the Go
// entry wins (its registration replaced the row, so this only happens
// while a registration failed).
func (s *scheduler) merge(prev []*active, paused map[string]bool, stored []periodicEntry, now time.Time) []*active {
	before := make(map[string]*active, len(prev))
	for _, a := range prev {
		before[a.entry.job.Name] = a
	}
	var out []*active
	add := func(e periodicEntry) {
		if paused[e.job.Name] {
			return
		}
		if a, ok := before[e.job.Name]; ok && a.spec == e.job.Schedule {
			a.entry = e
			out = append(out, a)
			return
		}
		out = append(out, &active{entry: e, spec: e.job.Schedule, next: e.schedule.Next(now)})
	}
	configured := make(map[string]bool, len(s.entries))
	for _, e := range s.entries {
		configured[e.job.Name] = true
		add(e)
	}
	for _, e := range stored {
		if !configured[e.job.Name] {
			add(e)
		}
	}
	return out
}

// missedTicks returns the ticks to catch up for the entries with
// MissedTicks that are not paused: those after the last tick recorded in
// the store and not after now, at most MissedTicks per entry, as parallel
// slices of entries and ticks. An entry with no recorded tick (its first leader)
// has nothing to catch up.
func (s *scheduler) missedTicks(ctx context.Context, now time.Time, paused map[string]bool) (due []periodicEntry, ticks []time.Time) {
	var names []string
	for _, e := range s.entries {
		if e.job.MissedTicks > 0 && !paused[e.job.Name] {
			names = append(names, e.job.Name)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	last, err := s.ticks.PeriodicTicks(ctx, names)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Error("reading the last periodic ticks failed; missed ticks are skipped", "error", err)
		}
		return nil, nil
	}
	for _, e := range s.entries {
		if from, ok := last[e.job.Name]; ok && e.job.MissedTicks > 0 && !paused[e.job.Name] {
			for _, t := range lastTicks(e.schedule, from, now, e.job.MissedTicks) {
				due, ticks = append(due, e), append(ticks, t)
			}
		}
	}
	return due, ticks
}

// lastTicks returns the last n ticks of sched after from and not after to,
// oldest first. A constant delay (@every) skips whole delays ahead, to n+1
// of them before to, so that a long outage of a short schedule is not
// walked tick by tick (its ticks stay whole delays after from); cron
// expressions tick at most once a minute, about half a million ticks a
// year.
func lastTicks(sched cron.Schedule, from, to time.Time, n int) []time.Time {
	if every, ok := sched.(cron.ConstantDelaySchedule); ok {
		if skip := int64(to.Sub(from)/every.Delay) - int64(n+1); skip > 0 {
			from = from.Add(every.Delay * time.Duration(skip))
		}
	}
	if n <= 0 {
		return nil
	}
	// A ring of the last n: the oldest is overwritten at next.
	out, next := make([]time.Time, 0, n), 0
	for t := sched.Next(from); !t.IsZero() && !t.After(to); t = sched.Next(t) {
		if len(out) < n {
			out = append(out, t)
			continue
		}
		out[next] = t
		next = (next + 1) % n
	}
	return append(out[next:], out[:next]...)
}

// insertDue inserts one job for each due entry in one call, then records
// each entry's latest tick in the store. ticks holds each job's tick; nil
// means a start-up run, keyed by now.
func (s *scheduler) insertDue(ctx context.Context, due []periodicEntry, now time.Time, ticks []time.Time) {
	if len(due) == 0 {
		return
	}
	defer s.signals.Inserted.Send(len(due))
	params := make([]InsertManyParams, 0, len(due))
	latest := map[string]time.Time{}
	for k, e := range due {
		tick := now.Truncate(time.Microsecond)
		if ticks != nil {
			tick = ticks[k]
		}
		if tick.After(latest[e.job.Name]) {
			latest[e.job.Name] = tick
		}
		args, opts := e.job.Construct()
		o := InsertOpts{}
		if opts != nil {
			o = *opts
		}
		o.UniqueKey = "periodic/" + e.job.Name + "/" + tick.UTC().Format(time.RFC3339Nano)
		o.UniquePeriod = 0
		if o.Metadata == nil {
			meta, _ := json.Marshal(periodicTick{Periodic: e.job.Name, Tick: tick.UTC()})
			o.Metadata = meta
		}
		params = append(params, InsertManyParams{Args: args, Opts: &o})
	}
	if _, err := s.insert(ctx, params); err != nil {
		if ctx.Err() == nil {
			s.logger.Error("inserting periodic jobs failed", "error", err)
		}
		return
	}
	// Recorded after the insert, not with it: a leader that stops in
	// between leaves an older tick, and the next leader's catch-up then
	// tries that tick again, which its unique key skips while its job is
	// unfinished.
	names := make([]string, 0, len(latest))
	last := make([]time.Time, 0, len(latest))
	for name, t := range latest {
		names, last = append(names, name), append(last, t)
	}
	if err := s.ticks.PeriodicTicksRecord(ctx, names, last); err != nil && ctx.Err() == nil {
		s.logger.Error("recording periodic ticks failed", "error", err)
	}
}
