package droversqlite

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/sqlfile"
)

// Shared writes. A round (rounds.go) gives the writes queued while a
// transaction ran one transaction, but each still ran its own statements:
// with many clients in one process, each claiming and flushing its own
// small batches, a round at 64 client streams held a claim or a flush for
// nearly every job it inserted (issue 36: 1.87 writes per job against
// 1.39 at 4 streams, on a writer busy 90% of the time), and one insert
// per job from callers that insert one job at a time. Writes of one round
// that ask the same of the store now run as one: the plain claims of one
// queue (the same statement, kinds and lease) as one claim for all their
// claimers, each row under its own claimer's owner and lease token, the
// finishes of the engine's plain path as one batch, and the inserts of
// plain jobs (no key, unique key or routing) as one insert, each job at
// its own caller's time.
//
// What each caller gets is what its own write would have given it: its
// claim's rows, every one stored under its owner and token (the claimers
// of a shared claim take the rows in claim order, the first claimer's
// share first), and its finish's outcome. A shared write that fails (a
// finish whose results did not all pass their fences, a statement error)
// is rolled back to its savepoint and each of its callers' writes runs
// alone in its place, as before, so that a caller's outcome never depends
// on another's results. A caller whose context ends before the round
// runs is left out of a shared write, and fails alone as before; one whose
// context ends while the shared write runs gets its outcome, which the
// commit holds. Which writes may share is the driver's decision
// about how it runs the statements it was asked for: the engine asked for
// each claim and finish as it always has.

// sharedWrite is the part of a write that can run together with the
// other writes of its round that share its key.
type sharedWrite interface {
	// shareKey names the writes this one can run with; "" for none.
	shareKey() string
	// early says that the writes run in the place of the first of them,
	// not of the last (rounds.go). Either is sound, since none of their
	// callers has an outcome before the round commits: inserts run early,
	// so that the claims of their round see their jobs, and claims late,
	// so that they see every insert queued before them.
	early() bool
	// runShared runs the writes of parts (this one among them, all of its
	// type and key) as one, in tx, and gives each its outcome; or it
	// fails, and then none has one and the caller rolls tx back to before
	// it.
	runShared(ctx context.Context, e *executor, tx *sql.Tx, parts []sharedWrite) error
}

// withClaimShared adds name+"Slots" to q: the claim statement name for
// several claimers (sqlfile.WithClaimSlots). ?3, the owner, becomes a
// JSON array of the claimers' slots, [owner, token in hex, first, last],
// first and last the claim order numbers of the rows the slot takes; each
// row picked is numbered in claim order and stored under its slot's owner
// and token (?7, the first slot's token, only where a row had none, which
// the slots' ranges, covering ?2 rows, rule out); and the rows return
// their owner and token, so that each can be handed to its claimer. The
// slots are read from their JSON once (MATERIALIZED), not again for each
// row picked, which cost a third of a 64-stream run's CPU.
func withClaimShared(q map[string]string, name, prefix string) error {
	return sqlfile.WithClaimSlots(q, name,
		[2]string{"UPDATE " + prefix + "jobs\nSET state",
			"WITH s AS MATERIALIZED (SELECT value ->> '$[0]' AS owner, value ->> '$[1]' AS token,\n" +
				"        value ->> '$[2]' AS first, value ->> '$[3]' AS last FROM json_each(?3))\n" +
				"UPDATE " + prefix + "jobs\nSET state"},
		[2]string{"lease_owner = ?3,", "lease_owner = s.owner,"},
		[2]string{"lease_token = ?7", "lease_token = coalesce(unhex(s.token), ?7)"},
		[2]string{"WHERE id IN (\n    SELECT id FROM " + prefix + "jobs",
			"FROM (SELECT id AS picked, row_number() OVER (ORDER BY priority, run_at, id) AS n FROM (\n    SELECT id, priority, run_at FROM " + prefix + "jobs"},
		[2]string{"    LIMIT ?2\n)",
			"    LIMIT ?2)) AS p\n" +
				"JOIN s ON p.n BETWEEN s.first AND s.last\n" +
				"WHERE id = p.picked"},
		[2]string{"    error_count", "    error_count, lease_owner, lease_token"})
}

