//go:build linux || darwin || freebsd

package droversqlite

import (
	"errors"
	"os"
	"syscall"
)

// gateFile is the lock file beside a database: a writer announced as
// starved holds a shared flock on it; a probe for announcements takes an
// exclusive one without waiting and lets go at once. flock locks belong to
// an open file, so drivers that opened the file each hold their own, in
// one process or several.
type gateFile struct{ f *os.File }

// openGate opens (creating it) the lock file of the database at path, or
// returns nil when it cannot: writers then take turns through SQLite's
// busy handler alone.
func openGate(path string) *writerGate {
	f, err := os.OpenFile(path+"-drover-writers", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil
	}
	return &writerGate{lock: gateFile{f}}
}

func (g *writerGate) close() error {
	if g == nil {
		return nil
	}
	return g.lock.f.Close()
}

// free reports that no writer is announced.
func (l gateFile) free() bool {
	fd := int(l.f.Fd())
	if flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	_ = flock(fd, syscall.LOCK_UN)
	return true
}

func (l gateFile) announce() error { return flock(int(l.f.Fd()), syscall.LOCK_SH) }

func (l gateFile) withdraw() { _ = flock(int(l.f.Fd()), syscall.LOCK_UN) }

// flock is syscall.Flock, retried when a signal interrupts it.
func flock(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
