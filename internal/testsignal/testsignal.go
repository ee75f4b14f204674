// Package testsignal lets a test wait for a background service to have
// done a unit of work (a flush written, a claim made, a maintenance pass
// run) instead of polling the store for its effect. A service holds a
// Signal and sends on it after each unit; the signal is initialised only
// by tests, so in production a send is a nil check and nothing more.
//
// A signal says "the service did something: look again", not "here is
// everything it did": a waiting test checks its condition after each
// signal (Until). That is why a full buffer may drop a send without losing
// a wake-up: a send is dropped only while older ones wait unread, and the
// test reads one of those after the dropped unit's work is done, so its
// next check sees that work.
package testsignal

import (
	"reflect"
	"time"
)

// buffer is how many sends a signal keeps for a test that has not read
// them yet; more are dropped rather than block the service.
const buffer = 1000

// Timeout is how long a wait lasts before it fails the test: waitfor's
// (internal/testkit/waitfor), far above any wait a passing test makes, so
// that only a hung test reaches it (TestTimeoutIsWaitfors). It is its own
// constant because this package is part of the runtime, which never
// imports the test kit.
const Timeout = time.Minute

// TB is what a wait needs of its test (a *testing.T), declared here so
// that the services that send signals do not link the testing package.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// Signal carries a service's units of work to a test, each with a value
// (how many jobs a flush wrote, a pass moved). The zero value is off:
// sends are skipped until Init.
type Signal[T any] struct {
	ch chan T
}

// Init turns the signal on. It is for tests only, before the service that
// sends on the signal starts; a signal already on stays as it is, so that
// copies handed to services keep the channel they share.
func (s *Signal[T]) Init() {
	if s.ch == nil {
		s.ch = make(chan T, buffer)
	}
}

// Send tells a waiting test that the service did a unit of work. It never
// blocks: an uninitialised signal skips it and a full buffer drops it (see
// the package comment for why nothing is lost).
func (s *Signal[T]) Send(v T) {
	if s.ch == nil {
		return
	}
	select {
	case s.ch <- v:
	default:
	}
}

// Wait returns the value of the next unit of work, failing t when none
// comes within Timeout.
func (s *Signal[T]) Wait(t TB) T {
	t.Helper()
	s.mustBeOn(t)
	select {
	case v := <-s.ch:
		return v
	case <-timeout():
		t.Fatalf("timed out after %s waiting for a test signal", Timeout)
		panic("unreachable")
	}
}

func (s *Signal[T]) mustBeOn(t TB) {
	t.Helper()
	if s.ch == nil {
		t.Fatal("testsignal: waiting on a signal that was never initialised")
	}
}

// selectCase is how Until waits on signals of different value types at
// once.
func (s *Signal[T]) selectCase() reflect.SelectCase {
	return reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(s.ch)}
}

// Source is a signal Until can wait on, whatever its value type.
type Source interface {
	selectCase() reflect.SelectCase
	mustBeOn(t TB)
}

// Until checks cond, and again after the services signal work, until it
// holds; it fails t with what it waited for when the services do nothing
// that makes it hold within Timeout. cond observes the effect
// (usually a read of the store); the signals only say when to look again,
// so that a test looks once per unit of the services' work rather than on
// a timer. The units signalled while cond ran are taken together, for one
// look after them: a busy service costs the test one check at a time, not
// one per unit.
func Until(t TB, what string, cond func() bool, sources ...Source) {
	t.Helper()
	if len(sources) == 0 {
		t.Fatal("testsignal.Until: no signal to wait on")
	}
	cases := make([]reflect.SelectCase, 0, len(sources)+1)
	for _, s := range sources {
		s.mustBeOn(t)
		cases = append(cases, s.selectCase())
	}
	deadline := len(cases)
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timeout())})
	// drain has a default case: it takes what is already signalled, and
	// no more.
	drain := append(cases[:deadline:deadline], reflect.SelectCase{Dir: reflect.SelectDefault})
	for !cond() {
		if chosen, _, _ := reflect.Select(cases); chosen == deadline {
			t.Fatalf("timed out after %s waiting for %s", Timeout, what)
		}
		for {
			if chosen, _, _ := reflect.Select(drain); chosen == deadline {
				break
			}
		}
	}
}

// timeout is the deadline of one wait.
func timeout() <-chan time.Time { return time.After(Timeout) }
