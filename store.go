package drover

import (
	"context"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/notifier"
)

// Store is the store a Client works, as a process built around the client
// sees it (drover serve is one): whether it is ready, whether an error
// means it is out of reach, its notifications and the records of bulk
// tasks. It is not generic, so that such a process holds the client and
// this, never the driver beside them. Client.Store returns it.
type Store struct {
	driver droverdriver.Driver
	exec   droverdriver.Executor
	config *Config
}

// Store returns the store the client works.
func (c *Client[TTx]) Store() *Store { return c.store }

// StoreCheck is what Store.Check found.
type StoreCheck struct {
	// Version is the store's schema version and Latest the newest this
	// binary knows: a store behind needs `drover migrate` (Migrate), one
	// ahead a newer Drover.
	Version, Latest int
	// WriteErr names what makes writes fail, for a store that can tell
	// while it still answers reads (an SQLite file on a full disk); nil
	// when the store took the probe, or needs none (PostgreSQL refuses
	// queries itself when it cannot write).
	WriteErr error
}

// Check reads the store's schema version and, where the store offers a
// probe (droverdriver.WriteProber), checks that it takes writes: what a
// readiness check asks before sending a process traffic. It fails only
// when the store does not answer.
func (s *Store) Check(ctx context.Context) (*StoreCheck, error) {
	version, latest, err := MigrationStatus(ctx, s.driver)
	if err != nil {
		return nil, err
	}
	check := &StoreCheck{Version: version, Latest: latest}
	if p, ok := s.driver.(droverdriver.WriteProber); ok {
		check.WriteErr = p.ProbeWrite(ctx)
	}
	return check, nil
}

// Unavailable reports whether err says that the store could not be
// reached at all (down, starting up, the network between), as the driver
// tells from its errors (droverdriver.UnavailableReporter), rather than
// that a statement failed: the same call will likely succeed once the
// store is back. A deadline that ran out is the caller's to judge; a
// store that cannot tell reports false.
func (s *Store) Unavailable(err error) bool {
	ur, ok := s.exec.(droverdriver.UnavailableReporter)
	return ok && ur.Unavailable(err)
}

// PollInterval is how often the client looks for work that no
// notification announced (Config.PollInterval, by default the store's):
// the interval at which any wait for jobs or messages checks again.
func (s *Store) PollInterval() time.Duration { return s.config.PollInterval }

// Listen relays the store's notifications until ctx ends: wake is called
// with the channel of each (a queue's name when it got jobs;
// droverdriver.TopicWake and droverdriver.SettingsNotice name a topic's
// publishes and a change of a queue's settings) and reports how many jobs
// its waiters have room for, and wakeAll is called after every
// (re)connect, for what was missed while not listening. It reconnects
// with backoff, and returns at once for a store that sends no
// notifications or a client that polls only (Config.PollOnly): polls
// find the work then. drover serve ends its long polls with it.
func (s *Store) Listen(ctx context.Context, wake func(channel string) (room int), wakeAll func()) {
	l := s.driver.NewListener()
	if l == nil || s.config.PollOnly {
		return
	}
	(&notifier.Notifier{Listener: l, Wake: wake, WakeAll: wakeAll, Logger: s.config.Logger}).Run(ctx)
}

// BulkTasks returns the store's records of drover serve's bulk tasks,
// which outlive the server that ran them.
func (s *Store) BulkTasks() droverdriver.BulkTaskExecutor {
	// The executor is wrapped so that the records are all a caller
	// reaches: a type assertion finds no other statement behind them.
	return bulkTasks{s.exec}
}

// bulkTasks is the executor's bulk task statements alone.
type bulkTasks struct{ droverdriver.BulkTaskExecutor }
