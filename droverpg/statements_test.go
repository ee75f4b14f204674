package droverpg

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/sqlfile"
	"github.com/droverhq/drover/internal/testkit/sqlcheck"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// unpreparable lists the statements of queries.sql that cannot be
// prepared on their own against the migrated schema, with the reason. The
// test fails if one of them prepares after all, so the list stays true.
var unpreparable = map[string]string{}

// TestStatementsPrepare prepares every statement the driver loaded
// (queries.sql with the schema substituted exactly as New does, plus the
// variants New derives, such as JobClaimAfter) against a freshly migrated
// schema. PostgreSQL parses and analyses a statement when it is prepared:
// every table, column, operator and parameter type must resolve, so a
// statement that names a column a migration dropped, or a parameter whose
// type cannot be inferred, fails here by name rather than in the one
// conformance test that happens to run it.
//
// It also checks each statement against its typed entry (stmt.go): every
// statement has exactly one, and PostgreSQL's description of it agrees
// with the entry: as many parameters as the entry's args gives, each of a
// type pgx can encode the argument's Go type into, and as many result
// columns as the entry says its rows are scanned into.
func TestStatementsPrepare(t *testing.T) {
	ctx := context.Background()
	d := migrated(t)
	conn, err := d.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()

	names := make([]string, 0, len(d.exec.q))
	for name := range d.exec.q {
		names = append(names, name)
	}
	sort.Strings(names)
	for name := range unpreparable {
		if _, ok := d.exec.q[name]; !ok {
			t.Errorf("unpreparable lists %s, which queries.sql no longer has", name)
		}
	}
	typed, errs := statements.Typed(d.exec.q)
	for _, err := range errs {
		t.Error(err)
	}
	types := conn.Conn().TypeMap()
	for _, name := range names {
		// The unnamed statement: described (parameter and result types)
		// but not kept, so nothing accumulates on the connection.
		sd, err := conn.Conn().PgConn().Prepare(ctx, "", d.exec.q[name], nil)
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
		if !ok {
			t.Errorf("%s has no typed entry in stmt.go", name)
			continue
		}
		if err != nil {
			continue
		}
		args := s.ZeroArgs()
		if len(args) != len(sd.ParamOIDs) {
			t.Errorf("%s takes %d parameters, but its typed entry gives %d", name, len(sd.ParamOIDs), len(args))
		} else {
			for i, oid := range sd.ParamOIDs {
				if types.PlanEncode(oid, types.FormatCodeForOID(oid), args[i]) == nil {
					t.Errorf("%s: $%d is of type OID %d, which pgx cannot encode a %T into", name, i+1, oid, args[i])
				}
			}
		}
		if len(sd.Fields) != s.Cols {
			t.Errorf("%s returns %d columns, but its typed entry scans %d", name, len(sd.Fields), s.Cols)
		}
	}
	if len(names) < 40 {
		t.Errorf("only %d statements loaded; is queries.sql parsed?", len(names))
	}
	t.Logf("prepared %d statements", len(names)-len(unpreparable))
}

// TestStatementEnums checks that the numbers queries.sql writes for Go
// enums (outcomes, flow bits, final-state bits, state names) agree with
// droverdriver's constants.
func TestStatementEnums(t *testing.T) {
	q, err := sqlfile.ParseQueries(queriesSQL, `"drover".`)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range sqlcheck.Enums(q, sqlcheck.Extras{}) {
		t.Error(p)
	}
}

// migrated returns a driver on a schema of its own, migrated to the
// latest version, closed when the test ends.
func migrated(t *testing.T) *Driver {
	t.Helper()
	d, err := New(testdb.NewPool(t), WithSchema(testdb.NewSchema(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if _, _, err := droverdriver.MigrateUpTo(context.Background(), d, math.MaxInt); err != nil {
		t.Fatal(err)
	}
	return d
}
