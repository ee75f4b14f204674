package droversqlite

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/sqlfile"
	"github.com/droverhq/drover/internal/testkit/sqlcheck"
)

// unpreparable lists the statements of queries.sql that cannot be
// prepared on their own against the migrated schema, with the reason. The
// test fails if one of them prepares after all, so the list stays true.
var unpreparable = map[string]string{
	// Fragments that insertQueries joins into JobInsertN statements, which
	// are prepared instead.
	"JobInsertHead":       "fragment: the head of the JobInsertN statements (insertQueries)",
	"JobInsertRow":        "fragment: one VALUES row of the JobInsertN statements (insertQueries)",
	"JobInsertRoutedHead": "fragment: the head of the JobInsertRoutedN statements (insertQueries)",
	"JobInsertRoutedRow":  "fragment: one VALUES row of the JobInsertRoutedN statements (insertQueries)",
}

// TestStatementsPrepare prepares every statement the driver loaded
// (queries.sql with the table prefix substituted exactly as New does, plus
// the variants it derives: JobClaimAfter and the JobInsertN statements)
// against a freshly migrated file, on the writer. SQLite compiles a
// statement when it is prepared: every table and column must resolve, so
// a statement naming a column a migration dropped fails here by name.
//
// It also checks each statement against its typed entry (stmt.go): every
// statement has exactly one (JobInsertN: N rows of JobInsertRow), its
// highest ?N (or number of bare ?) is the number of values the entry's
// args gives, and the rows SQLite compiles it to (the ResultRow of its
// EXPLAIN) have as many columns as the entry says its rows are scanned
// into.
func TestStatementsPrepare(t *testing.T) {
	ctx := context.Background()
	for _, schema := range []string{DefaultSchema, "acme"} {
		t.Run(schema, func(t *testing.T) {
			d := open(t, filepath.Join(t.TempDir(), "statements.db"), WithSchema(schema))
			migrate(t, d)
			// The tables the migrations made, by their unprefixed names: a
			// statement must reach them through the prefix it was given.
			var tables []string
			rows, err := d.writer.QueryContext(ctx, `SELECT substr(name, ?1) FROM sqlite_master WHERE type = 'table' AND name LIKE ?2 ESCAPE '\'`,
				len(schema)+2, schema+`\_%`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var tbl string
				if err := rows.Scan(&tbl); err != nil {
					t.Fatal(err)
				}
				tables = append(tables, tbl)
			}
			rows.Close()
			if err := rows.Err(); err != nil || len(tables) < 5 {
				t.Fatalf("tables %v, %v", tables, err)
			}
			typed, errs := statements.Typed(d.q)
			for _, err := range errs {
				t.Error(err)
			}
			names := make([]string, 0, len(d.q))
			for name := range d.q {
				names = append(names, name)
			}
			sort.Strings(names)
			for name := range unpreparable {
				if _, ok := d.q[name]; !ok {
					t.Errorf("unpreparable lists %s, which queries.sql no longer has", name)
				}
			}
			for _, name := range names {
				if strings.Contains(d.q[name], "{schema}") {
					t.Errorf("%s keeps a {schema} placeholder", name)
				}
				for _, tbl := range tables {
					if schema != DefaultSchema && strings.Contains(d.q[name], DefaultSchema+"_"+tbl) {
						t.Errorf("%s names table %s_%s under prefix %s_", name, DefaultSchema, tbl, schema)
					}
				}
				st, err := d.writer.PrepareContext(ctx, d.q[name])
				if err == nil {
					st.Close()
				}
				why, skip := unpreparable[name]
				switch {
				case skip && err == nil:
					t.Errorf("%s is listed as unpreparable (%s) but prepares: take it off the list", name, why)
				case skip:
					t.Logf("%s not prepared: %s (%v)", name, why, err)
				case err != nil:
					t.Errorf("prepare %s: %v", name, err)
				}
				s, ok := typed[name]
				rows := 1
				if row, n, derived := insertSize(name); derived {
					s, ok = typed[row.name]
					rows = n
				}
				if !ok {
					t.Errorf("%s has no typed entry in stmt.go", name)
					continue
				}
				if got, want := paramCount(t, name, d.q[name]), rows*len(s.ZeroArgs()); got != want {
					t.Errorf("%s takes %d parameters, but its typed entry gives %d", name, got, want)
				}
				if skip || err != nil {
					continue
				}
				var args []any
				for range rows {
					args = append(args, s.ZeroArgs()...)
				}
				if got, want := resultCols(t, d, name, args), s.Cols; got != want {
					t.Errorf("%s returns %d columns, but its typed entry scans %d", name, got, want)
				}
			}
			if len(names) < 60 {
				t.Errorf("only %d statements loaded; is queries.sql parsed?", len(names))
			}
			t.Logf("prepared %d statements", len(names)-len(unpreparable))
		})
	}
}

