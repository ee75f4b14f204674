package droversqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/driver"
)

// executor runs the driver's statements on the driver's own connections or,
// when tx is set, inside a transaction the caller owns.
type executor struct {
	*shared
	tx *sql.Tx
}

// writeTx runs fn in a write transaction: the caller's one when there is
// one, else a new transaction on the writer, which begins IMMEDIATE (see
// Open) and so holds the file's write lock from its first statement.
func (e *executor) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if e.tx != nil {
		return fn(e.tx)
	}
	if err := e.ready(ctx); err != nil {
		return err
	}
	tx, err := e.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// prep returns the named statement for one call. In the caller's
// transaction it is prepared there (the transaction may come from any pool);
// in a transaction of the driver's own, the statement prepared once on the
// writer is bound to it; otherwise it is the one prepared once on db.
func (e *executor) prep(ctx context.Context, tx *sql.Tx, db *sql.DB, name string) (*sql.Stmt, error) {
	if e.tx != nil {
		return e.tx.PrepareContext(ctx, e.q[name])
	}
	if tx != nil {
		st, err := e.stmt(e.writer, name) // writeTx made it ready
		if err != nil {
			return nil, err
		}
		return tx.StmtContext(ctx, st), nil
	}
	if err := e.ready(ctx); err != nil {
		return nil, err
	}
	return e.stmt(db, name)
}

// done closes a statement prep made in the caller's transaction; the
// driver's own statements stay prepared.
func (e *executor) done(st *sql.Stmt) {
	if e.tx != nil {
		st.Close()
	}
}

func (e *executor) exec(ctx context.Context, tx *sql.Tx, name string, args ...any) (sql.Result, error) {
	st, err := e.prep(ctx, tx, e.writer, name)
	if err != nil {
		return nil, err
	}
	defer e.done(st)
	return st.ExecContext(ctx, args...)
}

// query runs a statement that returns rows and hands each row to scan.
func (e *executor) query(ctx context.Context, tx *sql.Tx, db *sql.DB, name string, scan func(*sql.Rows) error, args ...any) error {
	st, err := e.prep(ctx, tx, db, name)
	if err != nil {
		return err
	}
	defer e.done(st)
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

// bufPool recycles the buffers that batch parameters are encoded into.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > 16<<20 {
		return // a one-off huge batch should not stay pinned in the pool
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// micros is t as stored: unix microseconds, the precision PostgreSQL keeps.
func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// insertChunk bounds the jobs of one INSERT statement, so that one huge
// InsertMany does not build a parameter of hundreds of megabytes.
const insertChunk = 10000

func (e *executor) JobInsertMany(ctx context.Context, jobs []driver.InsertParams) ([]int64, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	now := time.Now()
	nowUS := micros(now)
	var wake []string
	for i := range jobs {
		j := &jobs[i]
		if (j.RunAt.IsZero() || !j.RunAt.After(now)) && !slices.Contains(wake, j.Queue) {
			wake = append(wake, j.Queue)
		}
	}
	ids := make([]int64, 0, len(jobs))
	buf := getBuf()
	defer putBuf(buf)
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
		for start := 0; start < len(jobs); start += insertChunk {
			chunk := jobs[start:min(start+insertChunk, len(jobs))]
			*buf = appendInsertBatch((*buf)[:0], chunk)
			first := len(ids)
			err := e.query(ctx, tx, e.writer, "JobInsertMany", func(rows *sql.Rows) error {
				var id int64
				if err := rows.Scan(&id); err != nil {
					return err
				}
				ids = append(ids, id)
				return nil
			}, string(*buf), nowUS)
			if err != nil {
				return err
			}
			// One writer hands out AUTOINCREMENT IDs in insertion order,
			// which is input order, so ascending IDs are input order
			// whatever order RETURNING reports them in.
			slices.Sort(ids[first:])
		}
		return nil
	})
	if err != nil {
		return nil, e.wrap("insert jobs", err)
	}
	if len(ids) != len(jobs) {
		return nil, fmt.Errorf("insert jobs: stored %d of %d jobs", len(ids), len(jobs))
	}
	notify(e.hubKey, wake)
	return ids, nil
}

