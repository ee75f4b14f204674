package droverpg

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/driverrows"
)

// dbtx is what both a pool and a transaction offer.
type dbtx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	Begin(ctx context.Context) (pgx.Tx, error)
}

// executor runs the driver's statements on a pool or on a caller's
// transaction.
type executor struct {
	db dbtx
	// waker announces inserts after they commit; nil when the executor
	// runs in a transaction.
	waker *waker
	// pending collects the queues to wake when the executor runs in a Tx:
	// the Tx announces them once it commits. Nil otherwise.
	pending wakeSet
	q       map[string]string
	schema  string
	channel string
}

// insertChunk bounds the rows of one INSERT statement: large enough that
// per-statement overhead vanishes, small enough that parameter arrays stay
// cheap to build and send.
const insertChunk = 5000

func (e *executor) JobInsertMany(ctx context.Context, jobs []droverdriver.InsertParams) ([]int64, error) {
	return e.insert(ctx, jobs, nil)
}

// insert runs the statements of JobInsertMany in one round trip. With
// stored set, for one job (JobInsert), the round trip ends with
// JobInserted, which reads the job back as stored.
func (e *executor) insert(ctx context.Context, jobs []droverdriver.InsertParams, stored **drovertype.JobRow) ([]int64, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	now := time.Now()
	b := &pgx.Batch{}
	notify := wakeSet{}
	// order: jobs with a key or a unique key take their own statement
	// (keyed.go); plain jobs keep the one below. out maps each plain job
	// back to its input position.
	plain, special, out := driverrows.SplitSpecial(jobs)
	if len(special) > 0 {
		e.queueKeyedInsert(b, special, now, notify)
	}
	jobs = plain
	for start := 0; start < len(jobs); start += insertChunk {
		chunk := jobs[start:min(start+insertChunk, len(jobs))]
		for i := range chunk {
			if chunk[i].Due(now) {
				notify.count(chunk[i].Queue)
			}
		}
		jobInsertMany.queue(b, e.q, columnsOf(chunk))
	}
	if stored != nil {
		jobInserted.queue(b, e.q, pgx.Identifier{e.schema, "jobs"}.Sanitize())
	}
	// In a caller's transaction the notification is part of it; otherwise
	// the waker sends it once the batch has committed (waker.go).
	inCallerTx := e.waker == nil && e.pending == nil && len(notify) > 0
	if inCallerTx {
		notifyStmt.queue(b, e.q, notifyParams{Channel: e.channel, Payloads: notify.payloads()})
	}
	br := e.db.SendBatch(ctx, b)
	defer br.Close()
	var specialIDs []int64
	if len(special) > 0 {
		var err error
		if specialIDs, err = readKeyedInsert(br, special); err != nil {
			return nil, e.wrap("insert jobs", err)
		}
	}
	ids := make([]int64, 0, len(jobs))
	for start := 0; start < len(jobs); start += insertChunk {
		rows, err := br.Query()
		if err != nil {
			return nil, e.wrap("insert jobs", err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, e.wrap("insert jobs", err)
			}
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil {
			return nil, e.wrap("insert jobs", err)
		}
	}
	if stored != nil {
		row, err := scanJob(br.QueryRow())
		if err != nil && !errors.Is(err, pgx.ErrNoRows) { // no row: a unique job skipped
			return nil, e.wrap("read inserted job", err)
		}
		*stored = row
	}
	if inCallerTx {
		if _, err := br.Exec(); err != nil {
			return nil, e.wrap("notify", err)
		}
	}
	if err := br.Close(); err != nil {
		return nil, e.wrap("insert jobs", err)
	}
	e.wakeAfter(notify)
	return out.Merge(ids, specialIDs), nil
}

// replan runs a statement as an unnamed one, planned afresh with its
// parameters at every execution, instead of as a cached prepared statement.
// The hot table swings between nearly empty and hundreds of thousands of
// rows, and a cached generic plan made while it was small (a scan of the
// whole table, cheap then) stays cached while the table grows, until the
// next ANALYZE: measured as claims of 0.5–30 s, and the rate near 0, for
// 45–70 s early in steady runs. A fresh plan sees the table's current size.
// Claims and finishes each cover a batch of jobs, so planning them every
// time costs little.
//
// The statement's description (its parameter and result types) is cached
// per connection, which lets pgx ask for results in binary: a claim's
// timestamps, arrays and counters then decode without parsing text, which
// took 5 of a noop worker process's 60% CPU (docs/design/claim-and-flush.md).
const replan = pgx.QueryExecModeCacheDescribe

func (e *executor) JobClaim(ctx context.Context, p droverdriver.ClaimParams) ([]*drovertype.JobRow, error) {
	return e.claim(ctx, p, nil)
}

// claim is JobClaim, and with slots JobClaimSlots (routing.go).
func (e *executor) claim(ctx context.Context, p droverdriver.ClaimParams, slots []droverdriver.ClaimSlot) ([]*drovertype.JobRow, error) {
	if p.Kinds != nil && len(p.Kinds) == 0 {
		return []*drovertype.JobRow{}, nil
	}
	// One token per claim: see drovertype.LeaseToken.
	token := p.Token
	if token.IsZero() {
		token = drovertype.NewLeaseToken()
	}
	cp := claimParams{Queue: p.Queue, Max: p.Max, Owner: p.Owner, LeaseMS: float64(p.Lease.Milliseconds()), Limited: p.Limited, Token: token,
		slots: slots}
	if !p.Now.IsZero() {
		cp.Now = &p.Now
	}
	var jobs []*drovertype.JobRow
	var err error
	switch {
	case p.Variant == droverdriver.ClaimStrict && (e.waker != nil || e.pending != nil):
		// routing.go: a strict queue's lock and head in one round trip,
		// committed without waiting for the disk; never so in a caller's
		// transaction, whose own writes must stay durable.
		jobs, err = e.claimStrict(ctx, p, token, cp)
	case p.Limited:
		// order: a limited queue's claim runs in a transaction that first
		// finds its room (limits.go).
		jobs, err = e.claimLimited(ctx, p, token, cp)
	default:
		var rows pgx.Rows
		if rows, err = e.claimQuery(ctx, e.db, p.Variant, p, cp); err == nil {
			jobs, err = scanClaimed(rows, p, token, slots != nil)
		}
	}
	if err != nil {
		return nil, e.wrap("claim jobs", err)
	}
	return jobs, nil
}

// claimQuery runs the claim statement v names (ClaimParams.Variant, which
// the engine chose): each takes the parts of p it is named after.
func (e *executor) claimQuery(ctx context.Context, db dbtx, v droverdriver.ClaimVariant, p droverdriver.ClaimParams, cp claimParams) (pgx.Rows, error) {
	switch {
	case cp.slots != nil && v == droverdriver.ClaimStrict:
		return jobClaimStrictSlots.query(ctx, db, e.q, strictSlotsParams(p, cp))
	case cp.slots != nil:
		return jobClaimRoutedSlots.query(ctx, db, e.q, slotsParams(p, cp))
	}
	switch v {
	case droverdriver.ClaimStrict:
		return jobClaimStrict.query(ctx, db, e.q, routedParams(p, cp))
	case droverdriver.ClaimRouted:
		return jobClaimRouted.query(ctx, db, e.q, routedParams(p, cp))
	case droverdriver.ClaimKindsAfter:
		return jobClaimKindsAfter.query(ctx, db, e.q, claimKindsAfterParams{afterParams(p, cp), p.Kinds})
	case droverdriver.ClaimKinds:
		return jobClaimKinds.query(ctx, db, e.q, claimKindsParams{cp, p.Kinds})
	case droverdriver.ClaimExceptAfter:
		return jobClaimExceptAfter.query(ctx, db, e.q, claimKindsAfterParams{afterParams(p, cp), p.ExceptKinds})
	case droverdriver.ClaimExcept:
		return jobClaimExcept.query(ctx, db, e.q, claimKindsParams{cp, p.ExceptKinds})
	case droverdriver.ClaimAfter:
		return jobClaimAfter.query(ctx, db, e.q, afterParams(p, cp))
	}
	return jobClaim.query(ctx, db, e.q, cp)
}

// afterParams are cp with p.After, the position the claim starts past.
func afterParams(p droverdriver.ClaimParams, cp claimParams) claimAfterParams {
	return claimAfterParams{cp, int16(p.After.Priority), p.After.RunAt, p.After.ID}
}

// scanClaimed reads the rows of p's claim, closes them and sorts them: the
// claim returns them in the order it updated them, which is their order on
// disk, and leaves out the queue, lease owner and lease token, which p and
// token name; a claim for several claimers (slots) returns each row's
// owner, token and routing.
func scanClaimed(rows pgx.Rows, p droverdriver.ClaimParams, token drovertype.LeaseToken, slots bool) ([]*drovertype.JobRow, error) {
	defer rows.Close()
	jobs := make([]*drovertype.JobRow, 0, p.Max)
	var a claimArena
	// Every row scans into r and the variables beside it, through one
	// list of destinations: a list per row escapes to the heap.
	var r drovertype.JobRow
	var kind, args, metadata pgtype.DriverBytes
	var timeoutMS int64
	var key *string
	var attemptedAt, expiresAt time.Time
	dest := []any{&r.ID, &kind, &r.Priority, &args, &metadata, &r.Tags, &r.Attempt,
		&r.MaxAttempts, &r.Errors, &r.ErrorCount, &timeoutMS, &r.CreatedAt, &r.RunAt, &attemptedAt,
		&expiresAt, &r.CancelRequested, &r.BatchID, &r.Flow, &key}
	var owner string
	var slotToken [16]byte
	var routing []byte
	if slots {
		dest = append(dest, &owner, &slotToken, &routing)
	}
	for rows.Next() {
		r.Tags, r.Errors, key, routing = nil, nil, nil, nil
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		j := a.row()
		*j = r
		j.State, j.Queue, j.LeaseOwner, j.LeaseToken = drovertype.JobStateRunning, p.Queue, p.Owner, token
		if slots {
			j.LeaseOwner, j.LeaseToken = owner, slotToken
			var err error
			if j.Routing, err = droverdriver.DecodeRouting(routing); err != nil {
				return nil, err
			}
		}
		j.Kind, j.EncodedArgs, j.Metadata = a.kind(kind), a.bytes(args), a.bytes(metadata)
		times := a.times()
		times[0], times[1] = attemptedAt, expiresAt
		j.AttemptedAt, j.LeaseExpiresAt = &times[0], &times[1]
		j.Timeout = time.Duration(timeoutMS) * time.Millisecond
		if key != nil {
			j.Key = *key
		}
		jobs = append(jobs, j)
	}
	driverrows.SortClaimed(jobs)
	return jobs, rows.Err()
}

// finishStatement returns the statement that finishes results and its
// arguments, and how to read its rows: JobComplete when every result
// completes its job without an error and every one asks the same of
// Forget, JobFinish otherwise. Jobs whose stored flow has a bit of refuse
// are turned away.
func (e *executor) finishStatement(results []droverdriver.Result, refuse int) (bound, finishReader) {
	forget := results[0].Forget
	for i := range results {
		if r := &results[i]; r.Outcome != droverdriver.OutcomeCompleted || r.Error != nil || r.Forget != forget {
			return jobFinish.bind(e.finishArgs(results, refuse)), readFinished
		}
	}
	ids := make([]int64, len(results))
	keys := attemptKeys(len(results), func(i int) (int64, int) { return results[i].ID, results[i].Attempt })
	var tokens tokenSet
	var outputs []byte // a JSON object by job ID; nil (SQL NULL) unless some result has one
	for i := range results {
		r := &results[i]
		ids[i] = r.ID
		tokens.add(r.LeaseToken)
		if r.Output != nil {
			if outputs == nil {
				outputs = append(outputs, '{')
			} else {
				outputs = append(outputs, ',')
			}
			outputs = append(appendKey(outputs, r.ID), r.Output...)
		}
	}
	var out *string
	if outputs != nil {
		o := string(append(outputs, '}'))
		out = &o
	}
	return jobComplete.bind(completeParams{IDs: ids, Keys: keys, Outputs: out, Refuse: int32(refuse), Forget: forget, Tokens: tokens.uuids}),
		readCompleted
}

// finishReader reads the rows of a finish statement for n results.
type finishReader func(rows pgx.Rows, n int) (droverdriver.FinishResult, error)

// attemptKeys returns n attempts, the i-th job's ID and attempt number
// from at, as JobComplete and JobHeartbeat test them: "id:attempt". The
// lease token is tested apart (tokenSet). The keys are parts of one
// string: one allocation for a batch rather than one per key.
func attemptKeys(n int, at func(i int) (id int64, attempt int)) []string {
	b := make([]byte, 0, 16*n)
	ends := make([]int, n)
	for i := range n {
		id, attempt := at(i)
		b = strconv.AppendInt(b, id, 10)
		b = strconv.AppendInt(append(b, ':'), int64(attempt), 10)
		ends[i] = len(b)
	}
	all := string(b)
	keys := make([]string, n)
	start := 0
	for i, end := range ends {
		keys[i], start = all[start:end], end
	}
	return keys
}

// tokenSet gathers the distinct lease tokens of a batch of attempts, for
// the "lease_token = ANY(…)" half of the fence. Attempts come grouped by
// the claim that issued them, so comparing with the last token added
// catches nearly every repeat, and the set stays a handful long.
type tokenSet struct {
	uuids []pgtype.UUID
}

func (s *tokenSet) add(t drovertype.LeaseToken) {
	for i := len(s.uuids) - 1; i >= 0; i-- {
		if s.uuids[i].Bytes == t {
			return
		}
	}
	s.uuids = append(s.uuids, pgtype.UUID{Bytes: t, Valid: true})
}

// appendUUID appends t in PostgreSQL's text form of a uuid,
// 8-4-4-4-12 lowercase hex digits, as JobFinish reads it from its JSON.
func appendUUID(b []byte, t drovertype.LeaseToken) []byte {
	const hex = "0123456789abcdef"
	for i, c := range t {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hex[c>>4], hex[c&0xf])
	}
	return b
}

