package droverfleet

import (
	"context"
	"sync"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/outage"
)

// listener listens on every shard at once. Each shard's listener runs in
// a goroutine of its own and reconnects by itself, with a backoff, so
// that a shard that is down neither stops the wake-ups of the others nor
// makes the caller reconnect to all of them. Callbacks are serialised:
// the caller wrote them for one connection.
type listener struct {
	c     *core
	ls    []droverdriver.Listener
	which []int
}

// Listen reports the fleet connected once every shard's listener has had
// its first try, so that a caller that acts on the report (a test that
// publishes, a notifier that polls once) misses no shard that was up;
// a shard down then counts as tried, and each later connection of a
// shard (a reconnect, or a shard that came up) is reported as it comes.
func (l *listener) Listen(ctx context.Context, onConnect func(), onInsert func(queue string) (room int)) error {
	var mu sync.Mutex
	untried, anyUp := len(l.ls), false
	tried := func(up bool) {
		mu.Lock()
		defer mu.Unlock()
		if untried == 0 {
			if up {
				onConnect()
			}
			return
		}
		untried--
		anyUp = anyUp || up
		if untried == 0 && anyUp {
			onConnect()
		}
	}
	insert := func(queue string) int {
		mu.Lock()
		defer mu.Unlock()
		return onInsert(queue)
	}
	var wg sync.WaitGroup
	for k, sl := range l.ls {
		wg.Go(func() {
			rep := &outage.Reporter{Logger: l.c.log, What: "listening on a shard (polling covers it)"}
			backoff := 100 * time.Millisecond
			first := true
			for {
				connected := false
				err := sl.Listen(ctx, func() {
					connected = true
					rep.OK()
					backoff = 100 * time.Millisecond
					first = false
					tried(true)
				}, insert)
				if ctx.Err() != nil {
					return
				}
				if first {
					first = false
					tried(false)
				}
				rep.Failed(err, "shard", l.which[k], "connected", connected)
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 10*time.Second)
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}
