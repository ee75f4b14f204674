package droversqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/driverrows"
)

// executor runs the driver's statements on the driver's own connections or,
// when tx is set, inside a transaction: the caller's, or one of the
// driver's own that Tx began (owned).
type executor struct {
	*shared
	tx *sql.Tx
	// owned marks tx as begun by Tx on the writer, whose prepared
	// statements it can bind instead of preparing its own.
	owned bool
	// pending collects, in a Tx, the queues to wake once it commits; nil
	// otherwise.
	pending *[]string
	// flowInsert marks the executor JobInsertFlow inserts its rows with:
	// their keys are promoted by its caller once the rows have their flow
	// states, not by JobInsertMany.
	flowInsert bool
}

// writeTx runs fn in a write transaction: the caller's one when there is
// one, else a round of the driver's writer (rounds.go), which begins
// IMMEDIATE (see Open) and so holds the file's write lock from its first
// statement, with the other writes queued meanwhile, each in a savepoint of
// its own. fn's statements take the context it is given; fn returns once
// the transaction that holds its work has committed, or with the error
// that rolled its work back.
func (e *executor) writeTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return e.writeShared(ctx, nil, fn)
}

// writeShared is writeTx for a write whose work share can run together
// with the same work of other writes of its round (shared.go); fn runs it
// alone otherwise, and always in the caller's transaction.
func (e *executor) writeShared(ctx context.Context, share sharedWrite, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if e.tx != nil {
		return fn(ctx, e.tx)
	}
	if err := e.ready(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return e.combine(&writeCall{ctx: ctx, fn: fn, share: share, wake: make(chan bool, 1)})
}

// prep returns the named statement for one call. In the caller's
// transaction it is prepared there (the transaction may come from any pool);
// in a transaction of the driver's own, the statement prepared once on the
// writer is bound to it; otherwise it is the one prepared once on db.
func (e *executor) prep(ctx context.Context, tx *sql.Tx, db *sql.DB, name string) (*sql.Stmt, error) {
	if e.tx != nil && !e.owned {
		return e.tx.PrepareContext(ctx, e.q[name])
	}
	if e.tx != nil {
		tx = e.tx // a read in a Tx sees what the Tx wrote
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
	if e.tx != nil && !e.owned {
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
// queryValue runs a write statement in tx (nil: on its own) that returns
// at most one row of one column, and returns that value, the zero value
// without a row.
func queryValue[T, P any](ctx context.Context, e *executor, tx *sql.Tx, s *stmt[P], p P) (T, error) {
	var v T
	err := s.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error { return rows.Scan(&v) }, p)
	return v, err
}

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

// insertSizes are the row counts of the prepared multi-row INSERT
// statements. A batch is cut into as many of the largest as fit, then the
// next smaller ones, so each statement is compiled once per connection and
// a batch of any size runs few of them. 500 rows bind 5,000 values, far
// below SQLite's limit of 32,766 per statement.
var insertSizes = []int{500, 64, 8, 1}

// insertColumns is the number of values JobInsertRow binds per job.
const insertColumns = 10

// insertFamily is a multi-row INSERT in insertSizes: a head and a row
// template of queries.sql, joined into the statements named prefix+N.
type insertFamily struct {
	head   string // the name of the head template
	row    *stmt[insertRow]
	prefix string
	// appendArgs appends one job's values in the row's order.
	appendArgs func(args []any, j *droverdriver.InsertParams, now any) []any
}

// The multi-row inserts: plain jobs (JobInsertN), and routed jobs with
// neither key nor unique key (JobInsertRoutedN, routing.go).
var (
	plainInserts  = insertFamily{head: jobInsertHead.name, row: jobInsertRow, prefix: "JobInsert", appendArgs: appendInsertArgs}
	routedInserts = insertFamily{head: jobInsertRoutedHead.name, row: jobInsertRoutedRow, prefix: "JobInsertRouted",
		appendArgs: appendRoutedArgs}
	insertFamilies = []*insertFamily{&plainInserts, &routedInserts}
)

func (f *insertFamily) name(rows int) string { return f.prefix + strconv.Itoa(rows) }

// insertQueries builds the prepared INSERT statements of insertSizes from
// the head and row templates in queries.sql.
func insertQueries(q map[string]string) {
	for _, f := range insertFamilies {
		for _, n := range insertSizes {
			rows := make([]string, n)
			for i := range rows {
				rows[i] = q[f.row.name]
			}
			q[f.name(n)] = q[f.head] + "\n" + strings.Join(rows, ",\n")
		}
	}
}

func (e *executor) JobInsertMany(ctx context.Context, jobs []droverdriver.InsertParams) ([]int64, error) {
	return e.insert(ctx, jobs, nil)
}

// insert runs the statements of JobInsertMany in one transaction. With
// stored set, for one job (JobInsert), the transaction ends by reading the
// job back as stored.
func (e *executor) insert(ctx context.Context, jobs []droverdriver.InsertParams, stored **drovertype.JobRow) ([]int64, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	now := time.Now()
	nowArg := any(micros(now)) // boxed once, shared by every row
	// order: jobs with a key or a unique key take their own statement
	// (keyed.go), routed ones their multi-row family (routing.go); pos
	// maps the plain and the special jobs back to input order.
	all := jobs
	jobs, special, pos := driverrows.SplitSpecial(jobs)
	keyed, routed := splitRouted(special)
	wake := dueJobs(all, now)
	ids := make([]int64, 0, len(jobs))
	var specialIDs []int64
	args := make([]any, 0, min(len(jobs), insertSizes[0])*insertColumns)
	// Plain jobs alone may share their statements with other inserts of
	// the round (shared.go), which then set ids and *stored.
	var share sharedWrite
	if len(special) == 0 {
		share = &insertShare{jobs: jobs, now: nowArg, ids: &ids, stored: stored}
	}
	err := e.writeShared(ctx, share, func(ctx context.Context, tx *sql.Tx) error {
		ids = ids[:0]
		if err := e.raiseSequence(ctx, tx); err != nil {
			return err
		}
		if err := e.insertFamily(ctx, tx, &plainInserts, jobs, nowArg, nil, args, &ids); err != nil {
			return err
		}
		if len(special) > 0 {
			specialIDs = make([]int64, len(special))
			var routedIDs []int64
			if err := e.insertFamily(ctx, tx, &routedInserts, routed.jobs, nowArg, nil, args, &routedIDs); err != nil {
				return err
			}
			for i, id := range routedIDs {
				specialIDs[routed.at[i]] = id
			}
			if err := e.insertKeyedAt(ctx, tx, keyed, nowArg, specialIDs); err != nil {
				return err
			}
		}
		if stored != nil {
			return e.readInserted(ctx, tx, pos.Merge(ids, specialIDs), stored)
		}
		return nil
	})
	if err != nil {
		return nil, e.wrap("insert jobs", err)
	}
	notifyJobs(e.hubKey, wake)
	return pos.Merge(ids, specialIDs), nil
}

// raiseSequence raises the job ID sequence past the highest ID this
// process has handed out (JobSequenceRaise in queries.sql), before an
// insert.
func (e *executor) raiseSequence(ctx context.Context, tx *sql.Tx) error {
	high := highestID(e.hubKey, 0)
	if high == 0 {
		return nil
	}
	if _, err := jobSequenceRaise.exec(ctx, e, tx, high); err != nil {
		return err
	}
	_, err := jobSequenceCreate.exec(ctx, e, tx, high)
	return err
}

// insertKeyedAt inserts the keyed jobs of an insert's special group
// (keyed.go), setting their IDs at their positions of ids, and promotes
// the keys of those with a rate, which were stored blocked.
func (e *executor) insertKeyedAt(ctx context.Context, tx *sql.Tx, keyed special, now any, ids []int64) error {
	if len(keyed.jobs) == 0 {
		return nil
	}
	got, queues, keys, err := e.insertKeyed(ctx, tx, keyed.jobs, now)
	if err != nil {
		return err
	}
	for i, id := range got {
		ids[keyed.at[i]] = id
	}
	if len(keys) > 0 && !e.flowInsert {
		_, _, err = e.promote(ctx, tx, queues, keys, nil)
	}
	return err
}

// insertFamily inserts jobs with f's statements, as many of the largest
// as fit, then the next smaller ones, and appends their IDs to ids. Each
// job is inserted at now, or, when nows is not nil, at its own time there
// (the jobs of several callers' inserts, shared.go).
func (e *executor) insertFamily(ctx context.Context, tx *sql.Tx, f *insertFamily, jobs []droverdriver.InsertParams, now any, nows []any, args []any, ids *[]int64) error {
	rest := jobs
	for _, size := range insertSizes {
		if len(rest) < size {
			continue
		}
		n := len(rest) / size * size
		var chunkNows []any
		if nows != nil {
			chunkNows, nows = nows[:n], nows[n:]
		}
		if err := e.insertChunks(ctx, tx, f, rest[:n], size, now, chunkNows, args, ids); err != nil {
			return err
		}
		rest = rest[n:]
	}
	return nil
}

// insertChunks inserts jobs, whose number is a multiple of size, with f's
// statement of that many rows, and appends their IDs to ids.
func (e *executor) insertChunks(ctx context.Context, tx *sql.Tx, f *insertFamily, jobs []droverdriver.InsertParams, size int, now any, nows []any, args []any, ids *[]int64) error {
	st, err := e.prep(ctx, tx, e.writer, f.name(size))
	if err != nil {
		return err
	}
	defer e.done(st)
	for start := 0; start < len(jobs); start += size {
		args = args[:0]
		for i := range jobs[start : start+size] {
			at := now
			if nows != nil {
				at = nows[start+i]
			}
			args = f.appendArgs(args, &jobs[start+i], at)
		}
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return err
		}
		last, err := res.LastInsertId()
		if err != nil {
			return err
		}
		// The statement inserted its rows in order while holding the write
		// lock, and AUTOINCREMENT gives each new row the highest ID so far
		// plus one, so the chunk's IDs are the size consecutive ones ending
		// at the last. This spares a RETURNING clause, which SQLite would
		// buffer row by row.
		for k := int64(size) - 1; k >= 0; k-- {
			*ids = append(*ids, last-k)
		}
		// Remembered at once: even if the transaction does not commit,
		// these IDs have been seen.
		highestID(e.hubKey, last)
	}
	return nil
}

// idHighs holds, per database and table prefix, the highest job ID this
// process has handed out; see JobSequenceRaise in queries.sql.
var idHighs = struct {
	sync.Mutex
	m map[string]int64
}{m: map[string]int64{}}

// highestID raises the remembered highest ID of the database key to id and
// returns it.
func highestID(key string, id int64) int64 {
	idHighs.Lock()
	defer idHighs.Unlock()
	if id > idHighs.m[key] {
		idHighs.m[key] = id
	}
	return idHighs.m[key]
}

// appendInsertArgs appends one job's values in JobInsertRow's order.
func appendInsertArgs(args []any, j *droverdriver.InsertParams, now any) []any {
	meta := j.Metadata
	if len(meta) == 0 {
		meta = emptyObject
	}
	tags := any("[]")
	if len(j.Tags) > 0 {
		tags = string(appendStrings(nil, j.Tags))
	}
	runAt := now
	if !j.RunAt.IsZero() {
		runAt = micros(j.RunAt)
	}
	return append(args, j.Queue, j.Kind, j.Args, meta, tags, int64(j.Priority), int64(j.MaxAttempts), runAt,
		j.Timeout.Milliseconds(), now)
}

var emptyObject = []byte("{}")

// appendStrings appends ss (tags, kinds, states) as a JSON array of
// strings.
func appendStrings[S ~string](b []byte, ss []S) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, string(s))
	}
	return append(b, ']')
}

