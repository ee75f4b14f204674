package droverdriver

import (
	"strconv"
	"strings"
	"testing"
)

// TestLeaseTokenText: a token survives its text form, and any other text,
// the empty one included, is refused.
func TestLeaseTokenText(t *testing.T) {
	a, b := NewLeaseToken(), NewLeaseToken()
	if a.IsZero() || a == b {
		t.Fatalf("tokens %s and %s: want two distinct non-zero tokens", a, b)
	}
	text, _ := a.MarshalText()
	var back LeaseToken
	if err := back.UnmarshalText(text); err != nil || back != a || len(text) != 32 {
		t.Fatalf("round trip of %s: %s, %v", text, back, err)
	}
	// The empty text, like any other that is not 32 lower-case hex digits,
	// is malformed: a request without a token is refused, not taken for
	// the zero token.
	if err := back.UnmarshalText(nil); err == nil {
		t.Fatalf("empty text decoded as %s, want an error", back)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("g", 32), strings.Repeat("0", 33), strings.ToUpper(string(text))} {
		if _, err := ParseLeaseToken(bad); err == nil {
			t.Errorf("ParseLeaseToken(%q) accepted", bad)
		}
	}
}

// TestParseQueriesSplicesErrorsKept: the number of errors a statement keeps
// is ErrorsKept itself, so the SQL cannot drift from the Go constant.
func TestParseQueriesSplicesErrorsKept(t *testing.T) {
	q, err := ParseQueries("-- name: Q\nSELECT {errors_kept} FROM {schema}jobs;\n", "s.")
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT " + strconv.Itoa(ErrorsKept) + " FROM s.jobs"; q["Q"] != want {
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