// appendInsertBatch encodes jobs as the JSON array JobInsertMany unpacks:
// one [queue, kind, args, metadata, tags, priority, max_attempts, run_at,
// timeout_ms] row per job. Args and metadata travel as JSON strings so that
// SQLite stores their text exactly as encoded; tags travel as an array.
func appendInsertBatch(b []byte, jobs []driver.InsertParams) []byte {
	b = append(b, '[')
	for i := range jobs {
		j := &jobs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendString(b, j.Queue)
		b = append(b, ',')
		b = appendString(b, j.Kind)
		b = append(b, ',')
		b = appendString(b, j.Args)
		b = append(b, ',')
		if len(j.Metadata) == 0 {
			b = append(b, `"{}"`...)
		} else {
			b = appendString(b, j.Metadata)
		}
		b = append(b, ',', '"')
		b = appendTags(b, j.Tags, true)
		b = append(b, '"', ',')
		b = strconv.AppendInt(b, int64(j.Priority), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(j.MaxAttempts), 10)
		b = append(b, ',')
		if j.RunAt.IsZero() {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, micros(j.RunAt), 10)
		}
		b = append(b, ',')
		b = strconv.AppendInt(b, j.Timeout.Milliseconds(), 10)
		b = append(b, ']')
	}
	return append(b, ']')
}

// appendTags appends tags as a JSON array of strings, escaped once more when
// nested inside a JSON string.
func appendTags(b []byte, tags []string, nested bool) []byte {
	b = append(b, '[')
	for i, t := range tags {
		if i > 0 {
			b = append(b, ',')
		}
		if nested {
			// The quotes of the inner string are themselves escaped.
			inner := appendString(nil, t)
			b = appendEscaped(b, inner)
		} else {
			b = appendString(b, t)
		}
	}
	return append(b, ']')
}

// appendString appends s as a quoted JSON string.
func appendString[T string | []byte](b []byte, s T) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped appends s with the characters JSON strings cannot hold
// raw escaped. Bytes from 0x80 up pass through: SQLite reads them as UTF-8.
func appendEscaped[T string | []byte](b []byte, s T) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	return append(b, s[start:]...)
}

func (e *executor) JobClaim(ctx context.Context, p driver.ClaimParams) ([]*driver.JobRow, error) {
	if p.Max <= 0 {
		return nil, nil
	}
	now := fromMicros(micros(time.Now()))
	lease := now.Add(p.Lease).Truncate(time.Microsecond)
	sc := newScanner(p.Max)
	sc.claim = &claimed{queue: p.Queue, owner: p.Owner, attemptedAt: now, lease: lease}
	err := e.query(ctx, nil, e.writer, "JobClaim", sc.scan, p.Queue, p.Max, p.Owner, micros(now), micros(lease))
	if err != nil {
		return nil, e.wrap("claim jobs", err)
	}
	// RETURNING reports rows in no particular order; hand them out in the
	// order they were picked.
	slices.SortFunc(sc.jobs, func(a, b *driver.JobRow) int {
		if a.Priority != b.Priority {
			return a.Priority - b.Priority
		}
		if c := a.RunAt.Compare(b.RunAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return sc.jobs, nil
}

func (e *executor) JobFinish(ctx context.Context, results []driver.Result) ([]int64, error) {
	if len(results) == 0 {
		return nil, nil
	}
	now := micros(time.Now())
	buf := getBuf()
	defer putBuf(buf)
	b := append((*buf)[:0], '{')
	waits := false
	for i := range results {
		r := &results[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, r.ID, 10)
		b = append(b, '"', ':')
		packed := int64(r.Attempt)<<3 | int64(r.Outcome&7)
		if len(r.Error) == 0 && r.RunAt.IsZero() {
			b = strconv.AppendInt(b, packed, 10)
		} else {
			b = append(b, '[')
			b = strconv.AppendInt(b, packed, 10)
			b = append(b, ',')
			if len(r.Error) == 0 {
				b = append(b, "null"...)
			} else {
				b = append(b, r.Error...)
			}
			b = append(b, ',')
			if r.RunAt.IsZero() {
				b = append(b, "null"...)
			} else {
				b = strconv.AppendInt(b, micros(r.RunAt), 10)
			}
			b = append(b, ']')
		}
		if r.Outcome == driver.OutcomeRetry || r.Outcome == driver.OutcomeReleased {
			waits = true
		}
	}
	b = append(b, '}')
	*buf = b
	batch := string(b)

	accepted := make([]int64, 0, len(results))
	collect := func(rows *sql.Rows) error {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		accepted = append(accepted, id)
		return nil
	}
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
		accepted = accepted[:0]
		if err := e.query(ctx, tx, e.writer, "JobFinishMove", collect, batch, now); err != nil {
			return err
		}
		if len(accepted) > 0 {
			*buf = appendIDs((*buf)[:0], accepted)
			if _, err := e.exec(ctx, tx, "JobFinishDelete", string(*buf)); err != nil {
				return err
			}
		}
		if !waits {
			return nil
		}
		return e.query(ctx, tx, e.writer, "JobFinishWait", collect, batch, now)
	})
	if err != nil {
		return nil, e.wrap("finish jobs", err)
	}
	return accepted, nil
}

func (e *executor) JobHeartbeat(ctx context.Context, p driver.HeartbeatParams) (driver.HeartbeatResult, error) {
	var res driver.HeartbeatResult
	if len(p.IDs) == 0 {
		return res, nil
	}
	if len(p.Attempts) != len(p.IDs) {
		return res, fmt.Errorf("heartbeat: %d IDs but %d attempts", len(p.IDs), len(p.Attempts))
	}
	buf := getBuf()
	defer putBuf(buf)
	b := append((*buf)[:0], '[')
	for i, id := range p.IDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, id, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(p.Attempts[i]), 10)
		b = append(b, ']')
	}
	b = append(b, ']')
	*buf = b

	held := make(map[int64]bool, len(p.IDs)) // ID -> cancel requested
	err := e.query(ctx, nil, e.writer, "JobHeartbeat", func(rows *sql.Rows) error {
		var id int64
		var cancel bool
		if err := rows.Scan(&id, &cancel); err != nil {
			return err
		}
		held[id] = cancel
		return nil
	}, string(b), micros(time.Now().Add(p.Lease)))
	if err != nil {
		return res, e.wrap("heartbeat", err)
	}
	for _, id := range p.IDs {
		cancel, ok := held[id]
		switch {
		case !ok:
			res.Lost = append(res.Lost, id)
		case cancel:
			res.CancelRequested = append(res.CancelRequested, id)
		}
	}
	return res, nil
}

