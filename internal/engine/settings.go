package engine

import (
	"context"
	"sync"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// SettingsTTL is how long a process reuses a queue's settings read from
// the store. Claims never read queue_settings themselves: a plain claim
// stays the single claim statement, and the cost of stored settings is one
// QueueSettingsGet per queue per SettingsTTL per process. A change reaches
// a process when the store's notification of it arrives (Forget), or
// within SettingsTTL when it does not (a dropped PostgreSQL notification,
// another process on an SQLite file, a process that does not listen).
const SettingsTTL = time.Second

// maxCachedSettings bounds the queues whose settings are remembered:
// remote workers name queues freely.
const maxCachedSettings = 1024

// Settings caches the stored settings of queues for the claims of one
// process. The zero value is ready to use.
type Settings struct {
	// Now reads the clock; nil means time.Now. Tests set it.
	Now func() time.Time

	mu      sync.Mutex
	entries map[string]settingsEntry
	// gen counts Forget calls, so that a read that began before one does
	// not store what may be the old row.
	gen uint64
}

type settingsEntry struct {
	s    *drovertype.QueueSettings // nil: none stored
	read time.Time
}

func (c *Settings) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Get returns queue's settings, nil when none are stored, from the cache
// while they are fresh, else from ex.
func (c *Settings) Get(ctx context.Context, ex droverdriver.Executor, queue string) (*drovertype.QueueSettings, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[queue]
	gen := c.gen
	c.mu.Unlock()
	if ok && now.Sub(e.read) < SettingsTTL {
		return e.s, nil
	}
	s, err := ex.QueueSettingsGet(ctx, queue)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		// A change was announced while the store was read: the row read
		// may predate it, so it is used for this claim and not kept.
		return s, nil
	}
	if c.entries == nil || len(c.entries) >= maxCachedSettings {
		c.entries = map[string]settingsEntry{}
	}
	c.entries[queue] = settingsEntry{s: s, read: now}
	return s, nil
}

// Peek returns what the cache holds of queue, without reading the store:
// ok is false when it holds nothing.
func (c *Settings) Peek(queue string) (s *drovertype.QueueSettings, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[queue]
	return e.s, ok
}

// Forget drops queue's cached settings, so that the next claim reads them
// from the store: the store announced a change (SettingsNotice), or this
// process made one.
func (c *Settings) Forget(queue string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.entries, queue)
}
