package server

import (
	"sync"

	"github.com/droverhq/drover/droverdriver"
)

// waiter ends long polls early: a claim that found nothing waits on its
// queue's channel, which is closed (waking every waiter at once) when the
// store announces new jobs in that queue.
type waiter struct {
	mu    sync.Mutex
	chans map[string]chan struct{}
}

func newWaiter() *waiter {
	return &waiter{chans: map[string]chan struct{}{}}
}

// wait returns a channel closed at the next wake-up of queue. Take it
// before claiming, so that jobs inserted between the claim and the wait
// are not missed.
func (w *waiter) wait(queue string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch, ok := w.chans[queue]
	if !ok {
		ch = make(chan struct{})
		w.chans[queue] = ch
	}
	return ch
}

// wake ends the long polls waiting on queue. It reports room for one job
// when there were any, since how many their workers take is not known
// here; listeners after it in the process are then woken too. A notice
// that the queue's settings changed wakes them as well: a queue just
// resumed has jobs to claim.
func (w *waiter) wake(queue string) int {
	if q, ok := droverdriver.SettingsQueue(queue); ok {
		queue = q
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	ch, ok := w.chans[queue]
	if !ok {
		return 0
	}
	close(ch)
	delete(w.chans, queue)
	return 1
}

func (w *waiter) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for q, ch := range w.chans {
		close(ch)
		delete(w.chans, q)
	}
}
