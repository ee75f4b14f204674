package drover

import (
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/validate"
)

// Keyed jobs and unique jobs.
//
// A keyed job (InsertOpts.Key) holds one of its key's KeyLimit slots from
// insert until it finishes: while it waits, runs and waits for a retry.
// Jobs that find no free slot are stored as blocked, outside the claim
// index, so claims never read them and a long backlog of one key slows no
// other key. Finishing a keyed job promotes the oldest blocked job of its
// key in the same transaction; plain jobs skip that work, because only
// results whose claimed row carried a key take that path. The store
// serialises the insert and promotion of one key (advisory locks on
// PostgreSQL, the write lock on SQLite); different keys never wait on each
// other.
//
// A unique job (InsertOpts.UniqueKey) is skipped, and reported so, while
// another job holds the same unique key: an unfinished one, or a finished
// one whose final state is in its UniqueStates. Keys live in the store's
// unique_keys table under a unique index, so two concurrent inserts cannot
// both succeed. The insert takes the key in the statement that stores the
// job; the transaction that ends the job frees it unless the final state
// keeps it; only jobs flagged FlowUnique at claim take that extra step.

// MaxKeyLimit bounds InsertOpts.KeyLimit.
const MaxKeyLimit = 10_000

// MaxKeyRate bounds InsertOpts.KeyRate.
const MaxKeyRate = 1_000_000

// maxKeyBytes bounds keys and unique keys: they are indexed.
const maxKeyBytes = 255

// setOrderOpts checks the key and uniqueness options of o and sets them on
// p. now places the job in its uniqueness window.
func setOrderOpts(p *droverdriver.InsertParams, o *InsertOpts, now time.Time) error {
	if err := checkKey("key", o.Key); err != nil {
		return err
	}
	if o.Key == "" && o.KeyLimit != 0 {
		return invalidf("key limit %d: set Key too, the limit applies per key", o.KeyLimit)
	}
	if o.Key != "" {
		limit := o.KeyLimit
		if limit == 0 {
			limit = 1
		}
		if limit < 1 || limit > MaxKeyLimit {
			return invalidf("key limit %d: must be between 1 and %d", o.KeyLimit, MaxKeyLimit)
		}
		p.Key, p.KeyLimit = o.Key, limit
	}
	if err := setKeyRate(p, o); err != nil {
		return err
	}
	if err := checkKey("unique key", o.UniqueKey); err != nil {
		return err
	}
	if strings.ContainsRune(o.UniqueKey, uniqueSep) {
		// Refused rather than escaped: a key holding the separator could
		// spell another key's window (uniqueKey) and so squat it.
		return invalidf("unique key: contains U+001F, the separator of a stored key's parts")
	}
	if o.UniquePeriod < 0 || (o.UniquePeriod > 0 && o.UniquePeriod < time.Microsecond) {
		return invalidf("unique period %s: must be zero (no window) or at least 1µs", o.UniquePeriod)
	}
	if o.UniqueKey == "" && o.UniquePeriod != 0 {
		return invalidf("unique period %s: set UniqueKey too", o.UniquePeriod)
	}
	if o.UniqueKey == "" && o.UniqueStates != nil {
		return invalidf("unique states %v: set UniqueKey too", o.UniqueStates)
	}
	if o.UniqueKey == "" && o.UniqueByQueue {
		return invalidf("unique by queue: set UniqueKey too")
	}
	if o.UniqueKey != "" {
		final, err := uniqueFinal(o.UniqueStates)
		if err != nil {
			return err
		}
		p.UniqueKey = uniqueKey(p.Kind, o.UniqueKey, o.UniquePeriod, now)
		p.UniqueFinal = final
		p.UniqueByQueue = o.UniqueByQueue
	}
	return nil
}

// uniqueFinal checks UniqueStates and returns the final states it lists as
// droverdriver.FinalBit bits. Nil is the default: unfinished states only.
func uniqueFinal(states []drovertype.JobState) (int, error) {
	if states == nil {
		return 0, nil
	}
	final := 0
	listed := map[drovertype.JobState]bool{}
	for _, s := range states {
		if !s.Valid() {
			return 0, invalidf("unique states: unknown state %s (use %v)", validate.Echo(string(s)), drovertype.JobStates())
		}
		listed[s] = true
		final |= droverdriver.FinalBit(s)
	}
	var missing []drovertype.JobState
	for _, s := range drovertype.UnfinishedStates() {
		if !listed[s] {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return 0, invalidf("unique states %v: must include every unfinished state, missing %v (start from UnfinishedStates())", states, missing)
	}
	return final, nil
}

// setKeyRate checks the per-key rate of o and sets it on p.
func setKeyRate(p *droverdriver.InsertParams, o *InsertOpts) error {
	switch {
	case o.KeyRate == 0 && o.KeyRatePeriod == 0:
		return nil
	case o.KeyRate == 0:
		return invalidf("key rate period %s: set KeyRate too", o.KeyRatePeriod)
	case o.Key == "":
		return invalidf("key rate %d: set Key too, the rate applies per key", o.KeyRate)
	case o.KeyRate < 0 || o.KeyRate > MaxKeyRate:
		return invalidf("key rate %d: must be between 1 and %d", o.KeyRate, MaxKeyRate)
	case o.KeyRatePeriod < time.Millisecond || o.KeyRatePeriod%time.Millisecond != 0:
		return invalidf("key rate period %s: must be a whole number of milliseconds, at least 1ms", o.KeyRatePeriod)
	}
	p.KeyRate, p.KeyRatePeriod = o.KeyRate, o.KeyRatePeriod
	return nil
}

func checkKey(what, key string) error {
	if len(key) > maxKeyBytes {
		return invalidf("%s %s: must be at most %d bytes", what, validate.Echo(key), maxKeyBytes)
	}
	return validate.Text(what, key)
}

// uniqueKey is what the store's unique index holds besides the kind and,
// with UniqueByQueue, the queue (columns of their own since migration 009):
// the kind again (so that two kinds never collide, as keys stored before
// that migration spell it), the caller's key and, with a period, the start of
// the window now falls in. A unit separator (0x1f) joins them; kinds cannot
// contain it.
func uniqueKey(kind, key string, period time.Duration, now time.Time) string {
	s := kind + string(uniqueSep) + key
	if period > 0 {
		us, step := now.UnixMicro(), period.Microseconds()
		s += string(uniqueSep) + strconv.FormatInt(us-us%step, 10)
	}
	return s
}

// uniqueSep joins the parts of a stored unique key. Neither kinds nor
// callers' keys may contain it, so that no key can spell another's parts.
const uniqueSep = '\x1f'