// JobRescue records the same lease error as the PostgreSQL driver, built in
// SQL for each job so that it names the job's own attempt; like that driver
// it therefore leaves RescueParams.Error unused.
func (e *executor) JobRescue(ctx context.Context, p driver.RescueParams) (int, error) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	var n int
	var finish []int64
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
		n, finish = 0, finish[:0]
		err := e.query(ctx, tx, e.writer, "JobRescueMark", func(rows *sql.Rows) error {
			var id int64
			var done bool
			if err := rows.Scan(&id, &done); err != nil {
				return err
			}
			n++
			if done {
				finish = append(finish, id)
			}
			return nil
		}, micros(p.Now), p.Limit, micros(now), now.Format(time.RFC3339Nano))
		if err != nil || len(finish) == 0 {
			return err
		}
		ids := string(appendIDs(nil, finish))
		if _, err := e.exec(ctx, tx, "JobRescueMove", ids, micros(now)); err != nil {
			return err
		}
		_, err = e.exec(ctx, tx, "JobRescueDelete", ids)
		return err
	})
	if err != nil {
		return 0, e.wrap("rescue jobs", err)
	}
	return n, nil
}

// appendIDs encodes ids as a JSON array for json_each.
func appendIDs(b []byte, ids []int64) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return append(b, ']')
}

func (e *executor) JobPrune(ctx context.Context, p driver.PruneParams) (int, error) {
	cutoff := func(d time.Duration) any {
		if d < 0 {
			return nil // NULL: keep forever
		}
		return micros(p.Now.Add(-d))
	}
	res, err := e.exec(ctx, nil, "JobPrune", cutoff(p.CompletedRetention), cutoff(p.CancelledRetention),
		cutoff(p.DiscardedRetention), p.Limit)
	if err != nil {
		return 0, e.wrap("prune jobs", err)
	}
	n, err := res.RowsAffected()
	return int(n), e.wrap("prune jobs", err)
}

func (e *executor) JobGet(ctx context.Context, id int64) (*driver.JobRow, error) {
	return e.get(ctx, nil, id)
}

// get reads one job, in tx when given (so that Cancel and Retry return the
// job as their own transaction left it).
func (e *executor) get(ctx context.Context, tx *sql.Tx, id int64) (*driver.JobRow, error) {
	sc := newScanner(1)
	if err := e.query(ctx, tx, e.reader, "JobGet", sc.scan, id, micros(time.Now())); err != nil {
		return nil, e.wrap("get job", err)
	}
	if len(sc.jobs) == 0 {
		return nil, fmt.Errorf("job %d: %w", id, driver.ErrNotFound)
	}
	return sc.jobs[0], nil
}

func (e *executor) JobList(ctx context.Context, p driver.ListParams) ([]*driver.JobRow, error) {
	states := "[]"
	if len(p.States) > 0 {
		b := []byte{'['}
		for i, s := range p.States {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, string(s))
		}
		states = string(append(b, ']'))
	}
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	sc := newScanner(min(max(p.Limit, 1), 1000))
	err := e.query(ctx, nil, e.reader, "JobList", sc.scan, p.Queue, p.Kind, p.AfterID, states, micros(now), p.Limit)
	if err != nil {
		return nil, e.wrap("list jobs", err)
	}
	return sc.jobs, nil
}

