package drover

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/validate"
)

// Periodic jobs stored in the database (migration 014): defined, changed,
// paused and triggered at run time through PeriodicJobs (the HTTP API and
// `drover periodic` call it), beside the Go entries of Config.PeriodicJobs.
//
// Both kinds share one namespace of names and one table. The leader
// registers its Go entries there when it takes over, so that every
// process lists them, with their next and last run, and can pause, resume
// or trigger them; their schedule and job stay those of the Go config, and
// a stored definition of the same name is replaced by the Go entry (code
// that is deployed is the source of truth; the API refuses to create or
// change a definition under a name the config holds). The leader reads the
// stored definitions every Config.PeriodicReloadInterval, and at once when
// its own client changes one.

// PeriodicReloadIntervalDefault is how often the leader reads the stored
// periodic definitions: a definition created or paused from another
// process takes effect within it.
const PeriodicReloadIntervalDefault = 10 * time.Second

// The sources of a periodic job (PeriodicJobStatus.Source).
const (
	// PeriodicSourceAPI is a definition created through PeriodicJobs
	// (HTTP, CLI, SDKs).
	PeriodicSourceAPI = droverdriver.PeriodicSourceAPI
	// PeriodicSourceConfig is a Go entry of Config.PeriodicJobs, registered
	// by the leader that runs it.
	PeriodicSourceConfig = droverdriver.PeriodicSourceConfig
)

// Errors of PeriodicJobs.
var (
	// ErrPeriodicNotFound is returned when no periodic job has the name.
	ErrPeriodicNotFound = errors.New("periodic job not found")
	// ErrPeriodicExists is returned by Create when the name is taken.
	ErrPeriodicExists = errors.New("periodic job exists")
	// ErrPeriodicConfigured is returned by Update and Delete for a periodic
	// job of Config.PeriodicJobs: it changes in the Go config.
	ErrPeriodicConfigured = errors.New("periodic job is defined in Go config")
)

// PeriodicDefinition is a periodic job stored in the database: at every
// tick of Schedule the leader inserts a job of Kind with Args and the
// options below, keyed by its tick like a Go PeriodicJob's.
type PeriodicDefinition struct {
	// Name identifies the periodic job; unique among stored and
	// Go-configured ones.
	Name string `json:"name"`
	// Schedule is a cron expression or descriptor, as PeriodicJob.Schedule.
	Schedule string `json:"schedule"`
	// Kind and Args are the job's; Args is a JSON object, nil for {}. The
	// leader inserts the kind whether or not it has a worker for it:
	// workers in other processes or languages may run it.
	Kind string          `json:"kind"`
	Args json.RawMessage `json:"args"`
	// Queue, Priority, MaxAttempts and Tags are the job's InsertOpts; zero
	// values take the defaults at each tick.
	Queue       string   `json:"queue"`
	Priority    int      `json:"priority"`
	MaxAttempts int      `json:"max_attempts"`
	Tags        []string `json:"tags"`
}

