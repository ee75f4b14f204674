package droverdriver

import (
	"context"
	"errors"
	"time"
)

// PeriodicExecutor stores the definitions of periodic (cron) jobs: those
// created through the API, and the Go-configured ones (Config.PeriodicJobs
// in the root package) that a leader registers so that every process can
// list, pause and trigger them. The leader's scheduler reads them; the
// last tick of each stays with PeriodicTicks. Like TopicExecutor it is
// separate from Executor so that a store without it still satisfies the
// job contract; Drover finds it with a type assertion and reports
// ErrPeriodicUnsupported when it is missing. Both bundled drivers
// implement it.
type PeriodicExecutor interface {
	// PeriodicCreate stores a definition with source PeriodicSourceAPI
	// unless one of that name exists, and returns the stored row, or nil
	// when the name was taken (by either source).
	PeriodicCreate(ctx context.Context, p PeriodicParams) (*PeriodicRow, error)

	// PeriodicUpdate replaces the schedule, job and options of the
	// definition of that name stored with source PeriodicSourceAPI, keeping
	// its paused flag, and returns it; nil when there is none (missing, or
	// Go-configured).
	PeriodicUpdate(ctx context.Context, p PeriodicParams) (*PeriodicRow, error)

	// PeriodicRegister stores each definition with source
	// PeriodicSourceConfig, replacing whatever row has its name except the
	// paused flag and created_at: a Go-configured entry wins over a stored
	// definition of the same name.
	PeriodicRegister(ctx context.Context, defs []PeriodicParams) error

	// PeriodicList returns every definition, by name, each with the last
	// tick recorded for its name (PeriodicTicksRecord).
	PeriodicList(ctx context.Context) ([]*PeriodicRow, error)

	// PeriodicSetPaused sets the paused flag of the named definition and
	// returns it, or nil when there is none.
	PeriodicSetPaused(ctx context.Context, name string, paused bool, now time.Time) (*PeriodicRow, error)

	// PeriodicDelete deletes the named definition and reports whether
	// there was one. Its recorded last tick stays, so that a definition
	// of the same name created again does not catch up ticks it already
	// ran.
	PeriodicDelete(ctx context.Context, name string) (bool, error)
}

// ErrPeriodicUnsupported is returned for calls on stored periodic jobs on
// a store whose driver does not implement PeriodicExecutor.
var ErrPeriodicUnsupported = errors.New("the store's driver does not implement stored periodic jobs")

// The sources of a periodic definition (the periodic_jobs.source column).
const (
	// PeriodicSourceAPI marks a definition created through the API.
	PeriodicSourceAPI = "api"
	// PeriodicSourceConfig marks a Go-configured entry a leader registered.
	PeriodicSourceConfig = "config"
)

// PeriodicParams is a periodic definition to store. Args is an encoded
// JSON object; zero Priority and MaxAttempts take the inserting client's
// defaults at each tick.
type PeriodicParams struct {
	Name        string
	Schedule    string
	Kind        string
	Args        []byte
	Queue       string
	Priority    int
	MaxAttempts int
	Tags        []string
	Now         time.Time
}

// PeriodicRow is a stored periodic definition.
type PeriodicRow struct {
	Name        string
	Schedule    string
	Kind        string
	Args        []byte
	Queue       string
	Priority    int
	MaxAttempts int
	Tags        []string
	// Source is PeriodicSourceAPI or PeriodicSourceConfig.
	Source    string
	Paused    bool
	CreatedAt time.Time
	UpdatedAt time.Time
	// LastTick is the last tick recorded for the name, nil when none.
	LastTick *time.Time
}