// appendString appends s as a quoted JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped appends s with the characters JSON strings cannot hold
// raw escaped. Bytes from 0x80 up pass through: SQLite reads them as UTF-8.
func appendEscaped(b []byte, s string) []byte {
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

// dueJobs counts the jobs of each queue that can run now, for the wake-up
// after their insert commits.
func dueJobs(jobs []droverdriver.InsertParams, now time.Time) map[string]int {
	due := map[string]int{}
	for i := range jobs {
		j := &jobs[i]
		switch {
		case !j.Due(now):
		case j.Routing != nil:
			// Every listener: the next in turn may be a worker that
			// cannot take it.
			due[j.Queue] = wakeAll
		case due[j.Queue] != wakeAll:
			due[j.Queue]++
		}
	}
	return due
}

var (
	_ droverdriver.QueuesDueExecutor = (*executor)(nil)
	_ droverdriver.HeadClaimer       = (*executor)(nil)
)

// ClaimsFromHead implements droverdriver.HeadClaimer: a claim removes its
// rows from the claim index in its own write, so the head of the index
// holds only waiting jobs.
func (e *executor) ClaimsFromHead() bool { return true }

// QueuesDue implements droverdriver.QueuesDueExecutor, on a reader (or in
// the executor's transaction): a client's poll never takes the write lock
// (JobClaimable).
func (e *executor) QueuesDue(ctx context.Context, queues []string, now time.Time) ([]string, error) {
	if now.IsZero() {
		now = time.Now()
	}
	var due []string
	err := queuesDue.query(ctx, e, e.tx, e.reader, func(rows *sql.Rows) error {
		var q string
		err := rows.Scan(&q)
		due = append(due, q)
		return err
	}, queuesAt{jsonStrings(queues), micros(now)})
	return due, e.wrap("read the queues with jobs due", err)
}

func (e *executor) JobClaim(ctx context.Context, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	if p.Max <= 0 || (p.Kinds != nil && len(p.Kinds) == 0) {
		return []*drovertype.JobRow{}, nil
	}
	var kinds string
	switch {
	case p.Kinds != nil:
		kinds = jsonStrings(p.Kinds)
	case len(p.ExceptKinds) > 0:
		kinds = jsonStrings(p.ExceptKinds)
	}
	// The routed and strict claims take the kinds as a JSON array, or NULL
	// for every kind, and the paused kinds apart (routedParams).
	var routedKinds any
	if p.Kinds != nil {
		routedKinds = kinds
	}
	if e.tx == nil {
		// order: an idle queue is seen on a reader, without the write lock
		// (JobClaimable in queries.sql).
		// A claimer's clock (ClaimParams.Now) says which jobs are due.
		now := time.Now()
		if !p.Now.IsZero() {
			now = p.Now
		}
		var due bool
		err := jobClaimable.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error { return rows.Scan(&due) },
			queueAt{p.Queue, micros(now)})
		if err != nil {
			return nil, e.wrap("claim jobs", err)
		}
		if !due {
			return []*drovertype.JobRow{}, nil
		}
	}
	sc := newScanner(p.Max)
	// One token per claim: see drovertype.LeaseToken.
	token := p.Token
	if token.IsZero() {
		token = drovertype.NewLeaseToken()
	}
	// The clock is read once the transaction holds the write lock, so that
	// attempted_at is when the claim took effect, not when it began to
	// wait: keyed jobs' stored run intervals must follow the commit order
	// of the finishes that promoted them.
	// The claim may share its statement with other claims of its round
	// (shared.go), which put the rows taken for it in sc.
	share := &claimShare{p: p, kinds: kinds, token: token, sc: sc}
	err := e.writeShared(ctx, share, func(ctx context.Context, tx *sql.Tx) error {
		real := fromMicros(micros(time.Now()))
		// A claimer's clock (ClaimParams.Now) says which jobs are due and
		// when their attempts start; leases run by the real one, which
		// heartbeats and the rescuer read.
		now := real
		if !p.Now.IsZero() {
			now = fromMicros(micros(p.Now))
		}
		lease := real.Add(p.Lease).Truncate(time.Microsecond)
		sc.jobs = sc.jobs[:0]
		sc.claim = &claimed{queue: p.Queue, owner: p.Owner, attemptedAt: now, lease: lease, token: token}
		// order: a limited queue's claim takes what its limits leave room
		// for and spends rate tokens on it (limits.go).
		room, limited, rated, strict := p.Max, 0, false, false
		if p.Limited {
			var err error
			if room, rated, strict, err = e.limitRoom(ctx, tx, p, real); err != nil || room == 0 {
				return err
			}
			limited = 1
		}
		cp := claimParams{Queue: p.Queue, Max: room, Owner: p.Owner, Now: micros(now), Lease: micros(lease), Limited: limited, Token: token[:]}
		// The row, read under the write lock, decides strict order,
		// whatever the claimer's cached settings said
		// (ClaimParams.Variant).
		v := p.Variant
		if strict {
			v = droverdriver.ClaimStrict
		}
		if err := e.claimQuery(ctx, tx, v, p, cp, kinds, routedKinds, sc); err != nil || !rated || len(sc.jobs) == 0 {
			return err
		}
		_, err := queueLimitSpend.exec(ctx, e, tx, queueCount{p.Queue, len(sc.jobs)})
		return err
	})
	if err != nil {
		return nil, e.wrap("claim jobs", err)
	}
	// RETURNING reports rows in no particular order; hand them out in the
	// order they were picked.
	driverrows.SortClaimed(sc.jobs)
	return sc.jobs, nil
}

