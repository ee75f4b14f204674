package drover

import (
	"context"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/validate"
)

// QueueStats summarises every queue that has waiting or running jobs. It
// reads only the hot table (one pass, no finished jobs), so it stays cheap
// however much history is kept, but it still scans every waiting job:
// sample it on an interval, as `drover serve` does, not per request.
func (c *Client[TTx]) QueueStats(ctx context.Context) ([]drovertype.QueueStats, error) {
	return c.exec.QueueStats(ctx, time.Now())
}

// FinishedStats summarises the jobs of every queue finished in (since,
// until]: throughput and pickup latency over that window, whichever process
// ran them. It reads the recent end of finished jobs through their index
// on finalized_at; sample it on an interval, each window starting where the
// previous one ended, so that no job counts twice.
func (c *Client[TTx]) FinishedStats(ctx context.Context, since, until time.Time) ([]drovertype.FinishedStats, error) {
	return c.exec.FinishedStats(ctx, since, until)
}

// LeaseOwners lists the processes holding running jobs, Go clients and
// HTTP workers alike, from one pass over the hot table.
func (c *Client[TTx]) LeaseOwners(ctx context.Context) ([]drovertype.LeaseOwner, error) {
	return c.exec.LeaseOwners(ctx)
}

// QueuePause pauses a queue across the fleet: from the moment each process
// hears of it (at once in this client; within a second elsewhere, see
// docs/ordering-and-limits.md), no claim of the queue, by a Go client or a
// remote worker, starts a job. Jobs already running finish, and inserts
// into the queue still succeed; they wait until QueueResume. Pausing a
// paused queue changes nothing.
func (c *Client[TTx]) QueuePause(ctx context.Context, name string) error {
	_, err := c.setQueueSettings(ctx, droverdriver.QueueSettingsSetParams{Queue: name, Paused: new(true)})
	return err
}

// QueueResume undoes QueuePause: the queue's jobs start again.
func (c *Client[TTx]) QueueResume(ctx context.Context, name string) error {
	_, err := c.setQueueSettings(ctx, droverdriver.QueueSettingsSetParams{Queue: name, Paused: new(false)})
	return err
}

// QueuePauseKind pauses one kind of job within a queue, across the fleet,
// as QueuePause pauses the whole queue: no claim of the queue, by a Go
// client or a remote worker, starts a job of the kind, while the queue's
// other kinds run on. Jobs of the kind already running finish, and inserts
// still succeed; they wait until QueueResumeKind. The kind is stored with
// the queue's settings, so it stays paused across restarts and deploys;
// pausing it twice changes nothing. The whole queue's pause and its
// paused kinds are independent: resuming the queue leaves its paused
// kinds paused.
func (c *Client[TTx]) QueuePauseKind(ctx context.Context, queue, kind string) error {
	if err := validate.Kind(kind); err != nil {
		return err
	}
	_, err := c.setQueueSettings(ctx, droverdriver.QueueSettingsSetParams{Queue: queue, PauseKinds: []string{kind}})
	return err
}

// QueueResumeKind undoes QueuePauseKind: jobs of the kind start again.
// Resuming a kind that is not paused changes nothing.
func (c *Client[TTx]) QueueResumeKind(ctx context.Context, queue, kind string) error {
	if err := validate.Kind(kind); err != nil {
		return err
	}
	_, err := c.setQueueSettings(ctx, droverdriver.QueueSettingsSetParams{Queue: queue, ResumeKinds: []string{kind}})
	return err
}

// QueueLimits are a queue's cluster-wide limits, as in QueueConfig; zero
// fields mean none.
type QueueLimits struct {
	GlobalMaxWorkers int
	RateLimit        int
	RatePeriod       time.Duration
}

// QueueSetLimits replaces a queue's stored cluster-wide limits; zero
// limits lift them. A client whose QueueConfig sets limits writes them
// again when it starts.
func (c *Client[TTx]) QueueSetLimits(ctx context.Context, name string, l QueueLimits) (*drovertype.QueueSettings, error) {
	if err := checkLimits("", l.GlobalMaxWorkers, l.RateLimit, l.RatePeriod); err != nil {
		return nil, err
	}
	return c.setQueueSettings(ctx, droverdriver.QueueSettingsSetParams{Queue: name,
		Limit: &drovertype.QueueLimit{MaxRunning: l.GlobalMaxWorkers, Rate: l.RateLimit, Period: l.RatePeriod}})
}

// setQueueSettings writes settings, then drops them from this client's
// cache (other processes hear of the change from the store) and wakes the
// queue's producer, so that a resumed or widened queue is claimed from at
// once.
func (c *Client[TTx]) setQueueSettings(ctx context.Context, p droverdriver.QueueSettingsSetParams) (*drovertype.QueueSettings, error) {
	if err := validate.Queue(p.Queue); err != nil {
		return nil, err
	}
	s, err := c.exec.QueueSettingsSet(ctx, p)
	if err != nil {
		return nil, err
	}
	c.settings.Forget(p.Queue)
	c.wake(p.Queue)
	return s, nil
}

// QueueGet returns a queue's stored settings, read from the store (not
// from the client's cache). A queue without stored settings, which runs
// unpaused and unlimited, comes back with only its Queue set.
func (c *Client[TTx]) QueueGet(ctx context.Context, name string) (*drovertype.QueueSettings, error) {
	if err := validate.Queue(name); err != nil {
		return nil, err
	}
	s, err := c.exec.QueueSettingsGet(ctx, name)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return &drovertype.QueueSettings{Queue: name}, nil
	}
	return s, nil
}

// QueueKnown reports whether a queue has been in use: it has stored
// settings, jobs waiting, running or finished (and not yet pruned), or a
// worker of the registry that works it. drover serve refuses to change
// the settings of a queue it does not know, so that a typo does not pause
// a queue nobody uses, as River refuses to pause a queue it has not seen.
func (c *Client[TTx]) QueueKnown(ctx context.Context, name string) (bool, error) {
	if err := validate.Queue(name); err != nil {
		return false, err
	}
	return c.exec.QueueKnown(ctx, name)
}

// QueueList returns the settings of every queue that has settings stored,
// by name. Queues without any run unpaused and unlimited; QueueStats lists
// the queues that have jobs.
func (c *Client[TTx]) QueueList(ctx context.Context) ([]*drovertype.QueueSettings, error) {
	return c.exec.QueueSettingsList(ctx)
}
