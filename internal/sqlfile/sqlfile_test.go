package sqlfile

import (
	"strconv"
	"testing"

	"github.com/droverhq/drover/drovertype"
)

// TestParseQueriesSplicesErrorsKept: the number of errors a statement keeps
// is drovertype.ErrorsKept itself, so the SQL cannot drift from the Go constant.
func TestParseQueriesSplicesErrorsKept(t *testing.T) {
	q, err := ParseQueries("-- name: Q\nSELECT {errors_kept} FROM {schema}jobs;\n", "s.")
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT " + strconv.Itoa(drovertype.ErrorsKept) + " FROM s.jobs"; q["Q"] != want {
		t.Fatalf("query = %q, want %q", q["Q"], want)
	}
}

// TestParseQueriesFragments: a fragment is spliced wherever a statement
// (or a later fragment) names it, and is no statement itself; a statement
// cannot name a fragment defined after it.
func TestParseQueriesFragments(t *testing.T) {
	q, err := ParseQueries("-- fragment: cond\nstate = $1\n-- fragment: both\n{cond} AND queue = $2\n"+
		"-- name: Q\nSELECT 1 FROM {schema}jobs WHERE {both};\n", "s.")
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 1 || q["Q"] != "SELECT 1 FROM s.jobs WHERE state = $1 AND queue = $2" {
		t.Fatalf("queries %q", q)
	}
	if _, err := ParseQueries("-- name: Q\nSELECT {late};\n-- fragment: late\n1\n", "s."); err == nil {
		t.Fatal("a fragment used before its definition parsed")
	}
}