// claimQuery runs the claim statement v names (ClaimParams.Variant, which
// the engine chose) in tx, into sc: each takes the parts of p it is named
// after. kinds is p's kinds, or its paused kinds, as a JSON array, and
// routedKinds the same for the routed and strict claims, NULL for every
// kind.
func (e *executor) claimQuery(ctx context.Context, tx *sql.Tx, v droverdriver.ClaimVariant, p droverdriver.ClaimParams, cp claimParams, kinds string, routedKinds any, sc *scanner) error {
	switch v {
	case droverdriver.ClaimStrict:
		// routing.go: the head of a queue in strict order, read under the
		// write lock.
		return jobClaimStrict.query(ctx, e, tx, e.writer, sc.scan, routedParams(p, cp, routedKinds))
	case droverdriver.ClaimRouted:
		return jobClaimRouted.query(ctx, e, tx, e.writer, sc.scan, routedParams(p, cp, routedKinds))
	case droverdriver.ClaimKindsAfter:
		return jobClaimKindsAfter.query(ctx, e, tx, e.writer, sc.scan, claimKindsAfterParams{afterParams(p, cp), kinds})
	case droverdriver.ClaimKinds:
		return jobClaimKinds.query(ctx, e, tx, e.writer, sc.scan, claimKindsParams{cp, kinds})
	case droverdriver.ClaimExceptAfter:
		return jobClaimExceptAfter.query(ctx, e, tx, e.writer, sc.scan, claimKindsAfterParams{afterParams(p, cp), kinds})
	case droverdriver.ClaimExcept:
		return jobClaimExcept.query(ctx, e, tx, e.writer, sc.scan, claimKindsParams{cp, kinds})
	case droverdriver.ClaimAfter:
		return jobClaimAfter.query(ctx, e, tx, e.writer, sc.scan, afterParams(p, cp))
	}
	return jobClaim.query(ctx, e, tx, e.writer, sc.scan, cp)
}