// TestStatementEnums checks that the numbers queries.sql writes for Go
// enums (outcomes, flow bits, final-state bits, state names) agree with
// droverdriver's constants, and those of SQLite's result packing with
// sqlConstants (outcomeForget, attemptShift, …).
func TestStatementEnums(t *testing.T) {
	q, err := sqlfile.ParseQueries(queriesSQL, "drover_")
	if err != nil {
		t.Fatal(err)
	}
	x := sqlcheck.Extras{
		Outcomes:  map[int]drovertype.JobState{outcomeForget: drovertype.JobStateCompleted},
		Constants: sqlConstants,
		// The operators that unpack a packed result: its attempt, settle
		// bit and outcome.
		Packed: `\b(?:packed|value)\s*(?:>>|&)|\)\s*>>`,
	}
	for _, p := range sqlcheck.Enums(q, x) {
		t.Error(p)
	}
}

// TestResultPacking checks the packed result of JobFinishMove and its
// companions both ways: the SQL unpacks attempt and outcome with the
// shift and mask of sqlConstants (TestStatementEnums checks the tags'
// values), and appendResults packs them so, whatever the result's flow
// (which the fence's parameter covers now).
func TestResultPacking(t *testing.T) {
	q, err := sqlfile.ParseQueries(queriesSQL, "drover_")
	if err != nil {
		t.Fatal(err)
	}
	if int(droverdriver.OutcomeReleased) > outcomeMask || outcomeForget > outcomeMask || outcomeForget <= int(droverdriver.OutcomeReleased) {
		t.Fatalf("outcomes 1-%d and outcomeForget %d must fit the mask %d without clashing", droverdriver.OutcomeReleased, outcomeForget, outcomeMask)
	}
	for name, wants := range map[string][]string{
		"JobFinishMove":   {"packed >> 4 /*attemptShift*/ AS attempt", "packed & 7 /*outcomeMask*/ AS outcome"},
		"JobFinishWait":   {"packed >> 4 /*attemptShift*/ AS attempt", "packed & 7 /*outcomeMask*/ AS outcome"},
		"JobFinishForget": {"value >> 4 /*attemptShift*/ AS attempt", "value & 7 /*outcomeMask*/ = 6 /*outcomeForget*/"},
		"JobFinishFenced": {") >> 4 /*attemptShift*/ AS attempt"},
	} {
		for _, w := range wants {
			if !strings.Contains(q[name], w) {
				t.Errorf("%s does not unpack with %q (shift %d, outcome mask %d, forget %d)",
					name, w, attemptShift, outcomeMask, outcomeForget)
			}
		}
	}
	results := []droverdriver.Result{
		{ID: 1, Attempt: 3, Outcome: droverdriver.OutcomeCompleted},
		{ID: 2, Attempt: 1, Outcome: droverdriver.OutcomeRetry, Flow: droverdriver.FlowBatchMember},
		{ID: 3, Attempt: 7, Outcome: droverdriver.OutcomeDiscarded, Flow: droverdriver.FlowUnique},
		{ID: 4, Attempt: 2, Outcome: droverdriver.OutcomeCancelled},
		{ID: 5, Attempt: 9, Outcome: droverdriver.OutcomeReleased, Flow: droverdriver.FlowReleaseOnParentFailure},
		{ID: 6, Attempt: 1, Outcome: droverdriver.OutcomeCompleted, Forget: true},
	}
	b, _ := appendResults(nil, results)
	var packed map[string]json.RawMessage
	if err := json.Unmarshal(b, &packed); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	for _, r := range results {
		key := strings.Trim(string(appendFenceKey(nil, r.ID, r.LeaseToken)), `":`)
		raw := packed[key]
		var v int64
		if err := json.Unmarshal(raw, &v); err != nil {
			var arr []json.RawMessage
			if err := json.Unmarshal(raw, &arr); err != nil || len(arr) == 0 || json.Unmarshal(arr[0], &v) != nil {
				t.Fatalf("result %d packed as %s", r.ID, raw)
			}
		}
		wantOutcome := int64(r.Outcome)
		if r.Forget {
			wantOutcome = outcomeForget
		}
		if v>>attemptShift != int64(r.Attempt) || v&(1<<attemptShift-1) != wantOutcome {
			t.Errorf("result %+v packed as %d: attempt %d, outcome %d", r, v, v>>attemptShift, v&(1<<attemptShift-1))
		}
	}
}