// finishArgs returns the JobFinish parameters for results: their IDs, each
// result as a JSON array keyed by ID, and the flow bits that turn a job
// away.
func (e *executor) finishArgs(results []droverdriver.Result, refuse int) finishParams {
	ids := make([]int64, len(results))
	b := make([]byte, 0, 32*len(results))
	b = append(b, '{')
	for i := range results {
		r := &results[i]
		ids[i] = r.ID
		if i > 0 {
			b = append(b, ',')
		}
		b = append(appendKey(b, r.ID), '[')
		b = append(strconv.AppendInt(b, int64(r.Attempt), 10), ',')
		b = append(strconv.AppendInt(b, int64(r.Outcome), 10), ',')
		b = append(appendJSONOrNull(b, r.Error), ',')
		if r.RunAt.IsZero() {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendQuote(b, r.RunAt.Format(time.RFC3339Nano))
		}
		b = append(appendJSONOrNull(append(b, ','), r.Output), ',')
		b = append(strconv.AppendBool(b, r.Forget), ',', '"')
		b = append(appendUUID(b, r.LeaseToken), '"', ']')
	}
	return finishParams{IDs: ids, Results: string(append(b, '}')), Refuse: int32(refuse)}
}

// appendKey appends a job ID as the key of a JSON object member: "id":.
func appendKey(b []byte, id int64) []byte {
	b = strconv.AppendInt(append(b, '"'), id, 10)
	return append(b, '"', ':')
}

