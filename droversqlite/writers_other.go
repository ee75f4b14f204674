//go:build !(linux || darwin || freebsd)

package droversqlite

// gateFile has no flock to build on here: openGate returns no gate, and
// writers take turns through SQLite's busy handler alone.
type gateFile struct{}

func openGate(string) *writerGate { return nil }

func (g *writerGate) close() error { return nil }

func (gateFile) free() bool      { return true }
func (gateFile) announce() error { return nil }
func (gateFile) withdraw()       {}