// afterParams are cp with p.After, the position the claim starts past.
func afterParams(p droverdriver.ClaimParams, cp claimParams) claimAfterParams {
	return claimAfterParams{cp, p.After.Priority, micros(p.After.RunAt), p.After.ID}
}

// applyResults runs the finish statements and reports how many results
// they applied. Jobs whose stored flow has a bit of refuse are turned
// away.
func (e *executor) applyResults(ctx context.Context, tx *sql.Tx, batch string, now int64, kinds resultKinds, refuse int) (int, error) {
	res, err := jobFinishMove.exec(ctx, e, tx, finishBatch{batch, now, refuse})
	if err != nil {
		return 0, err
	}
	moved, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	if moved > 0 {
		res, err := jobFinishDelete.exec(ctx, e, tx, batch)
		if err != nil {
			return 0, err
		}
		if deleted, err := res.RowsAffected(); err != nil || deleted != moved {
			return 0, errors.Join(err, fmt.Errorf("moved %d finished jobs but removed %d", moved, deleted))
		}
	}
	applied := moved
	for _, st := range []struct {
		bound
		run bool
	}{
		{jobFinishForget.bind(batchRefuse{batch, refuse}), kinds.forgets},
		{jobFinishWait.bind(finishBatch{batch, now, refuse}), kinds.waits},
	} {
		if !st.run {
			continue
		}
		res, err := e.exec(ctx, tx, st.Name, st.Args...)
		if err != nil {
			return 0, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		applied += n
	}
	return int(applied), nil
}

// uniqueResults keeps the first result of each job. Two results for one job
// in a batch could both pass the fence, and the second copy into
// finished_jobs would then fail the whole batch.
func uniqueResults(results []droverdriver.Result) []droverdriver.Result {
	seen := make(map[int64]struct{}, len(results))
	for i := range results {
		if _, dup := seen[results[i].ID]; !dup {
			seen[results[i].ID] = struct{}{}
			continue
		}
		out := append([]droverdriver.Result(nil), results[:i]...)
		for _, r := range results[i+1:] {
			if _, dup := seen[r.ID]; !dup {
				seen[r.ID] = struct{}{}
				out = append(out, r)
			}
		}
		return out
	}
	return results
}

// resultKinds says which optional finish statements a batch of results
// needs.
type resultKinds struct {
	waits   bool // some result returns its job to waiting (JobFinishWait)
	forgets bool // some completed job is to be deleted (JobFinishForget)
}

// A result as the finish statements read it (appendResults) is one
// integer, attempt<<attemptShift | outcome: a plain completion
// then travels as a JSON number, with no array to unpack. queries.sql tags
// these numbers by name ("packed >> 4 /*attemptShift*/"), and the
// statements test checks the tags against the values here.
const (
	// outcomeMask holds the outcome: a droverdriver.Outcome, or
	// outcomeForget.
	outcomeMask = 7
	// outcomeForget is the packed outcome of a completion with Forget set:
	// SQLite's own, a completion whose job is deleted rather than kept.
	outcomeForget = 6
	// attemptShift puts the attempt above the outcome. Bit 8, which
	// flagged results of jobs with FlowEnd bits before the fence took its
	// refused bits as a parameter, is left unused.
	attemptShift = 4
)

// sqlConstants are the constants above by the names queries.sql tags them
// with; see droverdriver.SQLConstants.
var sqlConstants = map[string]int{
	"outcomeMask": outcomeMask, "outcomeForget": outcomeForget, "attemptShift": attemptShift,
}

// appendFenceKey appends the JSON object key that the finish and heartbeat
// statements fence a result by, "id:token" with the token in 32 hex
// digits, followed by the colon that separates it from its value. One key
// carries both so that a plain completion still unpacks from json_each's
// key and atom alone (see JobFinishMove).
func appendFenceKey(b []byte, id int64, token drovertype.LeaseToken) []byte {
	b = strconv.AppendInt(append(b, '"'), id, 10)
	b = token.AppendHex(append(b, ':'))
	return append(b, '"', ':')
}

// appendResults encodes results as the JSON object the finish statements
// unpack (see JobFinishMove in queries.sql) and reports which statements
// they need.
func appendResults(b []byte, results []droverdriver.Result) ([]byte, resultKinds) {
	var kinds resultKinds
	b = append(b, '{')
	for i := range results {
		r := &results[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFenceKey(b, r.ID, r.LeaseToken)
		outcome := int64(r.Outcome & outcomeMask)
		if r.Forget && r.Outcome == droverdriver.OutcomeCompleted && r.Output == nil {
			outcome = outcomeForget
			kinds.forgets = true
		}
		packed := int64(r.Attempt)<<attemptShift | outcome
		if len(r.Error) == 0 && r.RunAt.IsZero() && r.Output == nil {
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
			b = append(b, ',')
			if r.Output == nil {
				b = append(b, "null"...)
			} else {
				b = append(b, r.Output...)
			}
			b = append(b, ']')
		}
		if r.Outcome == droverdriver.OutcomeRetry || r.Outcome == droverdriver.OutcomeReleased {
			kinds.waits = true
		}
	}
	return append(b, '}'), kinds
}

func (e *executor) JobHeartbeat(ctx context.Context, p droverdriver.HeartbeatParams) (droverdriver.HeartbeatResult, error) {
	var res droverdriver.HeartbeatResult
	if len(p.IDs) == 0 {
		return res, nil
	}
	if len(p.Attempts) != len(p.IDs) || len(p.Tokens) != len(p.IDs) {
		return res, fmt.Errorf("heartbeat: %d IDs but %d attempts and %d tokens", len(p.IDs), len(p.Attempts), len(p.Tokens))
	}
	buf := getBuf()
	defer putBuf(buf)
	b := append((*buf)[:0], '{')
	for i, id := range p.IDs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFenceKey(b, id, p.Tokens[i])
		b = strconv.AppendInt(b, int64(p.Attempts[i]), 10)
	}
	b = append(b, '}')
	*buf = b

	held := make(map[int64]bool, len(p.IDs)) // ID -> cancel requested
	err := jobHeartbeat.query(ctx, e, nil, e.writer, func(rows *sql.Rows) error {
		var id int64
		var cancel bool
		if err := rows.Scan(&id, &cancel); err != nil {
			return err
		}
		held[id] = cancel
		return nil
	}, batchAt{string(b), micros(time.Now().Add(p.Lease))})
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
func (e *executor) JobRescue(ctx context.Context, p droverdriver.RescueParams) ([]droverdriver.FinishedRow, error) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	var rows []droverdriver.FinishedRow
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		rows = rows[:0]
		var finish []int64
		err := jobRescueMark.query(ctx, e, tx, e.writer, func(r *sql.Rows) error {
			var row droverdriver.FinishedRow
			var done, cancelled bool
			var key sql.NullString
			if err := r.Scan(&row.ID, &done, &cancelled, &row.Flow, &row.Queue, &key); err != nil {
				return err
			}
			row.Key, row.State = key.String, drovertype.JobStateAvailable
			if done {
				finish = append(finish, row.ID)
				row.State = drovertype.JobStateDiscarded
				if cancelled {
					row.State = drovertype.JobStateCancelled
				}
			}
			rows = append(rows, row)
			return nil
		}, rescueMarkParams{micros(p.Now), p.Limit, micros(now), now.Format(time.RFC3339Nano)})
		if err != nil || len(finish) == 0 {
			return err
		}
		ids := string(appendIDs(nil, finish))
		if _, err := jobRescueMove.exec(ctx, e, tx, batchAt{ids, micros(now)}); err != nil {
			return err
		}
		_, err = jobRescueDelete.exec(ctx, e, tx, ids)
		return err
	})
	if err != nil {
		return nil, e.wrap("rescue jobs", err)
	}
	return rows, nil
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