// appendJSONOrNull appends encoded JSON, or null for none.
func appendJSONOrNull(b, js []byte) []byte {
	if js == nil {
		return append(b, "null"...)
	}
	return append(b, js...)
}

func (e *executor) JobHeartbeat(ctx context.Context, p droverdriver.HeartbeatParams) (droverdriver.HeartbeatResult, error) {
	var res droverdriver.HeartbeatResult
	if len(p.Attempts) != len(p.IDs) || len(p.Tokens) != len(p.IDs) {
		return res, fmt.Errorf("heartbeat: %d IDs but %d attempts and %d tokens", len(p.IDs), len(p.Attempts), len(p.Tokens))
	}
	keys := attemptKeys(len(p.IDs), func(i int) (int64, int) { return p.IDs[i], p.Attempts[i] })
	var tokens tokenSet
	for _, tok := range p.Tokens {
		tokens.add(tok)
	}
	rows, err := jobHeartbeat.query(ctx, e.db, e.q, heartbeatParams{IDs: p.IDs, Keys: keys, LeaseMS: float64(p.Lease.Milliseconds()), Tokens: tokens.uuids})
	if err != nil {
		return res, e.wrap("heartbeat", err)
	}
	defer rows.Close()
	held := make(map[int64]bool, len(p.IDs))
	for rows.Next() {
		var id int64
		var cancel bool
		if err := rows.Scan(&id, &cancel); err != nil {
			return res, e.wrap("heartbeat", err)
		}
		held[id] = true
		if cancel {
			res.CancelRequested = append(res.CancelRequested, id)
		}
	}
	if err := rows.Err(); err != nil {
		return res, e.wrap("heartbeat", err)
	}
	for _, id := range p.IDs {
		if !held[id] {
			res.Lost = append(res.Lost, id)
		}
	}
	return res, nil
}