func (e *executor) JobCancel(ctx context.Context, id int64, now time.Time) (*driver.JobRow, error) {
	var job *driver.JobRow
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
		if _, err := e.exec(ctx, tx, "JobCancelMove", id, micros(now)); err != nil {
			return err
		}
		if _, err := e.exec(ctx, tx, "JobCancelDelete", id); err != nil {
			return err
		}
		if _, err := e.exec(ctx, tx, "JobCancelFlag", id); err != nil {
			return err
		}
		var err error
		job, err = e.get(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, e.wrap("cancel job", err)
	}
	return job, nil
}

func (e *executor) JobRetry(ctx context.Context, id int64, now time.Time) (*driver.JobRow, error) {
	var job *driver.JobRow
	var queue string
	err := e.writeTx(ctx, func(tx *sql.Tx) error {
		queue = ""
		scanQueue := func(rows *sql.Rows) error { return rows.Scan(&queue) }
		// Reschedule before reviving, so a revived row is not touched twice.
		if err := e.query(ctx, tx, e.writer, "JobRetryReschedule", scanQueue, id, micros(now)); err != nil {
			return err
		}
		if queue == "" {
			if err := e.query(ctx, tx, e.writer, "JobRetryRevive", scanQueue, id, micros(now)); err != nil {
				return err
			}
			if queue != "" {
				if _, err := e.exec(ctx, tx, "JobRetryDelete", id); err != nil {
					return err
				}
			}
		}
		var err error
		job, err = e.get(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, e.wrap("retry job", err)
	}
	if queue != "" {
		notify(e.hubKey, []string{queue})
	}
	return job, nil
}

func (e *executor) JobCountByState(ctx context.Context, queue string) (map[driver.State]int64, error) {
	counts := map[driver.State]int64{}
	err := e.query(ctx, nil, e.reader, "JobCountByState", func(rows *sql.Rows) error {
		var s string
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			return err
		}
		counts[driver.State(s)] += n
		return nil
	}, queue, micros(time.Now()))
	if err != nil {
		return nil, e.wrap("count jobs", err)
	}
	return counts, nil
}

func (e *executor) LeaderElect(ctx context.Context, p driver.LeaderParams) (bool, error) {
	now := time.Now()
	var holder string
	err := e.query(ctx, nil, e.writer, "LeaderElect", func(rows *sql.Rows) error {
		return rows.Scan(&holder)
	}, p.Name, p.ID, micros(now.Add(p.TTL)), micros(now))
	if err != nil {
		return false, e.wrap("elect leader", err)
	}
	return holder != "" && holder == p.ID, nil
}

func (e *executor) LeaderResign(ctx context.Context, name, id string) error {
	_, err := e.exec(ctx, nil, "LeaderResign", name, id)
	return e.wrap("resign leader", err)
}

// wrap names the operation and turns a missing table into ErrSchemaMissing,
// whose message tells the user what to run.
func (e *executor) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if isMissingTable(err) {
		return fmt.Errorf("%s: %w: schema %q is not at the current version, run: drover migrate", op, driver.ErrSchemaMissing, e.schema)
	}
	if errors.Is(err, driver.ErrNotFound) {
		return err
	}
	return fmt.Errorf("%s: %w", op, err)
}

// jobColumns is the number of columns of the job column list shared by
// JobGet and JobList; JobClaim returns the first claimColumns of its own
// list (see queries.sql).
const (
	jobColumns   = 19
	claimColumns = 6
)

// jobBox holds a job and the times its pointer fields point to, so that one
// allocation per chunk of rows serves what would otherwise be four per row.
type jobBox struct {
	row                                     driver.JobRow
	attemptedAt, finalizedAt, leaseExpireAt time.Time
}

// scanner decodes rows of job columns. Scanning into *any hands the
// driver's values over as they are, without the reflection that
// database/sql uses to convert into typed destinations.
type scanner struct {
	vals  [jobColumns]any
	dest  [jobColumns]any
	boxes []jobBox
	chunk int
	jobs  []*driver.JobRow

	// claim is set when scanning JobClaim's shorter column list; it holds
	// the values that statement set and does not return.
	claim *claimed
}

type claimed struct {
	queue, owner       string
	attemptedAt, lease time.Time
}

func newScanner(expect int) *scanner {
	sc := &scanner{chunk: expect}
	for i := range sc.vals {
		sc.dest[i] = &sc.vals[i]
	}
	sc.jobs = make([]*driver.JobRow, 0, expect)
	return sc
}

