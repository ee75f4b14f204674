package sqlstmt_test

import (
	"slices"
	"testing"

	"github.com/droverhq/drover/droverdriver/sqlstmt"
)

type pair struct {
	Name string
	N    int64
}

// TestSetTyped checks what a driver's statements test reads from its
// declarations: each one by name with its columns and the parameters of
// its zero value, and an error for a name declared twice or missing from
// queries.sql.
func TestSetTyped(t *testing.T) {
	t.Parallel()
	var set sqlstmt.Set
	sqlstmt.Add(&set, "Pair", 2, func(p *pair) []any { return []any{p.Name, p.N} })
	sqlstmt.Add(&set, "One", 1, sqlstmt.OneArg[string])
	sqlstmt.Add(&set, "None", 0, sqlstmt.NoArgs)
	sqlstmt.Add(&set, "One", 1, sqlstmt.OneArg[int64])
	sqlstmt.Add(&set, "Gone", 0, sqlstmt.NoArgs)

	if got := len(set.Entries()); got != 5 {
		t.Fatalf("%d entries, want the 5 added", got)
	}
	typed, errs := set.Typed(map[string]string{"Pair": "…", "One": "…", "None": "…"})
	var msgs []string
	for _, err := range errs {
		msgs = append(msgs, err.Error())
	}
	want := []string{"stmt.go declares One twice", "stmt.go declares Gone, which queries.sql does not have"}
	if !slices.Equal(msgs, want) {
		t.Fatalf("errors %q, want %q", msgs, want)
	}
	if e := typed["Pair"]; e.Cols != 2 || !slices.Equal(e.ZeroArgs(), []any{"", int64(0)}) {
		t.Fatalf("Pair: %d columns, zero args %#v", e.Cols, e.ZeroArgs())
	}
	if args := typed["None"].ZeroArgs(); args != nil {
		t.Fatalf("None takes %#v", args)
	}
	// The later declaration of a name is the one kept.
	if args := typed["One"].ZeroArgs(); len(args) != 1 || args[0] != int64(0) {
		t.Fatalf("One takes %#v", args)
	}
}