func (e *executor) JobRescue(ctx context.Context, p droverdriver.RescueParams) ([]droverdriver.FinishedRow, error) {
	rows, err := jobRescue.query(ctx, e.db, e.q, rescueParams{Now: p.Now, Limit: p.Limit})
	if err != nil {
		return nil, e.wrap("rescue jobs", err)
	}
	res, err := readFinished(rows, 0)
	return res.Applied, e.wrap("rescue jobs", err)
}

func (e *executor) JobPrune(ctx context.Context, p droverdriver.PruneParams) (int, error) {
	pp, ok := pruneArgs(p)
	if !ok {
		return 0, nil // everything is kept forever
	}
	var n int
	if err := jobPrune.queryRow(ctx, e.db, e.q, pp).Scan(&n); err != nil {
		return 0, e.wrap("prune jobs", err)
	}
	return n, nil
}

// pruneArgs turns retentions into JobPrune's cutoffs: a negative retention
// keeps that state forever (no cutoff), and Latest is the latest cutoff,
// which bounds the scan. ok is false when every state is kept forever.
func pruneArgs(p droverdriver.PruneParams) (pp pruneParams, ok bool) {
	cutoff := func(d time.Duration) *time.Time {
		if d < 0 {
			return nil
		}
		t := p.Now.Add(-d)
		return &t
	}
	cutoffs := []*time.Time{cutoff(p.CompletedRetention), cutoff(p.CancelledRetention), cutoff(p.DiscardedRetention)}
	var latest *time.Time
	for _, c := range cutoffs {
		if c != nil && (latest == nil || c.After(*latest)) {
			latest = c
		}
	}
	return pruneParams{Completed: cutoffs[0], Cancelled: cutoffs[1], Discarded: cutoffs[2], Limit: p.Limit, Latest: latest}, latest != nil
}