// claimShare is a plain claim's part: what it asks of the queue, and the
// scanner its rows go to.
type claimShare struct {
	p     droverdriver.ClaimParams
	kinds string
	token drovertype.LeaseToken
	sc    *scanner
}

// shareKey: claims share when they run the same statement with the same
// parameters but for their owners, tokens and sizes. Limited claims (a
// queue's limits decide their room, and may make them strict) and claims
// past a position keep their own statements.
func (c *claimShare) shareKey() string {
	p := &c.p
	switch {
	case p.Limited || p.After != nil:
		return ""
	case p.Variant != droverdriver.ClaimPlain && p.Variant != droverdriver.ClaimKinds && p.Variant != droverdriver.ClaimExcept:
		return ""
	}
	return strings.Join([]string{"claim", p.Queue, strconv.Itoa(int(p.Variant)), c.kinds, p.Lease.String(),
		strconv.FormatInt(p.Now.UnixNano(), 10), strconv.FormatBool(p.Now.IsZero())}, "\x00")
}

func (c *claimShare) early() bool { return false }

// runShared claims for every part in one statement, each part's slot the
// next p.Max rows in claim order, and hands each part the rows stored
// under its token.
func (c *claimShare) runShared(ctx context.Context, e *executor, tx *sql.Tx, parts []sharedWrite) error {
	claims := make([]*claimShare, len(parts))
	byToken := make(map[drovertype.LeaseToken]*claimShare, len(parts))
	var slots strings.Builder
	slots.WriteByte('[')
	total := 0
	for i, part := range parts {
		c := part.(*claimShare)
		if byToken[c.token] != nil {
			return errors.New("two claims of the round share a lease token")
		}
		claims[i], byToken[c.token] = c, c
		if i > 0 {
			slots.WriteByte(',')
		}
		owner, err := json.Marshal(c.p.Owner)
		if err != nil {
			return err
		}
		fmt.Fprintf(&slots, "[%s,%q,%d,%d]", owner, hex.EncodeToString(c.token[:]), total+1, total+c.p.Max)
		total += c.p.Max
	}
	slots.WriteByte(']')
	// As JobClaim's own statement: the clock read under the write lock, a
	// claimer's clock for what is due.
	real := fromMicros(micros(time.Now()))
	now := real
	if !c.p.Now.IsZero() {
		now = fromMicros(micros(c.p.Now))
	}
	lease := real.Add(c.p.Lease).Truncate(time.Microsecond)
	// The rows come in chunks of what one claim asks at most: the slots
	// together may ask for thousands of rows that a queue does not have,
	// and a scanner sized for them cleared that much memory each time.
	sc := newScanner(min(total, maxSlotRows(claims)))
	sc.claim = &claimed{queue: c.p.Queue, attemptedAt: now, lease: lease}
	cp := claimParams{Queue: c.p.Queue, Max: total, Owner: slots.String(), Now: micros(now), Lease: micros(lease), Token: claims[0].token[:]}
	var err error
	switch c.p.Variant {
	case droverdriver.ClaimKinds:
		err = jobClaimKindsShared.query(ctx, e, tx, e.writer, sc.scanShared, claimKindsParams{cp, c.kinds})
	case droverdriver.ClaimExcept:
		err = jobClaimExceptShared.query(ctx, e, tx, e.writer, sc.scanShared, claimKindsParams{cp, c.kinds})
	default:
		err = jobClaimShared.query(ctx, e, tx, e.writer, sc.scanShared, cp)
	}
	if err != nil {
		return err
	}
	for _, c := range claims {
		c.sc.jobs = c.sc.jobs[:0]
	}
	for _, j := range sc.jobs {
		c := byToken[j.LeaseToken]
		if c == nil || j.LeaseOwner != c.p.Owner {
			return fmt.Errorf("job %d was claimed under a slot no claim of the round holds", j.ID)
		}
		c.sc.jobs = append(c.sc.jobs, j)
	}
	return nil
}

