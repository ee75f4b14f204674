package drover

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/robfig/cron/v3"
)

// PeriodicJob inserts a job on a schedule. Every client may carry the same
// periodic jobs; only the elected leader inserts them, and each insert
// carries a unique key naming its tick, so that a leader change cannot
// enqueue one tick twice while its job is unfinished.
//
// Ticks missed while no leader ran (downtime, a leader change) are skipped:
// the schedule resumes at the next tick after the leader starts, so a long
// outage never ends in a burst of stale jobs. Set RunOnStart to insert one
// job as soon as a leader takes over.
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
}

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
	logger  *slog.Logger
}

// run inserts due jobs until ctx ends.
func (s *scheduler) run(ctx context.Context) {
	if len(s.entries) == 0 {
		return
	}
	now := time.Now()
	next := make([]time.Time, len(s.entries))
	var due []int
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

// insertDue inserts one job for each due entry in one call. ticks holds
// each entry's tick; nil means a start-up run, keyed by now.
func (s *scheduler) insertDue(ctx context.Context, due []int, now time.Time, ticks []time.Time) {
	if len(due) == 0 {
		return
	}
	params := make([]InsertManyParams, 0, len(due))
	for k, i := range due {
		e := s.entries[i]
		tick := now.Truncate(time.Microsecond)
		if ticks != nil {
			tick = ticks[k]
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
	if _, err := s.insert(ctx, params); err != nil && ctx.Err() == nil {
		s.logger.Error("inserting periodic jobs failed", "error", err)
	}
}
