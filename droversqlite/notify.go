package droversqlite

import (
	"context"
	"database/sql"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// SQLite has no LISTEN/NOTIFY. Within one process the driver makes up for it
// with a hub per database (and table prefix): every Driver opened on the same
// file publishes its inserts there, so a worker hears of a job the moment
// the inserting call returns instead of at its next poll. Other processes
// still find new jobs by polling (see pollInterval).
//
// As on PostgreSQL (droverpg/listener.go), an insert of n jobs wakes the
// listeners in turn, starting one further on each time, until those woken
// have room for n: the others would only queue behind the single writer
// to claim nothing. Wake-ups whose count is not known (a key's next job
// promoted, a workflow step released, a job retried) reach every listener.
var hubs = struct {
	sync.Mutex
	subs map[string]*hub
}{subs: map[string]*hub{}}

// hub holds the listeners of one database key, in the order they came.
type hub struct {
	subs []*subscriber
	next int // where the next wake-up starts
}

// subscriber is one running Listen.
type subscriber struct {
	onInsert func(string) int
}

// notify wakes every listener of the database key for each queue.
func notify(key string, queues []string) {
	for _, q := range queues {
		deliver(key, q, 0)
	}
}

// notifyJobs wakes, for each queue, listeners of the database key in turn
// until they have room for its jobs.
func notifyJobs(key string, jobs map[string]int) {
	for q, n := range jobs {
		deliver(key, q, max(n, 0))
	}
}

// wakeAll in the counts notifyJobs takes wakes every listener of a queue.
const wakeAll = -1

// deliver wakes listeners for n jobs of queue, or all of them for n = 0.
// The callbacks never block (driver.Listener), and run outside the lock.
func deliver(key, queue string, n int) {
	hubs.Lock()
	h := hubs.subs[key]
	if h == nil {
		hubs.Unlock()
		return
	}
	subs := h.subs // never edited in place (subscribe appends, unsubscribe replaces)
	start := h.next
	h.next++
	hubs.Unlock()
	room := 0
	for i := range subs {
		room += subs[(start+i)%len(subs)].onInsert(queue)
		if n > 0 && room >= n {
			return
		}
	}
}

func subscribe(key string, s *subscriber) {
	hubs.Lock()
	defer hubs.Unlock()
	if hubs.subs[key] == nil {
		hubs.subs[key] = &hub{}
	}
	hubs.subs[key].subs = append(hubs.subs[key].subs, s)
}

func unsubscribe(key string, s *subscriber) {
	hubs.Lock()
	defer hubs.Unlock()
	h := hubs.subs[key]
	// A new slice, not an edit in place: deliver reads the old one outside
	// the lock.
	h.subs = slices.DeleteFunc(slices.Clone(h.subs), func(x *subscriber) bool { return x == s })
	if len(h.subs) == 0 {
		delete(hubs.subs, key)
	}
}

// listener implements driver.Listener on the in-process hub, and watches
// for messages published to topics by other processes.
type listener struct {
	key string
	e   *executor
}

// Listen is ready as soon as it has subscribed, so it calls onConnect once;
// inserts call onInsert from then on, until ctx ends. It never fails
// otherwise: there is no connection to lose.
func (l *listener) Listen(ctx context.Context, onConnect func(), onInsert func(string) int) error {
	s := &subscriber{onInsert: onInsert}
	subscribe(l.key, s)
	defer unsubscribe(l.key, s)
	onConnect()
	l.watchTopics(ctx, func() { onInsert(droverdriver.TopicWakePrefix) })
	return ctx.Err()
}

// Topic consumers of one process hear of its publishes through the hub.
// Those of another process would wait for their poll, up to pollInterval
// and more when their loop is busy, so the listener watches the last
// message ID (a single row of sqlite_sequence, on a reader) and wakes the
// topic consumer when it moved: every topicWatchActive while publishes
// keep coming, relaxing to every pollInterval after topicWatchIdle without
// one, so that an idle process or one without topics reads it 20 times a
// second.
const (
	topicWatchActive = 5 * time.Millisecond
	topicWatchIdle   = time.Second
)

// watchTopics calls wake whenever the last topic message ID moved, until
// ctx ends. A failed read is tried again at the next tick.
func (l *listener) watchTopics(ctx context.Context, wake func()) {
	last, lastMove := int64(-1), time.Time{}
	tick := time.NewTimer(0)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var id int64
		err := topicLastID.query(ctx, l.e, nil, l.e.reader, func(rows *sql.Rows) error { return rows.Scan(&id) }, struct{}{})
		if err == nil && id != last {
			if last >= 0 {
				wake()
			}
			last, lastMove = id, time.Now()
		}
		if time.Since(lastMove) < topicWatchIdle {
			tick.Reset(topicWatchActive)
		} else {
			tick.Reset(pollInterval)
		}
	}
}