// maxSlotRows is the most rows one of claims asks for.
func maxSlotRows(claims []*claimShare) int {
	most := 0
	for _, c := range claims {
		most = max(most, c.p.Max)
	}
	return most
}

// scanShared reads a row of a claim for several claimers: JobClaim's
// columns, then the row's owner and lease token.
func (sc *scanner) scanShared(rows *sql.Rows) error {
	var owner string
	var token []byte
	dest := append(sc.dest[:claimColumns:claimColumns], &owner, &token)
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	if len(token) != len(sc.claim.token) {
		return fmt.Errorf("a claimed row's lease token has %d bytes", len(token))
	}
	sc.claim.owner = owner
	copy(sc.claim.token[:], token)
	return sc.claimedRow()
}

// finishShare is a finish's part on the engine's plain path, where
// every result is bet to pass its fence (JobFinishMany).
type finishShare struct {
	results []droverdriver.Result // each job once
	refuse  int
	res     *droverdriver.FinishResult
}

// shareKey: finishes that refuse the same flows share. The engine's side
// path (Refuse 0) reads back what it applied, and keeps its own.
func (f *finishShare) shareKey() string {
	if f.refuse == 0 {
		return ""
	}
	return "finish\x00" + strconv.Itoa(f.refuse)
}

func (f *finishShare) early() bool { return false }

// runShared applies every part's results in one batch, betting, as each
// part's own finish would, that all pass their fences: a lost bet fails
// the shared finish, and each part then finishes alone, learning which
// of its own results passed.
func (f *finishShare) runShared(ctx context.Context, e *executor, tx *sql.Tx, parts []sharedWrite) error {
	var all []droverdriver.Result
	seen := map[int64]bool{}
	for _, part := range parts {
		for _, r := range part.(*finishShare).results {
			if seen[r.ID] {
				return fmt.Errorf("job %d has results in two finishes of the round", r.ID)
			}
			seen[r.ID] = true
			all = append(all, r)
		}
	}
	buf := getBuf()
	defer putBuf(buf)
	var kinds resultKinds
	*buf, kinds = appendResults((*buf)[:0], all)
	n, err := e.applyResults(ctx, tx, string(*buf), micros(time.Now()), kinds, f.refuse)
	if err != nil {
		return err
	}
	if n != len(all) {
		return errBetLost
	}
	for _, part := range parts {
		*part.(*finishShare).res = droverdriver.FinishResult{All: true}
	}
	return nil
}

// insertShare is an insert's part when all its jobs are plain: the jobs,
// the time its caller inserts them at, and where their IDs (and, for
// JobInsert, the one job as stored) go.
type insertShare struct {
	jobs   []droverdriver.InsertParams
	now    any
	ids    *[]int64
	stored **drovertype.JobRow
}

func (s *insertShare) shareKey() string { return "insert" }

func (s *insertShare) early() bool { return true }

// runShared inserts every part's jobs with the multi-row statements, in
// the parts' order, so that each part's jobs take consecutive IDs, and
// reads back the job of each part that asks for it.
func (s *insertShare) runShared(ctx context.Context, e *executor, tx *sql.Tx, parts []sharedWrite) error {
	var jobs []droverdriver.InsertParams
	var nows []any
	for _, part := range parts {
		p := part.(*insertShare)
		jobs = append(jobs, p.jobs...)
		for range p.jobs {
			nows = append(nows, p.now)
		}
	}
	if err := e.raiseSequence(ctx, tx); err != nil {
		return err
	}
	ids := make([]int64, 0, len(jobs))
	args := make([]any, 0, min(len(jobs), insertSizes[0])*insertColumns)
	if err := e.insertFamily(ctx, tx, &plainInserts, jobs, s.now, nows, args, &ids); err != nil {
		return err
	}
	for _, part := range parts {
		p := part.(*insertShare)
		*p.ids = append((*p.ids)[:0], ids[:len(p.jobs)]...)
		if p.stored != nil {
			if err := e.readInserted(ctx, tx, *p.ids, p.stored); err != nil {
				return err
			}
		}
		ids = ids[len(p.jobs):]
	}
	return nil
}