// PeriodicJobStatus is a periodic job as listed: its definition, where it
// comes from, and its runs.
type PeriodicJobStatus struct {
	PeriodicDefinition
	// Source is PeriodicSourceAPI or PeriodicSourceConfig. For a Go entry,
	// Kind, Args and the options are what its Construct returned when the
	// leader registered it.
	Source string `json:"source"`
	// Paused periodic jobs insert nothing until resumed.
	Paused bool `json:"paused"`
	// NextRunAt is the schedule's next tick after now; nil while paused.
	NextRunAt *time.Time `json:"next_run_at"`
	// LastRunAt is the tick of the last job the leader inserted for it
	// (or Trigger did), nil before the first.
	LastRunAt *time.Time `json:"last_run_at"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// PeriodicJobSet manages the periodic jobs of a store; get it with
// Client.PeriodicJobs. It needs no Start.
type PeriodicJobSet struct {
	exec   droverdriver.Executor
	config *Config
	// local are the client's own Go entries, by name: Trigger constructs
	// their jobs as the scheduler would.
	local map[string]periodicEntry
	// build validates a job as an insert would; insert stores one.
	build  func(args Args, opts *InsertOpts) (droverdriver.InsertParams, error)
	insert func(ctx context.Context, args Args, opts *InsertOpts) (*drovertype.JobRow, error)
	// nudge tells this client's scheduler, if it leads, to read the
	// stored definitions again.
	nudge chan struct{}
}

// PeriodicJobs returns the client's API for periodic jobs.
func (c *Client[TTx]) PeriodicJobs() *PeriodicJobSet { return c.periodicSet }

func (c *Client[TTx]) newPeriodicSet() *PeriodicJobSet {
	local := make(map[string]periodicEntry, len(c.periodic))
	for _, e := range c.periodic {
		local[e.job.Name] = e
	}
	return &PeriodicJobSet{exec: c.exec, config: c.config, local: local, nudge: make(chan struct{}, 1),
		build: c.buildInsert,
		insert: func(ctx context.Context, args Args, opts *InsertOpts) (*drovertype.JobRow, error) {
			return c.insertOne(ctx, c.exec, args, opts)
		}}
}

func (p *PeriodicJobSet) store() (droverdriver.PeriodicExecutor, error) {
	s, ok := p.exec.(droverdriver.PeriodicExecutor)
	if !ok {
		return nil, droverdriver.ErrPeriodicUnsupported
	}
	return s, nil
}

// changed wakes this client's scheduler, if it leads, to read the stored
// definitions now; other clients' leaders read them within their reload
// interval.
func (p *PeriodicJobSet) changed() {
	select {
	case p.nudge <- struct{}{}:
	default:
	}
}

// storedArgs are the args of a stored definition: raw JSON, inserted
// whether or not the inserting client has a worker for its kind.
type storedArgs struct{ RawArgs }

// params validates d as a job insert would and returns what the store
// keeps.
func (p *PeriodicJobSet) params(d PeriodicDefinition) (droverdriver.PeriodicParams, error) {
	if err := validate.PeriodicName(d.Name); err != nil {
		return droverdriver.PeriodicParams{}, err
	}
	if len(d.Schedule) > 255 {
		return droverdriver.PeriodicParams{}, invalidf("periodic job %q: schedule: %d bytes is over the limit of 255", d.Name, len(d.Schedule))
	}
	if err := validate.Text("schedule", d.Schedule); err != nil {
		return droverdriver.PeriodicParams{}, err
	}
	sched, err := parseSchedule(d.Schedule)
	if err != nil {
		return droverdriver.PeriodicParams{}, invalidf("periodic job %q: schedule %s: %v", d.Name, validate.Echo(d.Schedule), err)
	}
	if sched.Next(time.Now()).IsZero() {
		return droverdriver.PeriodicParams{}, invalidf("periodic job %q: schedule %s never fires", d.Name, validate.Echo(d.Schedule))
	}
	if len(d.Args) == 0 {
		d.Args = json.RawMessage("{}")
	}
	d.Queue = cmp.Or(d.Queue, DefaultQueue)
	if d.MaxAttempts < 0 {
		return droverdriver.PeriodicParams{}, invalidf("max attempts %d: must be between 1 and 1000000, or 0 for the default", d.MaxAttempts)
	}
	ip, err := p.build(storedArgs{RawArgs{KindName: d.Kind, JSON: d.Args}}, d.opts())
	if err != nil {
		return droverdriver.PeriodicParams{}, fmt.Errorf("periodic job %q: %w", d.Name, err)
	}
	return droverdriver.PeriodicParams{Name: d.Name, Schedule: d.Schedule, Kind: ip.Kind, Args: ip.Args, Queue: ip.Queue,
		Priority: ip.Priority, MaxAttempts: d.MaxAttempts, Tags: d.Tags, Now: time.Now()}, nil
}

// opts are the InsertOpts of the definition's jobs.
func (d *PeriodicDefinition) opts() *InsertOpts {
	return &InsertOpts{Queue: d.Queue, Priority: d.Priority, MaxAttempts: d.MaxAttempts, Tags: d.Tags}
}

// storedEntry makes a stored definition into an entry of the scheduler.
func storedEntry(r *droverdriver.PeriodicRow) (periodicEntry, error) {
	sched, err := cron.ParseStandard(r.Schedule)
	if err != nil {
		return periodicEntry{}, fmt.Errorf("schedule %q: %w", r.Schedule, err)
	}
	d := definitionOf(r)
	return periodicEntry{schedule: sched, job: &PeriodicJob{Name: r.Name, Schedule: r.Schedule,
		Construct: func() (Args, *InsertOpts) { return storedArgs{RawArgs{KindName: d.Kind, JSON: d.Args}}, d.opts() }}}, nil
}

func definitionOf(r *droverdriver.PeriodicRow) PeriodicDefinition {
	return PeriodicDefinition{Name: r.Name, Schedule: r.Schedule, Kind: r.Kind, Args: r.Args, Queue: r.Queue,
		Priority: r.Priority, MaxAttempts: r.MaxAttempts, Tags: r.Tags}
}

// status lists r as of now.
func status(r *droverdriver.PeriodicRow, now time.Time) *PeriodicJobStatus {
	s := &PeriodicJobStatus{PeriodicDefinition: definitionOf(r), Source: r.Source, Paused: r.Paused,
		LastRunAt: r.LastTick, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if s.Tags == nil {
		s.Tags = []string{}
	}
	if sched, err := cron.ParseStandard(r.Schedule); err == nil && !r.Paused {
		if next := sched.Next(now); !next.IsZero() {
			s.NextRunAt = &next
		}
	}
	return s
}

// Create stores a new periodic definition. It fails with
// ErrPeriodicExists when a periodic job of that name exists, stored or
// Go-configured (once a leader registered it), and with ErrInvalid when
// the schedule or the job would not insert.
func (p *PeriodicJobSet) Create(ctx context.Context, d PeriodicDefinition) (*PeriodicJobStatus, error) {
	s, err := p.store()
	if err != nil {
		return nil, err
	}
	params, err := p.params(d)
	if err != nil {
		return nil, err
	}
	if _, ok := p.local[d.Name]; ok {
		return nil, fmt.Errorf("%w: %q", ErrPeriodicConfigured, d.Name)
	}
	row, err := s.PeriodicCreate(ctx, params)
	if err != nil {
		return nil, err
	}
	if row == nil {
		if st, err := p.Get(ctx, d.Name); err == nil && st.Source == PeriodicSourceConfig {
			return nil, fmt.Errorf("%w: %q", ErrPeriodicConfigured, d.Name)
		}
		return nil, fmt.Errorf("%w: %q", ErrPeriodicExists, d.Name)
	}
	p.changed()
	return status(row, time.Now()), nil
}

// Update replaces the schedule, job and options of a stored definition,
// keeping whether it is paused. A Go-configured periodic job fails with
// ErrPeriodicConfigured, a missing one with ErrPeriodicNotFound. A new
// schedule starts at its next tick.
func (p *PeriodicJobSet) Update(ctx context.Context, d PeriodicDefinition) (*PeriodicJobStatus, error) {
	s, err := p.store()
	if err != nil {
		return nil, err
	}
	params, err := p.params(d)
	if err != nil {
		return nil, err
	}
	row, err := s.PeriodicUpdate(ctx, params)
	if err != nil {
		return nil, err
	}
	if row == nil {
		return nil, p.missing(ctx, d.Name)
	}
	p.changed()
	return status(row, time.Now()), nil
}

// missing says why no stored definition of name changed: it is
// Go-configured, or there is none.
func (p *PeriodicJobSet) missing(ctx context.Context, name string) error {
	if st, err := p.Get(ctx, name); err == nil && st.Source == PeriodicSourceConfig {
		return fmt.Errorf("%w: %q: change it in the Go config", ErrPeriodicConfigured, name)
	}
	return fmt.Errorf("%w: %q", ErrPeriodicNotFound, name)
}

// List returns every periodic job, stored or Go-configured (those a leader
// registered), by name, with its next and last run.
func (p *PeriodicJobSet) List(ctx context.Context) ([]*PeriodicJobStatus, error) {
	s, err := p.store()
	if err != nil {
		return nil, err
	}
	rows, err := s.PeriodicList(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]*PeriodicJobStatus, len(rows))
	for i, r := range rows {
		out[i] = status(r, now)
	}
	return out, nil
}

// Get returns one periodic job, or ErrPeriodicNotFound.
func (p *PeriodicJobSet) Get(ctx context.Context, name string) (*PeriodicJobStatus, error) {
	if err := validate.Text("periodic job name", name); err != nil {
		return nil, err
	}
	all, err := p.List(ctx)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(s *PeriodicJobStatus) bool { return s.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("%w: %q", ErrPeriodicNotFound, name)
	}
	return all[i], nil
}

// Delete removes a periodic job. A Go-configured one fails with
// ErrPeriodicConfigured while this client's config has it; from another
// process its row is deleted, and the next leader that has it registers it
// again.
func (p *PeriodicJobSet) Delete(ctx context.Context, name string) error {
	s, err := p.store()
	if err != nil {
		return err
	}
	if err := validate.Text("periodic job name", name); err != nil {
		return err
	}
	if _, ok := p.local[name]; ok {
		return fmt.Errorf("%w: %q: remove it from the Go config", ErrPeriodicConfigured, name)
	}
	ok, err := s.PeriodicDelete(ctx, name)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %q", ErrPeriodicNotFound, name)
	}
	p.changed()
	return nil
}

// Pause stops a periodic job, stored or Go-configured, from inserting
// jobs until Resume; jobs it already inserted are left alone. The pause is
// stored, so it holds across leaders and deploys.
func (p *PeriodicJobSet) Pause(ctx context.Context, name string) (*PeriodicJobStatus, error) {
	return p.setPaused(ctx, name, true)
}

// Resume lets a paused periodic job insert again from its next tick;
// ticks that passed while it was paused are not caught up.
func (p *PeriodicJobSet) Resume(ctx context.Context, name string) (*PeriodicJobStatus, error) {
	return p.setPaused(ctx, name, false)
}

func (p *PeriodicJobSet) setPaused(ctx context.Context, name string, paused bool) (*PeriodicJobStatus, error) {
	s, err := p.store()
	if err != nil {
		return nil, err
	}
	if err := validate.Text("periodic job name", name); err != nil {
		return nil, err
	}
	now := time.Now()
	row, err := s.PeriodicSetPaused(ctx, name, paused, now)
	if err != nil {
		return nil, err
	}
	if row == nil {
		return nil, fmt.Errorf("%w: %q", ErrPeriodicNotFound, name)
	}
	p.changed()
	return status(row, now), nil
}

// Trigger inserts one job of a periodic job now, outside its schedule
// (paused or not), and returns it. Its metadata names the periodic job,
// the time and "triggered": true; it carries no unique key, and it counts
// as the last run. A Go entry of this client's config constructs its job
// as a tick would; one only registered by another process inserts the job
// its registration recorded.
func (p *PeriodicJobSet) Trigger(ctx context.Context, name string) (*drovertype.JobRow, error) {
	now := time.Now().Truncate(time.Microsecond)
	var args Args
	var opts InsertOpts
	if e, ok := p.local[name]; ok {
		a, o := e.job.Construct()
		args = a
		if o != nil {
			opts = *o
		}
	} else {
		st, err := p.Get(ctx, name)
		if err != nil {
			return nil, err
		}
		args = storedArgs{RawArgs{KindName: st.Kind, JSON: st.Args}}
		opts = *st.opts()
	}
	opts.UniqueKey, opts.UniquePeriod = "", 0
	meta, _ := json.Marshal(periodicTick{Periodic: name, Tick: now.UTC(), Triggered: true})
	opts.Metadata = meta
	row, err := p.insert(ctx, args, &opts)
	if err != nil {
		return nil, err
	}
	if err := p.exec.PeriodicTicksRecord(ctx, []string{name}, []time.Time{now}); err != nil {
		return row, err
	}
	return row, nil
}