func (e *executor) JobPrune(ctx context.Context, p droverdriver.PruneParams) (int, error) {
	cutoff := func(d time.Duration) any {
		if d < 0 {
			return nil // NULL: keep forever
		}
		return micros(p.Now.Add(-d))
	}
	var n int
	var unique []int64
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		n, unique = 0, unique[:0]
		err := jobPrune.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var id int64
			var uniq bool
			if err := rows.Scan(&id, &uniq); err != nil {
				return err
			}
			n++
			if uniq {
				unique = append(unique, id)
			}
			return nil
		}, pruneParams{cutoff(p.CompletedRetention), cutoff(p.CancelledRetention), cutoff(p.DiscardedRetention), p.Limit})
		if err != nil || len(unique) == 0 {
			return err
		}
		_, err = uniquePrune.exec(ctx, e, tx, string(appendIDs(nil, unique)))
		return err
	})
	if err != nil {
		return 0, e.wrap("prune jobs", err)
	}
	return n, nil
}

func (e *executor) JobGet(ctx context.Context, id int64) (*drovertype.JobRow, error) {
	return e.get(ctx, nil, id)
}

// get reads one job, in tx when given (so that Cancel and Retry return the
// job as their own transaction left it).
func (e *executor) get(ctx context.Context, tx *sql.Tx, id int64) (*drovertype.JobRow, error) {
	sc := newScanner(1)
	if err := jobGet.query(ctx, e, tx, e.reader, sc.scan, jobAt{id, micros(time.Now())}); err != nil {
		return nil, e.wrap("get job", err)
	}
	if len(sc.jobs) == 0 {
		return nil, fmt.Errorf("job %d: %w", id, droverdriver.ErrNotFound)
	}
	return sc.jobs[0], nil
}