// scanJob reads the column list shared by JobGet and JobList.
func scanJob(row pgx.Row) (*drovertype.JobRow, error) {
	j := &drovertype.JobRow{}
	var state string
	var timeoutMS int64
	var owner, key *string
	var batchID *int64
	var routing []byte
	err := row.Scan(&j.ID, &state, &j.Queue, &j.Kind, &j.Priority, &j.EncodedArgs, &j.Metadata, &j.Tags, &j.Attempt,
		&j.MaxAttempts, &j.Errors, &j.ErrorCount, &timeoutMS, &j.CreatedAt, &j.RunAt, &j.AttemptedAt, &j.FinalizedAt, &owner,
		&j.LeaseExpiresAt, &j.CancelRequested, &batchID, &key, &routing)
	if err != nil {
		return nil, err
	}
	if j.Routing, err = droverdriver.DecodeRouting(routing); err != nil {
		return nil, fmt.Errorf("job %d: routing: %w", j.ID, err)
	}
	if batchID != nil {
		j.BatchID = *batchID
	}
	if key != nil {
		j.Key = *key
	}
	j.State = drovertype.JobState(state)
	j.Timeout = time.Duration(timeoutMS) * time.Millisecond
	if owner != nil {
		j.LeaseOwner = *owner
	}
	return j, nil
}

