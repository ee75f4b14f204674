package droverpg

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover/droverdriver"
)

// One listening connection per driver.
//
// A listening connection costs the server work for every notification,
// whether or not its client wants it: the backend is signalled, reads the
// notification queue and sends the message on. With a connection per
// client, the 64 clients of one process turned each notification into 64
// deliveries, and that, not their claims, capped the streams bench: making
// only the clients meant to claim do so left the rate unchanged, and
// doubling the notifications to pass wake-ups on cut it by a quarter
// (docs/design/notifications-and-streams.md, "Notifications"). So every listener of a Driver
// shares one connection, opened by the first Listen and closed when the
// last one leaves.
//
// Sharing also lets the driver choose whom to wake. A notification about n
// jobs goes to the listeners in turn, starting one further on each time,
// until those woken said they had room for n; the others are not woken to
// race for the same jobs. A notification whose count is not known (a key's
// next job promoted, a workflow step released) goes to every listener.
// Listeners in other processes each hear every notification on their own
// connection.

// NewListener implements droverdriver.Driver.
func (d *Driver) NewListener() droverdriver.Listener { return d.hub }

// hub is a driver's shared listening connection.
type hub struct {
	pool    *pgxpool.Pool
	channel string

	mu   sync.Mutex
	sess *session // the connection in use or being opened; nil when none
}

func newHub(pool *pgxpool.Pool, channel string) *hub {
	return &hub{pool: pool, channel: channel}
}

// session is the life of one connection and the listeners it serves.
type session struct {
	cancel context.CancelFunc
	done   chan struct{} // closed once the connection is gone, err set
	err    error

	// Guarded by hub.mu:
	ready bool // listening: joiners are told at once
	subs  []*subscriber
	next  int // where the next notification starts
}

type subscriber struct {
	onConnect func()
	onInsert  func(string) int
}

// Listen implements droverdriver.Listener on the shared connection. It returns
// when ctx ends or when the connection fails (every listener then returns
// the same error, and the first to call Listen again opens a new one).
func (h *hub) Listen(ctx context.Context, onConnect func(), onInsert func(string) int) error {
	s := &subscriber{onConnect: onConnect, onInsert: onInsert}
	h.mu.Lock()
	sess := h.sess
	if sess == nil {
		runCtx, cancel := context.WithCancel(context.Background())
		sess = &session{cancel: cancel, done: make(chan struct{})}
		h.sess = sess
		go h.run(runCtx, sess)
	}
	sess.subs = append(sess.subs, s)
	ready := sess.ready
	h.mu.Unlock()
	defer h.leave(sess, s)
	if ready {
		onConnect() // otherwise the session calls it once listening
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-sess.done:
		return sess.err
	}
}

// leave detaches s, and closes the connection when nobody listens anymore.
func (h *hub) leave(sess *session, s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// A new slice, not an edit in place: deliver reads the old one
	// outside the lock.
	sess.subs = slices.DeleteFunc(slices.Clone(sess.subs), func(x *subscriber) bool { return x == s })
	if len(sess.subs) == 0 && h.sess == sess {
		h.sess = nil
		sess.cancel()
	}
}

func (h *hub) run(ctx context.Context, sess *session) {
	err := h.listen(ctx, sess)
	h.mu.Lock()
	if h.sess == sess {
		h.sess = nil
	}
	sess.err = err
	close(sess.done)
	h.mu.Unlock()
	sess.cancel()
}

// listen holds the connection (outside the pool, so the pool's budget
// stays for claims and completions) and hands out notifications.
func (h *hub) listen(ctx context.Context, sess *session) error {
	conn, err := pgx.ConnectConfig(ctx, h.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("listener connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{h.channel}.Sanitize()); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	h.mu.Lock()
	sess.ready = true
	subs := sess.subs
	h.mu.Unlock()
	for _, s := range subs {
		s.onConnect()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		h.deliver(sess, parseWake(n.Payload))
	}
}

// deliver wakes listeners for w: in turn until they had room for w.jobs,
// or all of them when the count is not known.
func (h *hub) deliver(sess *session, w wakeMsg) {
	h.mu.Lock()
	subs := sess.subs // never edited in place (Listen appends, leave replaces)
	start := sess.next
	sess.next++
	h.mu.Unlock()
	room := 0
	for i := range subs {
		room += subs[(start+i)%len(subs)].onInsert(w.queue)
		if w.jobs > 0 && room >= w.jobs {
			return
		}
	}
}

// wakeMsg is a notification's payload: "queue" when the number of new jobs
// is not known, "queue jobs" when it is.
type wakeMsg struct {
	queue string
	jobs  int
}

func (w wakeMsg) String() string {
	if w.jobs <= 0 {
		return w.queue
	}
	return w.queue + " " + strconv.Itoa(w.jobs)
}

// parseWake reads a payload. A count it cannot read counts as unknown.
func parseWake(payload string) wakeMsg {
	queue, jobs, ok := strings.Cut(payload, " ")
	if !ok {
		return wakeMsg{queue: payload}
	}
	n, err := strconv.Atoi(jobs)
	if err != nil {
		return wakeMsg{queue: queue}
	}
	return wakeMsg{queue: queue, jobs: n}
}