// jsonStrings encodes ss as a JSON array of strings ("[]" when empty),
// for the statements that unpack a list with json_each.
func jsonStrings[S ~string](ss []S) string { return string(appendStrings(nil, ss)) }

func (e *executor) JobCancel(ctx context.Context, p droverdriver.CancelParams) ([]droverdriver.FinishedRow, []int64, error) {
	ids := string(appendIDs(nil, p.IDs))
	var rows []droverdriver.FinishedRow
	var flagged []int64
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		flagged = flagged[:0]
		if rows, err = e.ended(ctx, tx, jobCancelMove.bind(batchAt{ids, micros(p.Now)})); err != nil {
			return err
		}
		if _, err := jobCancelDelete.exec(ctx, e, tx, ids); err != nil || p.LeaveRunning {
			return err
		}
		return jobCancelFlag.query(ctx, e, tx, e.writer, func(r *sql.Rows) error {
			var id int64
			err := r.Scan(&id)
			flagged = append(flagged, id)
			return err
		}, ids)
	})
	if err != nil {
		return nil, nil, e.wrap("cancel jobs", err)
	}
	return rows, flagged, nil
}

func (e *executor) JobDiscard(ctx context.Context, ids []int64, now time.Time) ([]droverdriver.FinishedRow, error) {
	batch := string(appendIDs(nil, ids))
	var rows []droverdriver.FinishedRow
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		if rows, err = e.ended(ctx, tx, jobDiscardMove.bind(batchAt{batch, micros(now)})); err != nil {
			return err
		}
		_, err = jobDiscardDelete.exec(ctx, e, tx, batch)
		return err
	})
	if err != nil {
		return nil, e.wrap("discard jobs", err)
	}
	return rows, nil
}

// JobDelete runs JobDelete and UniquePrune for the unique jobs it deleted,
// in one write transaction.
func (e *executor) JobDelete(ctx context.Context, ids []int64) ([]int64, error) {
	var deleted, unique []int64
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		deleted, unique = deleted[:0], unique[:0]
		err := jobDelete.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var id int64
			var flow int
			if err := rows.Scan(&id, &flow); err != nil {
				return err
			}
			deleted = append(deleted, id)
			if flow&droverdriver.FlowUnique != 0 {
				unique = append(unique, id)
			}
			return nil
		}, string(appendIDs(nil, ids)))
		if err != nil || len(unique) == 0 {
			return err
		}
		_, err = uniquePrune.exec(ctx, e, tx, string(appendIDs(nil, unique)))
		return err
	})
	if err != nil {
		return nil, e.wrap("delete jobs", err)
	}
	return deleted, nil
}

// ended runs, in tx, a statement that ends jobs and returns them as
// (id, state, flow & FlowEnd, queue, ordering key) rows.
func (e *executor) ended(ctx context.Context, tx *sql.Tx, st bound) ([]droverdriver.FinishedRow, error) {
	var rows []droverdriver.FinishedRow
	err := e.query(ctx, tx, e.writer, st.Name, func(r *sql.Rows) error {
		var row droverdriver.FinishedRow
		var state string
		var key sql.NullString
		if err := r.Scan(&row.ID, &state, &row.Flow, &row.Queue, &key); err != nil {
			return err
		}
		row.State, row.Key = drovertype.JobState(state), key.String
		rows = append(rows, row)
		return nil
	}, st.Args...)
	return rows, err
}

// JobRetry runs JobRetryReschedule, JobRetryRevive, JobRetryDelete and
// JobRetryRefused, in that order, in one write transaction: each matches
// only where the ones before it did not, so that together they are
// PostgreSQL's JobRetry. It wakes the queues of jobs made available.
func (e *executor) JobRetry(ctx context.Context, ids []int64, now time.Time) ([]droverdriver.RetriedRow, error) {
	batch := string(appendIDs(nil, ids))
	var out []droverdriver.RetriedRow
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		out = out[:0]
		at := batchAt{batch, micros(now)}
		err := jobRetryReschedule.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var r droverdriver.RetriedRow
			err := rows.Scan(&r.ID, &r.Queue)
			out = append(out, r)
			return err
		}, at)
		if err != nil {
			return err
		}
		err = jobRetryRevive.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var r droverdriver.RetriedRow
			var key sql.NullString
			err := rows.Scan(&r.ID, &r.Queue, &key)
			r.Key = key.String
			out = append(out, r)
			return err
		}, at)
		if err != nil {
			return err
		}
		if _, err := jobRetryDelete.exec(ctx, e, tx, batch); err != nil {
			return err
		}
		return jobRetryRefused.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var r droverdriver.RetriedRow
			err := rows.Scan(&r.ID, &r.Queue, &r.Refused)
			out = append(out, r)
			return err
		}, batch)
	})
	if err != nil {
		return nil, e.wrap("retry jobs", err)
	}
	var wake []string
	for _, r := range out {
		if r.Key == "" && r.Refused == 0 {
			wake = append(wake, r.Queue)
		}
	}
	if len(wake) > 0 {
		e.wake(wake)
	}
	return out, nil
}