// insertSize reports whether name is one of the multi-row statements
// insertQueries derives (JobInsertN, JobInsertRoutedN), with its row
// template and its N.
func insertSize(name string) (*stmt[insertRow], int, bool) {
	for _, f := range insertFamilies {
		for _, n := range insertSizes {
			if name == f.name(n) {
				return f.row, n, true
			}
		}
	}
	return nil, 0, false
}

var (
	sqlComments    = regexp.MustCompile(`--[^\n]*|/\*(?s:.*?)\*/`)
	numberedParam  = regexp.MustCompile(`\?(\d+)`)
	anonymousParam = regexp.MustCompile(`\?(?:[^\d]|$)`)
)

// paramCount is the number of values a statement binds: its highest ?N,
// or the number of its bare ?s. A statement mixing both is reported.
func paramCount(t *testing.T, name, text string) int {
	t.Helper()
	code := sqlComments.ReplaceAllString(text, "")
	most := 0
	for _, m := range numberedParam.FindAllStringSubmatch(code, -1) {
		n, _ := strconv.Atoi(m[1])
		most = max(most, n)
	}
	bare := len(anonymousParam.FindAllString(code, -1))
	if most > 0 && bare > 0 {
		t.Errorf("%s mixes ?N with bare ?", name)
	}
	return most + bare
}

// resultCols is the number of columns of the rows a statement returns: the
// width of the ResultRow instructions SQLite compiles it to (EXPLAIN
// compiles without running, with args bound), 0 for none.
func resultCols(t *testing.T, d *Driver, name string, args []any) int {
	t.Helper()
	rows, err := d.writer.QueryContext(context.Background(), "EXPLAIN "+d.q[name], args...)
	if err != nil {
		t.Errorf("explain %s: %v", name, err)
		return -1
	}
	defer rows.Close()
	cols := 0
	for rows.Next() {
		var addr, p1, p2, p3 int64
		var opcode string
		var p4, p5, comment any
		if err := rows.Scan(&addr, &opcode, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
			t.Errorf("explain %s: %v", name, err)
			return -1
		}
		if opcode == "ResultRow" {
			if cols != 0 && int(p2) != cols {
				t.Errorf("%s returns rows of %d and of %d columns", name, cols, p2)
			}
			cols = int(p2)
		}
	}
	if err := rows.Err(); err != nil {
		t.Errorf("explain %s: %v", name, err)
	}
	return cols
}
