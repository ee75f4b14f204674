package drover

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
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

// periodicEntry is a validated PeriodicJob with its parsed schedule.
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
		s, err := cron.ParseStandard(j.Schedule)
		if err != nil {
			return nil, invalidf("config: periodic job %q: schedule %q: %v", j.Name, j.Schedule, err)
		}
		entries = append(entries, periodicEntry{job: j, schedule: s})
	}
	return entries, nil
}

// periodicTick is the metadata a periodic job is inserted with, so that
// the store shows which schedule and tick produced it.
type periodicTick struct {
	Periodic string    `json:"periodic"`
	Tick     time.Time `json:"tick"`
}

// scheduler inserts the periodic jobs while its client leads.
type scheduler struct {
	entries []periodicEntry
	insert  func(ctx context.Context, jobs []InsertManyParams) ([]int64, error)
	// ticks reads and records the last tick of each periodic job.
	ticks  droverdriver.Executor
	logger *slog.Logger
}

// run inserts due jobs until ctx ends.
func (s *scheduler) run(ctx context.Context) {
	if len(s.entries) == 0 {
		return
	}
	now := time.Now()
	// The catch-up reads the last ticks before the start-up runs record
	// theirs.
	due, ticks := s.missedTicks(ctx, now)
	s.insertDue(ctx, due, now, ticks)
	next := make([]time.Time, len(s.entries))
	due = nil
	for i, e := range s.entries {
		next[i] = e.schedule.Next(now)
		if e.job.RunOnStart {
			due = append(due, i)
		}
	}
	s.insertDue(ctx, due, now, nil)
	for {
		earliest := next[0]
		for _, t := range next[1:] {
			if t.Before(earliest) {
				earliest = t
			}
		}
		timer := time.NewTimer(time.Until(earliest))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		now = time.Now()
		due = due[:0]
		ticks := make([]time.Time, 0, len(next))
		for i := range next {
			if !next[i].After(now) {
				due = append(due, i)
				ticks = append(ticks, next[i])
				// From now, not from the tick: a tick that came late
				// (a stalled process) is not followed by a burst.
				next[i] = s.entries[i].schedule.Next(now)
			}
		}
		s.insertDue(ctx, due, now, ticks)
	}
}

// missedTicks returns the ticks to catch up for the entries with
// MissedTicks: those after the last tick recorded in the store and not
// after now, at most MissedTicks per entry, as parallel slices of entry
// indexes and ticks. An entry with no recorded tick (its first leader)
// has nothing to catch up.
func (s *scheduler) missedTicks(ctx context.Context, now time.Time) (due []int, ticks []time.Time) {
	var names []string
	for _, e := range s.entries {
		if e.job.MissedTicks > 0 {
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
	for i, e := range s.entries {
		if from, ok := last[e.job.Name]; ok && e.job.MissedTicks > 0 {
			for _, t := range lastTicks(e.schedule, from, now, e.job.MissedTicks) {
				due, ticks = append(due, i), append(ticks, t)
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
func (s *scheduler) insertDue(ctx context.Context, due []int, now time.Time, ticks []time.Time) {
	if len(due) == 0 {
		return
	}
	params := make([]InsertManyParams, 0, len(due))
	latest := map[string]time.Time{}
	for k, i := range due {
		e := s.entries[i]
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
