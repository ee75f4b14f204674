package droversqlite

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// fenced returns results with the lease token each job holds in the store
// right now, for tests about what JobFinish does with a result rather than
// about tokens (lease_test.go covers those): a result for a job that holds
// none keeps the zero token. It reads through the reader pool, so that it
// also works while a caller's transaction holds the writer.
func fenced(t testing.TB, d *Driver, results []droverdriver.Result) []droverdriver.Result {
	t.Helper()
	out := make([]droverdriver.Result, len(results))
	for i, r := range results {
		r.LeaseToken = storedToken(t, d, r.ID)
		out[i] = r
	}
	return out
}

// storedToken reads the lease token job id holds, the zero token if none.
func storedToken(t testing.TB, d *Driver, id int64) drovertype.LeaseToken {
	t.Helper()
	var stored []byte
	err := d.reader.QueryRowContext(context.Background(), `SELECT lease_token FROM drover_jobs WHERE id = ?`, id).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && stored == nil) {
		return drovertype.LeaseToken{}
	}
	if err != nil {
		t.Fatalf("read lease token of job %d: %v", id, err)
	}
	var tok drovertype.LeaseToken
	if len(stored) != len(tok) {
		t.Fatalf("job %d stores a lease token of %d bytes", id, len(stored))
	}
	copy(tok[:], stored)
	return tok
}
