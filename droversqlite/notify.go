package droversqlite

import (
	"context"
	"sync"
)

// SQLite has no LISTEN/NOTIFY. Within one process the driver makes up for it
// with a hub per database (and table prefix): every Driver opened on the same
// file publishes its inserts there, so a worker hears of a job the moment
// the inserting call returns instead of at its next poll. Other processes
// still find new jobs by polling (see pollInterval).
var hubs = struct {
	sync.Mutex
	subs map[string]map[*subscriber]struct{}
}{subs: map[string]map[*subscriber]struct{}{}}

// subscriber is one running Listen. Notifications are merged into a set of
// queue names, so a burst of inserts costs the listener one wake-up per
// queue and no notification is ever dropped for want of buffer space.
type subscriber struct {
	wake chan struct{} // capacity 1: "pending is not empty"

	mu      sync.Mutex
	pending map[string]struct{}
}

// notify wakes every listener of the database key for each queue.
func notify(key string, queues []string) {
	if len(queues) == 0 {
		return
	}
	hubs.Lock()
	defer hubs.Unlock()
	for s := range hubs.subs[key] {
		s.mu.Lock()
		for _, q := range queues {
			s.pending[q] = struct{}{}
		}
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

func subscribe(key string) *subscriber {
	s := &subscriber{wake: make(chan struct{}, 1), pending: map[string]struct{}{}}
	hubs.Lock()
	defer hubs.Unlock()
	if hubs.subs[key] == nil {
		hubs.subs[key] = map[*subscriber]struct{}{}
	}
	hubs.subs[key][s] = struct{}{}
	return s
}

func unsubscribe(key string, s *subscriber) {
	hubs.Lock()
	defer hubs.Unlock()
	delete(hubs.subs[key], s)
	if len(hubs.subs[key]) == 0 {
		delete(hubs.subs, key)
	}
}

// listener implements driver.Listener on the in-process hub.
type listener struct {
	key string
}

// Listen is ready as soon as it has subscribed, so it calls onConnect once,
// and then delivers queue names until ctx ends. It never fails otherwise:
// there is no connection to lose. Every listener hears every insert: the
// listeners of one process cost each other no round trips.
func (l *listener) Listen(ctx context.Context, onConnect func(), onInsert func(string) int) error {
	s := subscribe(l.key)
	defer unsubscribe(l.key, s)
	onConnect()
	var queues []string
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.wake:
		}
		s.mu.Lock()
		for q := range s.pending {
			queues = append(queues, q)
			delete(s.pending, q)
		}
		s.mu.Unlock()
		for _, q := range queues {
			onInsert(q)
		}
		queues = queues[:0]
	}
}
