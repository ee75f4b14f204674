package droverpg_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/testkit/testdb"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// fakeClient stands for one client behind a listener: it reports a fixed
// room and counts the wake-ups it gets.
type fakeClient struct {
	room      int
	connected chan struct{}
	marks     chan struct{} // one per "marker" notification heard

	mu    sync.Mutex
	woken int
	conns int
}

func (c *fakeClient) onConnect() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conns++; c.conns == 1 {
		close(c.connected)
	}
}

func (c *fakeClient) onInsert(queue string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch queue {
	case "q":
		c.woken++
	case "marker":
		c.marks <- struct{}{}
	}
	return c.room
}

func (c *fakeClient) counts() (woken, conns int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.woken, c.conns
}

// listenSetup is one driver with listeners that fakeClients stand behind.
type listenSetup struct {
	ctx     context.Context
	pool    *pgxpool.Pool
	d       *droverpg.Driver
	channel string
	clients []*fakeClient
	done    []chan error
	stop    []context.CancelFunc
	left    []bool // Listen returned
}

// TestListenersShareOneConnection checks that the listeners of one driver
// share one listening connection, and that a notification about n jobs
// wakes listeners in turn until they had room for n, while one with an
// unknown count wakes all of them.
func TestListenersShareOneConnection(t *testing.T) {
	start := func(t *testing.T, rooms ...int) *listenSetup {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		pool := testdb.NewPool(t)
		schema := testdb.NewSchema(t)
		d, err := droverpg.New(pool, droverpg.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		s := &listenSetup{ctx: ctx, pool: pool, d: d, channel: "drover_insert_" + schema}
		for _, room := range rooms {
			s.listen(room)
		}
		return s
	}
	// listeners counts the server's connections listening on the channel
	// (the last statement of a listening connection is its LISTEN).
	listeners := func(t *testing.T, s *listenSetup) int {
		t.Helper()
		var n int
		if err := s.pool.QueryRow(s.ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE query = 'LISTEN "' || $1 || '"' AND state = 'idle'`, s.channel).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// notify sends payloads and then a marker that every listener hears
	// (its count is unknown): notifications arrive in order, so once each
	// listener has heard the marker, the payloads before it were handled.
	notify := func(t *testing.T, s *listenSetup, payloads ...string) {
		t.Helper()
		for _, p := range append(payloads, "marker") {
			if _, err := s.pool.Exec(s.ctx, "SELECT pg_notify($1, $2)", s.channel, p); err != nil {
				t.Fatal(err)
			}
		}
		for i, c := range s.clients {
			if s.left[i] {
				continue
			}
			select {
			case <-c.marks:
			case <-time.After(10 * time.Second):
				t.Fatalf("listener %d never heard the marker", i)
			}
		}
	}
	// connections waits until n connections listen: a backend that lost
	// its client or was told to stop leaves pg_stat_activity shortly after.
	connections := func(t *testing.T, s *listenSetup, n int) {
		t.Helper()
		got := 0
		if !waitfor.Within(10*time.Second, func() bool { got = listeners(t, s); return got == n }) {
			t.Fatalf("%d listening connections, want %d", got, n)
		}
	}
	woken := func(s *listenSetup) []int {
		out := make([]int, len(s.clients))
		for i, c := range s.clients {
			out[i], _ = c.counts()
		}
		return out
	}

	t.Run("one connection", func(t *testing.T) {
		s := start(t, 10, 10, 10)
		if n := listeners(t, s); n != 1 {
			t.Fatalf("%d listening connections for 3 listeners, want 1", n)
		}
	})
	// Listeners are tried from one further on for each notification, so
	// the wake-ups each gets are exact.
	deliveries := []struct {
		name     string
		rooms    []int
		payloads []string
		want     []int
	}{
		{"a few jobs wake one listener with room, in turn", []int{10, 10, 10}, []string{"q 1", "q 1", "q 1", "q 3"}, []int{2, 1, 1}},
		{"more jobs than one listener has room for", []int{2, 2, 2}, []string{"q 3"}, []int{1, 1, 0}},
		{"listeners without room are passed over", []int{0, 0, 5}, []string{"q 1"}, []int{1, 1, 1}},
		{"an unknown count wakes every listener", []int{10, 10, 10}, []string{"q"}, []int{1, 1, 1}},
	}
	for _, tc := range deliveries {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, tc.rooms...)
			notify(t, s, tc.payloads...)
			if got := woken(s); !slices.Equal(got, tc.want) {
				t.Fatalf("wake-ups per listener %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("a lost connection ends every listen, and the next opens one", func(t *testing.T) {
		s := start(t, 10, 10)
		if _, err := s.pool.Exec(s.ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE query = 'LISTEN "' || $1 || '"'`, s.channel); err != nil {
			t.Fatal(err)
		}
		for i := range s.done {
			if err := s.wait(t, i); err == nil {
				t.Fatalf("listener %d returned no error after its connection was lost", i)
			}
		}
		c := s.listen(10)
		notify(t, s, "q 1")
		if n, _ := c.counts(); n != 1 {
			t.Fatalf("after reconnecting: woken %d times, want 1", n)
		}
		connections(t, s, 1)
	})
	t.Run("the last listener to leave closes the connection", func(t *testing.T) {
		s := start(t, 10, 10)
		s.stop[0]()
		s.wait(t, 0)
		connections(t, s, 1)
		notify(t, s, "q")
		if got := woken(s); got[1] != 1 {
			t.Fatalf("woken %v: the listener left was not woken", got)
		}
		s.stop[1]()
		s.wait(t, 1)
		connections(t, s, 0)
	})
}

// listen starts one more listener with the given room and waits until it
// is listening.
func (s *listenSetup) listen(room int) *fakeClient {
	c := &fakeClient{room: room, connected: make(chan struct{}), marks: make(chan struct{}, 10)}
	ctx, stop := context.WithCancel(s.ctx)
	done := make(chan error, 1)
	go func() { done <- s.d.NewListener().Listen(ctx, c.onConnect, c.onInsert) }()
	<-c.connected
	s.clients, s.done, s.stop = append(s.clients, c), append(s.done, done), append(s.stop, stop)
	s.left = append(s.left, false)
	return c
}

// wait returns what listener i's Listen returned.
func (s *listenSetup) wait(t *testing.T, i int) error {
	t.Helper()
	select {
	case err := <-s.done[i]:
		s.left[i] = true
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("listener %d: Listen did not return", i)
		return nil
	}
}
