// Package sqlstmt is the typed-statement machinery the bundled drivers
// share. A driver declares each statement of its queries.sql once, with a
// Go type P for its parameters and a function that lists them in the
// statement's placeholder order, so that a call site names each argument
// instead of counting positions and the compiler checks their types. The
// driver keeps what depends on its database: how a statement runs,
// queues in a batch or is prepared. What this package keeps is what the
// drivers' statements tests need to hold every declaration to the
// migrated schema (Set), and the small pieces every declaration uses
// (NoArgs, OneArg, Bound).
//
// It is a package of its own, beside droverdriver rather than in it, so
// that the driver contract does not grow by machinery no caller of a
// driver sees, and so that a driver outside this module can use it too.
package sqlstmt

import "fmt"

// Set is the list of a driver's typed statements, in the order the
// driver declares them: its statements test walks it to check each
// declaration against the statement the database prepares.
type Set struct {
	list []Entry
}

// Entry is one declared statement as the statements test sees it: its
// name in queries.sql, how many columns the code that reads its rows
// scans, and the parameters of P's zero value, whose count and Go types
// the test checks against the prepared statement.
type Entry struct {
	Name string
	Cols int
	zero func() []any
}

// ZeroArgs returns the parameters of the zero value of the statement's
// parameter type, in placeholder order.
func (e Entry) ZeroArgs() []any { return e.zero() }

// Add records the statement name, whose parameters args lists from a *P
// and whose rows are read as cols columns.
func Add[P any](s *Set, name string, cols int, args func(*P) []any) {
	s.list = append(s.list, Entry{Name: name, Cols: cols, zero: func() []any {
		var p P
		return args(&p)
	}})
}

// Entries returns the statements in the order they were added.
func (s *Set) Entries() []Entry { return s.list }

// Typed returns the declared statements by name, and an error for each
// one declared twice and each one queries (the driver's loaded
// statements, by name) does not have: a declaration must match exactly
// one statement.
func (s *Set) Typed(queries map[string]string) (map[string]Entry, []error) {
	typed := make(map[string]Entry, len(s.list))
	var errs []error
	for _, e := range s.list {
		if _, dup := typed[e.Name]; dup {
			errs = append(errs, fmt.Errorf("stmt.go declares %s twice", e.Name))
		}
		typed[e.Name] = e
		if _, ok := queries[e.Name]; !ok {
			errs = append(errs, fmt.Errorf("stmt.go declares %s, which queries.sql does not have", e.Name))
		}
	}
	return typed, errs
}

// NoArgs are the parameters of a statement that takes none.
func NoArgs(*struct{}) []any { return nil }

// OneArg are the parameters of a statement that takes one, of type T.
func OneArg[T any](p *T) []any { return []any{*p} }

// Bound is a statement with its arguments, for code that picks one of
// several statements and runs it later.
type Bound struct {
	Name string
	Args []any
}