func (e *executor) JobCountByState(ctx context.Context, queue string) (map[drovertype.JobState]int64, error) {
	counts := map[drovertype.JobState]int64{}
	err := jobCountByState.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var s string
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			return err
		}
		counts[drovertype.JobState(s)] += n
		return nil
	}, queueAt{queue, micros(time.Now())})
	if err != nil {
		return nil, e.wrap("count jobs", err)
	}
	return counts, nil
}

func (e *executor) QueueStats(ctx context.Context, now time.Time) ([]drovertype.QueueStats, error) {
	var out []drovertype.QueueStats
	err := queueStats.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var q drovertype.QueueStats
		var oldest sql.NullInt64
		if err := rows.Scan(&q.Queue, &q.Available, &q.Scheduled, &q.Retryable, &q.Running, &oldest); err != nil {
			return err
		}
		if oldest.Valid {
			t := fromMicros(oldest.Int64)
			q.OldestAvailable = &t
		}
		out = append(out, q)
		return nil
	}, micros(now))
	if err != nil {
		return nil, e.wrap("queue stats", err)
	}
	return out, nil
}

func (e *executor) FinishedStats(ctx context.Context, since, until time.Time) ([]drovertype.FinishedStats, error) {
	var out []drovertype.FinishedStats
	err := finishedStats.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var f drovertype.FinishedStats
		var p50, p95, p99 int64
		if err := rows.Scan(&f.Queue, &f.Completed, &f.Cancelled, &f.Discarded, &p50, &p95, &p99); err != nil {
			return err
		}
		f.PickupP50, f.PickupP95, f.PickupP99 = time.Duration(p50)*time.Microsecond,
			time.Duration(p95)*time.Microsecond, time.Duration(p99)*time.Microsecond
		out = append(out, f)
		return nil
	}, timeRange{micros(since), micros(until)})
	if err != nil {
		return nil, e.wrap("finished stats", err)
	}
	return out, nil
}

func (e *executor) LeaseOwners(ctx context.Context) ([]drovertype.LeaseOwner, error) {
	var out []drovertype.LeaseOwner
	err := leaseOwners.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var o drovertype.LeaseOwner
		var owner sql.NullString
		var expires int64
		if err := rows.Scan(&owner, &o.Running, &expires); err != nil {
			return err
		}
		o.Owner, o.LeaseExpiresAt = owner.String, fromMicros(expires)
		out = append(out, o)
		return nil
	}, struct{}{})
	if err != nil {
		return nil, e.wrap("lease owners", err)
	}
	return out, nil
}

func (e *executor) LeaderElect(ctx context.Context, p droverdriver.LeaderParams) (bool, error) {
	now := time.Now()
	holder, err := queryValue[string](ctx, e, nil, leaderElect, leaderElectParams{p.Name, p.ID, micros(now.Add(p.TTL)), micros(now)})
	if err != nil {
		return false, e.wrap("elect leader", err)
	}
	return holder != "" && holder == p.ID, nil
}

func (e *executor) QueueSettingsGet(ctx context.Context, queue string) (*drovertype.QueueSettings, error) {
	var out *drovertype.QueueSettings
	err := queueSettingsGet.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var err error
		out, err = scanSettings(rows)
		return err
	}, queue)
	return out, e.wrap("read queue settings", err)
}

func (e *executor) QueueKnown(ctx context.Context, queue string) (bool, error) {
	var known bool
	err := queueKnown.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error { return rows.Scan(&known) }, queue)
	return known, e.wrap("look up queue", err)
}

func (e *executor) QueueSettingsList(ctx context.Context) ([]*drovertype.QueueSettings, error) {
	out := []*drovertype.QueueSettings{}
	err := queueSettingsList.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		s, err := scanSettings(rows)
		out = append(out, s)
		return err
	}, struct{}{})
	return out, e.wrap("list queue settings", err)
}

// QueueSettingsSet writes the row, then tells the listeners of this
// process (the hub): other processes on the file see the change when
// their cached settings expire.
func (e *executor) QueueSettingsSet(ctx context.Context, p droverdriver.QueueSettingsSetParams) (*drovertype.QueueSettings, error) {
	var l drovertype.QueueLimit
	if p.Limit != nil {
		l = *p.Limit
	}
	var paused, strict any
	if p.Paused != nil {
		paused = *p.Paused
	}
	if p.Strict != nil {
		strict = *p.Strict
	}
	var out *drovertype.QueueSettings
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		return queueSettingsSet.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var err error
			out, err = scanSettings(rows)
			return err
		}, settingsSetParams{Queue: p.Queue, Paused: paused, SetLimits: p.Limit != nil,
			MaxRunning: l.MaxRunning, Rate: l.Rate, PeriodMS: l.Period.Milliseconds(), Now: micros(time.Now()), Strict: strict,
			PauseKinds: jsonStrings(p.PauseKinds), ResumeKinds: jsonStrings(p.ResumeKinds)})
	})
	if err != nil {
		return nil, e.wrap("write queue settings", err)
	}
	notify(e.hubKey, []string{droverdriver.SettingsNotice(p.Queue)})
	return out, nil
}