func (e *executor) JobGet(ctx context.Context, id int64) (*drovertype.JobRow, error) {
	j, err := scanJob(jobGet.queryRow(ctx, e.db, e.q, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("job %d: %w", id, droverdriver.ErrNotFound)
	}
	if err != nil {
		return nil, e.wrap("get job", err)
	}
	return j, nil
}

// JobCancel runs the statement that ends the waiting jobs and flags the
// running ones, which it returns in state running.
func (e *executor) JobCancel(ctx context.Context, p droverdriver.CancelParams) ([]droverdriver.FinishedRow, []int64, error) {
	rows, err := e.ended(ctx, "cancel jobs", jobCancel.bind(cancelParams{p.IDs, p.Now, !p.LeaveRunning}))
	if err != nil {
		return nil, nil, err
	}
	ended := rows[:0]
	var flagged []int64
	for _, r := range rows {
		if r.State == drovertype.JobStateRunning {
			flagged = append(flagged, r.ID)
		} else {
			ended = append(ended, r)
		}
	}
	return ended, flagged, nil
}

func (e *executor) JobDiscard(ctx context.Context, ids []int64, now time.Time) ([]droverdriver.FinishedRow, error) {
	return e.ended(ctx, "discard jobs", jobDiscard.bind(jobsAt{ids, now}))
}

func (e *executor) JobDelete(ctx context.Context, ids []int64) ([]int64, error) {
	rows, err := jobDelete.query(ctx, e.db, e.q, ids)
	if err != nil {
		return nil, e.wrap("delete jobs", err)
	}
	deleted, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return deleted, e.wrap("delete jobs", err)
}

// ended runs a statement that ends jobs and returns them as JobFinish does.
func (e *executor) ended(ctx context.Context, op string, st bound) ([]droverdriver.FinishedRow, error) {
	rows, err := st.query(ctx, e.db, e.q)
	if err != nil {
		return nil, e.wrap(op, err)
	}
	res, err := readFinished(rows, 0)
	return res.Applied, e.wrap(op, err)
}

// JobRetry runs the statement that revives or reschedules the jobs and
// wakes the queues of those it made available.
func (e *executor) JobRetry(ctx context.Context, ids []int64, now time.Time) ([]droverdriver.RetriedRow, error) {
	rows, err := jobRetry.query(ctx, e.db, e.q, jobsAt{ids, now})
	if err != nil {
		return nil, e.wrap("retry jobs", err)
	}
	defer rows.Close()
	var out []droverdriver.RetriedRow
	var wake []string
	for rows.Next() {
		var r droverdriver.RetriedRow
		var key *string
		if err := rows.Scan(&r.ID, &r.Queue, &key, &r.Refused); err != nil {
			return nil, e.wrap("retry jobs", err)
		}
		if key != nil {
			r.Key = *key
		} else if r.Refused == 0 {
			wake = append(wake, r.Queue)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, e.wrap("retry jobs", err)
	}
	if err := e.announce(ctx, wake); err != nil {
		return nil, e.wrap("notify", err)
	}
	return out, nil
}

func (e *executor) JobCountByState(ctx context.Context, queue string) (map[drovertype.JobState]int64, error) {
	rows, err := jobCountByState.query(ctx, e.db, e.q, queue)
	if err != nil {
		return nil, e.wrap("count jobs", err)
	}
	defer rows.Close()
	counts := map[drovertype.JobState]int64{}
	for rows.Next() {
		var s string
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			return nil, e.wrap("count jobs", err)
		}
		counts[drovertype.JobState(s)] += n
	}
	return counts, e.wrap("count jobs", rows.Err())
}

func (e *executor) QueueStats(ctx context.Context, now time.Time) ([]drovertype.QueueStats, error) {
	rows, err := queueStats.query(ctx, e.db, e.q, now)
	if err != nil {
		return nil, e.wrap("queue stats", err)
	}
	defer rows.Close()
	var out []drovertype.QueueStats
	for rows.Next() {
		var q drovertype.QueueStats
		if err := rows.Scan(&q.Queue, &q.Available, &q.Scheduled, &q.Retryable, &q.Running, &q.OldestAvailable); err != nil {
			return nil, e.wrap("queue stats", err)
		}
		out = append(out, q)
	}
	return out, e.wrap("queue stats", rows.Err())
}

func (e *executor) FinishedStats(ctx context.Context, since, until time.Time) ([]drovertype.FinishedStats, error) {
	rows, err := finishedStats.query(ctx, e.db, e.q, timeRange{since, until})
	if err != nil {
		return nil, e.wrap("finished stats", err)
	}
	defer rows.Close()
	var out []drovertype.FinishedStats
	for rows.Next() {
		var f drovertype.FinishedStats
		var p50, p95, p99 float64
		if err := rows.Scan(&f.Queue, &f.Completed, &f.Cancelled, &f.Discarded, &p50, &p95, &p99); err != nil {
			return nil, e.wrap("finished stats", err)
		}
		f.PickupP50, f.PickupP95, f.PickupP99 = msDuration(p50), msDuration(p95), msDuration(p99)
		out = append(out, f)
	}
	return out, e.wrap("finished stats", rows.Err())
}

// msDuration converts fractional milliseconds.
func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func (e *executor) LeaseOwners(ctx context.Context) ([]drovertype.LeaseOwner, error) {
	rows, err := leaseOwners.query(ctx, e.db, e.q, struct{}{})
	if err != nil {
		return nil, e.wrap("lease owners", err)
	}
	defer rows.Close()
	var out []drovertype.LeaseOwner
	for rows.Next() {
		var o drovertype.LeaseOwner
		var owner *string
		if err := rows.Scan(&owner, &o.Running, &o.LeaseExpiresAt); err != nil {
			return nil, e.wrap("lease owners", err)
		}
		if owner != nil {
			o.Owner = *owner
		}
		out = append(out, o)
	}
	return out, e.wrap("lease owners", rows.Err())
}

func (e *executor) LeaderElect(ctx context.Context, p droverdriver.LeaderParams) (bool, error) {
	var holder string
	err := leaderElect.queryRow(ctx, e.db, e.q, leaderElectParams{Name: p.Name, ID: p.ID, TTLMS: float64(p.TTL.Milliseconds())}).Scan(&holder)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, e.wrap("elect leader", err)
	}
	return holder == p.ID, nil
}

func (e *executor) LeaderResign(ctx context.Context, name, id string) error {
	_, err := leaderResign.exec(ctx, e.db, e.q, leaderResignParams{name, id})
	return e.wrap("resign leader", err)
}

// wrap names the operation and turns a missing table into ErrSchemaMissing,
// whose message tells the user what to run.
func (e *executor) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if isUndefinedTable(err) {
		return fmt.Errorf("%s: %w: schema %q is not at the current version, run: drover migrate", op, droverdriver.ErrSchemaMissing, e.schema)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// JobInsert inserts one job like JobInsertMany and returns it as stored,
// read back in the same round trip (JobInserted).
func (e *executor) JobInsert(ctx context.Context, job droverdriver.InsertParams) (*drovertype.JobRow, error) {
	var row *drovertype.JobRow
	if _, err := e.insert(ctx, []droverdriver.InsertParams{job}, &row); err != nil {
		return nil, err
	}
	return row, nil
}