// box returns the next free job of the current chunk.
func (sc *scanner) box() *jobBox {
	if len(sc.boxes) == cap(sc.boxes) {
		sc.boxes = make([]jobBox, 0, max(sc.chunk, 16))
	}
	sc.boxes = sc.boxes[:len(sc.boxes)+1]
	return &sc.boxes[len(sc.boxes)-1]
}

func (sc *scanner) scan(rows *sql.Rows) error {
	if sc.claim != nil {
		return sc.scanClaimed(rows)
	}
	if err := rows.Scan(sc.dest[:]...); err != nil {
		return err
	}
	box := sc.box()
	j := &box.row
	v := &sc.vals
	j.ID = asInt(v[0])
	j.State = driver.State(asString(v[1]))
	j.Queue = asString(v[2])
	j.Kind = asString(v[3])
	j.Priority = int(asInt(v[4]))
	j.Attempt = int(asInt(v[5]))
	j.MaxAttempts = int(asInt(v[6]))
	j.Timeout = time.Duration(asInt(v[7])) * time.Millisecond
	j.CreatedAt = fromMicros(asInt(v[8]))
	j.RunAt = fromMicros(asInt(v[9]))
	if us, ok := v[10].(int64); ok {
		box.attemptedAt = fromMicros(us)
		j.AttemptedAt = &box.attemptedAt
	}
	if us, ok := v[11].(int64); ok {
		box.finalizedAt = fromMicros(us)
		j.FinalizedAt = &box.finalizedAt
	}
	j.LeaseOwner = asString(v[12])
	if us, ok := v[13].(int64); ok {
		box.leaseExpireAt = fromMicros(us)
		j.LeaseExpiresAt = &box.leaseExpireAt
	}
	j.CancelRequested = asInt(v[14]) != 0
	return sc.payload(j, v[15:19])
}

func (sc *scanner) scanClaimed(rows *sql.Rows) error {
	if err := rows.Scan(sc.dest[:claimColumns]...); err != nil {
		return err
	}
	box := sc.box()
	j := &box.row
	v := &sc.vals
	c := sc.claim
	var n [7]int64
	if err := parseInts(asString(v[0]), n[:]); err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	j.ID = n[0]
	j.State = driver.StateRunning
	j.Queue = c.queue
	j.Kind = asString(v[1])
	j.Priority = int(n[1])
	j.Attempt = int(n[2])
	j.MaxAttempts = int(n[3])
	j.Timeout = time.Duration(n[4]) * time.Millisecond
	j.CreatedAt = fromMicros(n[5])
	j.RunAt = fromMicros(n[6])
	box.attemptedAt, box.leaseExpireAt = c.attemptedAt, c.lease
	j.AttemptedAt, j.LeaseExpiresAt = &box.attemptedAt, &box.leaseExpireAt
	j.LeaseOwner = c.owner
	return sc.payload(j, v[2:6])
}

// parseInts reads len(out) comma-separated integers.
func parseInts(s string, out []int64) error {
	for i := range out {
		field := s
		if k := strings.IndexByte(s, ','); k >= 0 {
			field, s = s[:k], s[k+1:]
		} else {
			s = ""
		}
		v, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return err
		}
		out[i] = v
	}
	return nil
}

// payload decodes the trailing tags, metadata, errors and args columns.
func (sc *scanner) payload(j *driver.JobRow, v []any) error {
	tags, err := decodeTags(v[0])
	if err != nil {
		return fmt.Errorf("job %d: tags: %w", j.ID, err)
	}
	j.Tags = tags
	j.Metadata = asBytes(v[1])
	if j.Metadata == nil {
		j.Metadata = []byte("{}")
	}
	j.Errors = asBytes(v[2])
	j.Args = asBytes(v[3])
	sc.jobs = append(sc.jobs, j)
	return nil
}

func asInt(v any) int64 {
	i, _ := v.(int64)
	return i
}

func asString(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case []byte:
		return string(s)
	}
	return ""
}

// asBytes returns a TEXT or BLOB value as bytes, or nil for NULL.
func asBytes(v any) []byte {
	switch s := v.(type) {
	case string:
		return []byte(s)
	case []byte:
		return s // database/sql already copied it for *any
	}
	return nil
}

// decodeTags reads the JSON array of tags; the common empty array costs
// nothing.
func decodeTags(v any) ([]string, error) {
	s := asString(v)
	if s == "" || s == "[]" {
		return []string{}, nil
	}
	var tags []string
	if err := json.Unmarshal([]byte(s), &tags); err != nil {
		return nil, err
	}
	return tags, nil
}