// scanSettings reads a row of the QueueSettings statements.
func scanSettings(rows *sql.Rows) (*drovertype.QueueSettings, error) {
	s := &drovertype.QueueSettings{}
	var periodMS, updated int64
	var kinds string
	if err := rows.Scan(&s.Queue, &s.Paused, &s.Limit.MaxRunning, &s.Limit.Rate, &periodMS, &s.Strict, &updated, &kinds); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(kinds), &s.PausedKinds); err != nil {
		return nil, fmt.Errorf("paused kinds of queue %q: %w", s.Queue, err)
	}
	if len(s.PausedKinds) == 0 {
		s.PausedKinds = nil
	}
	s.Limit.Period = time.Duration(periodMS) * time.Millisecond
	s.UpdatedAt = fromMicros(updated)
	return s, nil
}

func (e *executor) LeaderResign(ctx context.Context, name, id string) error {
	_, err := leaderResign.exec(ctx, e, nil, leaderResignParams{name, id})
	return e.wrap("resign leader", err)
}

// wrap names the operation and turns a missing table into ErrSchemaMissing,
// whose message tells the user what to run.
func (e *executor) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if isMissingTable(err) {
		return fmt.Errorf("%s: %w: schema %q is not at the current version, run: drover migrate", op, droverdriver.ErrSchemaMissing, e.schema)
	}
	if errors.Is(err, droverdriver.ErrNotFound) {
		return err
	}
	return fmt.Errorf("%s: %w", op, err)
}

// jobColumns is the number of columns of the job column list shared by
// JobGet and JobList; JobClaim returns a shorter list of claimColumns (see
// queries.sql).
const (
	jobColumns   = 23
	claimColumns = 16
)

// jobBox holds a job and the times its pointer fields point to, so that one
// allocation per chunk of rows serves what would otherwise be four per row.
type jobBox struct {
	row                                     drovertype.JobRow
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
	jobs  []*drovertype.JobRow

	// claim is set when scanning JobClaim's shorter column list; it holds
	// the values that statement set and does not return.
	claim *claimed
}

type claimed struct {
	queue, owner       string
	attemptedAt, lease time.Time
	token              drovertype.LeaseToken
}

func newScanner(expect int) *scanner {
	sc := &scanner{chunk: expect}
	for i := range sc.vals {
		sc.dest[i] = &sc.vals[i]
	}
	sc.jobs = make([]*drovertype.JobRow, 0, expect)
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
	j.State = drovertype.JobState(asString(v[1]))
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
	j.BatchID = asInt(v[19])
	j.Key = asString(v[20])
	j.ErrorCount = int(asInt(v[21]))
	var err error
	if j.Routing, err = droverdriver.DecodeRouting(asBytes(v[22])); err != nil {
		return fmt.Errorf("job %d: routing: %w", j.ID, err)
	}
	return sc.payload(j, v[15:19])
}

func (sc *scanner) scanClaimed(rows *sql.Rows) error {
	if err := rows.Scan(sc.dest[:claimColumns]...); err != nil {
		return err
	}
	return sc.claimedRow()
}

// claimedRow makes the job of the claim columns just scanned, with what
// sc.claim says the claim set.
func (sc *scanner) claimedRow() error {
	box := sc.box()
	j := &box.row
	v := &sc.vals
	c := sc.claim
	j.ID = asInt(v[0])
	j.State = drovertype.JobStateRunning
	j.Queue = c.queue
	j.Kind = asString(v[1])
	j.Priority = int(asInt(v[2]))
	j.Attempt = int(asInt(v[3]))
	j.MaxAttempts = int(asInt(v[4]))
	j.Timeout = time.Duration(asInt(v[5])) * time.Millisecond
	j.CreatedAt = fromMicros(asInt(v[6]))
	j.RunAt = fromMicros(asInt(v[7]))
	box.attemptedAt, box.leaseExpireAt = c.attemptedAt, c.lease
	j.AttemptedAt, j.LeaseExpiresAt = &box.attemptedAt, &box.leaseExpireAt
	j.LeaseOwner = c.owner
	j.BatchID = asInt(v[12])
	j.Flow = int(asInt(v[13]))
	j.Key = asString(v[14])
	j.ErrorCount = int(asInt(v[15]))
	j.LeaseToken = c.token
	return sc.payload(j, v[8:12])
}

// payload decodes the trailing tags, metadata, errors and args columns.
func (sc *scanner) payload(j *drovertype.JobRow, v []any) error {
	tags, err := decodeTags(v[0])
	if err != nil {
		return fmt.Errorf("job %d: tags: %w", j.ID, err)
	}
	j.Tags = tags
	j.Metadata = asBytes(v[1])
	if j.Metadata == nil { // JobClaim returns the default as NULL
		j.Metadata = []byte("{}")
	}
	j.Errors = driverrows.DecodeErrors(asBytes(v[2]))
	j.EncodedArgs = asBytes(v[3])
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

// JobInsert inserts one job like JobInsertMany and returns it as stored,
// read back in the inserting transaction.
func (e *executor) JobInsert(ctx context.Context, job droverdriver.InsertParams) (*drovertype.JobRow, error) {
	var row *drovertype.JobRow
	if _, err := e.insert(ctx, []droverdriver.InsertParams{job}, &row); err != nil {
		return nil, err
	}
	return row, nil
}

// readInserted sets *stored to the one job of ids as tx stored it, or to
// nil when it was a unique job skipped as a duplicate (ID 0).
func (e *executor) readInserted(ctx context.Context, tx *sql.Tx, ids []int64, stored **drovertype.JobRow) error {
	*stored = nil
	if len(ids) != 1 || ids[0] == 0 {
		return nil
	}
	row, err := e.get(ctx, tx, ids[0])
	if err != nil {
		return err
	}
	*stored = row
	return nil
}
