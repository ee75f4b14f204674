// Package sqlcheck checks, for the drivers' tests, that the numbers their
// SQL spells for Go enums agree with droverdriver's constants: job
// outcomes (droverdriver.Outcome), flow bits (droverdriver.Flow*), unique-key final
// state bits (droverdriver.FinalBit) and state names (drovertype.JobState).
//
// The SQL writes each such number tagged with the constant it stands for,
// "IN (1 /*OutcomeCompleted*/, 3 /*OutcomeDiscarded*/)", "flow & 11
// /*FlowEnd*/": a comment to PostgreSQL and SQLite, and to this package the
// name to look up in droverdriver.SQLConstants (or in a driver's own
// Extras.Constants). A tag whose value differs, or a number left untagged
// where an outcome, a flow bit or a final-state bit is meant, is reported.
// It reads the statements as text, so it checks the spellings the drivers
// actually use and reports anything it cannot place rather than guess.
package sqlcheck

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Extras are a driver's own codes beyond the shared ones, which Enums
// accepts where it would otherwise report them.
type Extras struct {
	// Outcomes are private outcome codes and the state each ends a job in
	// (SQLite's packed 6: a completion whose job is deleted).
	Outcomes map[int]drovertype.JobState
	// Constants are the driver's own named constants that its SQL tags,
	// beside droverdriver.SQLConstants (SQLite's result packing).
	Constants map[string]int
	// Packed is a regular expression for the operators that unpack the
	// driver's own encoding (SQLite's `\bpacked\s*>>`): the number that
	// follows one must be tagged with one of Constants. Empty for a driver
	// without one.
	Packed string
}

// outcomeNames are the words the statements' "Outcomes:" comments use.
var outcomeNames = map[string]droverdriver.Outcome{
	"completed": droverdriver.OutcomeCompleted,
	"retry":     droverdriver.OutcomeRetry,
	"discarded": droverdriver.OutcomeDiscarded,
	"cancelled": droverdriver.OutcomeCancelled,
	"released":  droverdriver.OutcomeReleased,
}

// outcomeState is the state a job ends in for each outcome that ends it;
// the others (retry, released) leave it waiting.
var outcomeState = map[droverdriver.Outcome]drovertype.JobState{
	droverdriver.OutcomeCompleted: drovertype.JobStateCompleted,
	droverdriver.OutcomeDiscarded: drovertype.JobStateDiscarded,
	droverdriver.OutcomeCancelled: drovertype.JobStateCancelled,
}

// flowMasks are the flow values a statement may test or set: the named
// bits and unions.
var flowMasks = map[int]string{
	droverdriver.FlowBatchMember:            "FlowBatchMember",
	droverdriver.FlowHasDependants:          "FlowHasDependants",
	droverdriver.FlowReleaseOnParentFailure: "FlowReleaseOnParentFailure",
	droverdriver.FlowSettle:                 "FlowSettle",
	droverdriver.FlowUnique:                 "FlowUnique",
	droverdriver.FlowKeyed:                  "FlowKeyed",
	droverdriver.FlowHasParents:             "FlowHasParents",
	droverdriver.FlowEndTx:                  "FlowEndTx",
	droverdriver.FlowEnd:                    "FlowEnd",
	droverdriver.FlowKeep:                   "FlowKeep",
}

// num is a number in SQL, with the tag that names the constant it stands
// for when there is one: "11 /*FlowEnd*/".
const num = `\d+(?:\s*/\*\s*\w+\s*\*/)?`

var (
	lineComment = regexp.MustCompile(`--[^\n]*`)
	// A number and its tag, in a match of the expressions below or anywhere.
	numTag = regexp.MustCompile(`(\d+)(?:\s*/\*\s*(\w+)\s*\*/)?`)
	// A tagged number, not a parameter: "?4 /*after*/" is no tag.
	tagged = regexp.MustCompile(`(?:^|[^\w?$.])(\d+)\s*/\*\s*(\w+)\s*\*/`)
	// "Outcomes: 1 completed, 2 retry, …" in a statement's comment.
	outcomesDoc  = regexp.MustCompile(`Outcomes:((?:\s*\d+\s+[a-z]+,?)+)`)
	outcomesPair = regexp.MustCompile(`(\d+)\s+([a-z]+)`)
	// An expression that reads a result's outcome: a column or alias named
	// outcome, PostgreSQL's JSON element 1 of a result, SQLite's low three
	// bits of a packed result.
	outcomeExpr = `(?:\boutcome|->>\s*1\)::integer|\b(?:packed|value)\s*&\s*7(?:\s*/\*\s*\w+\s*\*/)?)`
	outcomeCmp  = regexp.MustCompile(outcomeExpr + `\s*(=|<>|IN)\s*(\((?:\s*` + num + `\s*,?)+\)|` + num + `)`)
	outcomeCase = regexp.MustCompile(`CASE\s+[\w.]*outcome\s+((?:WHEN\s+` + num + `\s+THEN\s+'[a-z]+'\s*)+)ELSE\s+'([a-z]+)'`)
	whenThen    = regexp.MustCompile(`WHEN\s+(` + num + `)\s+THEN\s+'([a-z]+)'`)
	// flow & 11, flow | 2 (also j.flow, and "flow &" in f.flow & 1 = 1),
	// with what the bits are compared with: "= 1" is a flow bit too.
	flowOp = regexp.MustCompile(`\bflow\s*([&|])\s*(` + num + `)(?:\s*(?:=|<>)\s*(` + num + `))?`)
	// The finish's returned bits, "SELECT id, flow & 27" or "SELECT id,
	// 'completed', flow & 27": FlowEnd, the bits that make the engine do
	// more than move the row. (The fence itself takes its bits as a
	// parameter, FinishParams.Refuse.)
	finishBits = regexp.MustCompile(`SELECT\s+[\w.]*id,\s*(?:[\w']+,\s*)?[\w.]*flow\s*&\s*(` + num + `)`)
	// Bare flow values written into the column: CASE … THEN 0 ELSE 8 END.
	flowCase = regexp.MustCompile(`CASE WHEN (?:unique_key|\?13) IS NULL THEN 0 ELSE (` + num + `) END`)
	// … | CASE WHEN ordering_key IS NULL THEN 0 ELSE 16 END.
	keyedCase = regexp.MustCompile(`CASE WHEN (?:[\w.]*ordering_key|\?11) IS NULL THEN 0 ELSE (` + num + `) END`)
	// final_states & CASE f.state WHEN 'completed' THEN 1 … ELSE 4 END.
	finalCase  = regexp.MustCompile(`final_states\s*&\s*CASE\s+[\w.]*state\s+((?:WHEN\s+'[a-z]+'\s+THEN\s+` + num + `\s*)+)ELSE\s+(` + num + `)\s+END`)
	finalWhen  = regexp.MustCompile(`WHEN\s+'([a-z]+)'\s+THEN\s+(` + num + `)`)
	stateCmp   = regexp.MustCompile(`\bstate\s*(?:=|<>|!=)\s*'([a-z_]+)'`)
	stateIn    = regexp.MustCompile(`\bstate\s+(?:NOT\s+)?IN\s*\(((?:\s*'[a-z_]+'\s*,?)+)\)`)
	quotedWord = regexp.MustCompile(`'([a-z_]+)'`)
)

// Enums checks every statement of q and returns one message per
// disagreement, each naming the statement. It also fails when q has no
// "Outcomes:" comment at all, or no flow test, since then it would check
// nothing that matters.
func Enums(q map[string]string, x Extras) []string {
	var problems []string
	bad := func(name, format string, args ...any) {
		problems = append(problems, name+": "+fmt.Sprintf(format, args...))
	}
	constant := func(tag string) (int, bool) {
		if v, ok := x.Constants[tag]; ok {
			return v, true
		}
		v, ok := droverdriver.SQLConstants[tag]
		return v, ok
	}
	// value reads one number of a context that stands for a constant of
	// kind (the prefix of its name: Outcome, Flow, Final; a driver's own
	// constants are accepted in any context of their kind, case aside).
	// A number without a tag, or with a tag of another kind, is reported;
	// the tag's value itself is checked apart, for every tag.
	value := func(name, kind, s, context string) int {
		m := numTag.FindStringSubmatch(s)
		if m == nil {
			bad(name, "no number in %q", context)
			return -1
		}
		n, _ := strconv.Atoi(m[1])
		switch tag := m[2]; {
		case tag == "" && n == 0 && kind == "Flow":
			// No bits: nothing to name.
		case tag == "":
			bad(name, "%d is untagged in %q: write it as %d /*%sName*/", n, context, n, kind)
		case !strings.HasPrefix(strings.ToLower(tag), strings.ToLower(kind)):
			bad(name, "%d is tagged %s in %q, which is no %s constant", n, tag, context, kind)
		}
		return n
	}
	var packed *regexp.Regexp
	if x.Packed != "" {
		packed = regexp.MustCompile(`(?:` + x.Packed + `)\s*(` + num + `)`)
	}
	validOutcome := func(n int) bool {
		_, extra := x.Outcomes[n]
		return (n >= int(droverdriver.OutcomeCompleted) && n <= int(droverdriver.OutcomeReleased)) || extra
	}
	sawOutcomes, sawFlow := false, false
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		text := q[name]
		// The documented numbering, where a statement gives one.
		for _, m := range outcomesDoc.FindAllStringSubmatch(text, -1) {
			sawOutcomes = true
			seen := map[droverdriver.Outcome]bool{}
			for _, p := range outcomesPair.FindAllStringSubmatch(m[1], -1) {
				n, _ := strconv.Atoi(p[1])
				o, ok := outcomeNames[p[2]]
				switch {
				case !ok:
					bad(name, "Outcomes comment names %q, which is no droverdriver.Outcome", p[2])
				case int(o) != n:
					bad(name, "Outcomes comment says %d %s, but droverdriver.Outcome for %s is %d", n, p[2], p[2], o)
				}
				seen[o] = true
			}
			if len(seen) != len(outcomeNames) {
				bad(name, "Outcomes comment lists %d outcomes, driver has %d", len(seen), len(outcomeNames))
			}
		}
		code := lineComment.ReplaceAllString(text, "")
		// Every tag, wherever it is, names a constant and has its value.
		for _, m := range tagged.FindAllStringSubmatch(code, -1) {
			n, _ := strconv.Atoi(m[1])
			switch v, ok := constant(m[2]); {
			case !ok:
				bad(name, "%q tags a number with %s, which is no droverdriver.SQLConstants name", m[0], m[2])
			case v != n:
				bad(name, "%q: %s is %d", m[0], m[2], v)
			}
		}
		// Outcome comparisons: a set must be the outcomes that end a job
		// or those that leave it waiting; a single value must be one.
		for _, m := range outcomeCmp.FindAllStringSubmatch(code, -1) {
			var set []int
			for _, f := range numTag.FindAllString(m[2], -1) {
				set = append(set, value(name, "Outcome", f, m[0]))
			}
			for _, n := range set {
				if !validOutcome(n) {
					bad(name, "compares an outcome with %d, which is no droverdriver.Outcome: %q", n, m[0])
				}
			}
			if len(set) > 1 {
				slices.Sort(set)
				ending := []int{int(droverdriver.OutcomeCompleted), int(droverdriver.OutcomeDiscarded), int(droverdriver.OutcomeCancelled)}
				waiting := []int{int(droverdriver.OutcomeRetry), int(droverdriver.OutcomeReleased)}
				slices.Sort(ending)
				slices.Sort(waiting)
				if !slices.Equal(set, ending) && !slices.Equal(set, waiting) && !sameState(set, x) {
					bad(name, "outcome set %v is neither the ending outcomes %v nor the waiting ones %v: %q", set, ending, waiting, m[0])
				}
			}
		}
		// CASE outcome WHEN n THEN 'state' … ELSE 'state'.
		for _, m := range outcomeCase.FindAllStringSubmatch(code, -1) {
			for _, w := range whenThen.FindAllStringSubmatch(m[1], -1) {
				n := value(name, "Outcome", w[1], m[0])
				want, ok := outcomeState[droverdriver.Outcome(n)]
				if extra, isExtra := x.Outcomes[n]; isExtra {
					want, ok = extra, true
				}
				if !ok || string(want) != w[2] {
					bad(name, "maps outcome %d to state %q; driver says %q", n, w[2], want)
				}
			}
			if m[2] != string(drovertype.JobStateCancelled) {
				bad(name, "maps other outcomes to %q; the remaining ending outcome is cancelled", m[2])
			}
		}
		// Flow bits.
		for _, m := range flowOp.FindAllStringSubmatch(code, -1) {
			sawFlow = true
			n := value(name, "Flow", m[2], m[0])
			if _, ok := flowMasks[n]; !ok {
				bad(name, "flow %s %d is no named flow mask (droverdriver.Flow*): %q", m[1], n, m[0])
			}
			if m[3] != "" {
				value(name, "Flow", m[3], m[0])
			}
		}
		for _, m := range finishBits.FindAllStringSubmatch(code, -1) {
			if n := value(name, "Flow", m[1], m[0]); n != droverdriver.FlowEnd || !strings.Contains(m[1], "FlowEnd") {
				bad(name, "finish returns flow bits %s; it must return droverdriver.FlowEnd (%d): %q", m[1], droverdriver.FlowEnd, m[0])
			}
		}
		for _, m := range flowCase.FindAllStringSubmatch(code, -1) {
			if n := value(name, "Flow", m[1], m[0]); n != droverdriver.FlowUnique {
				bad(name, "stores flow %d for a unique job; droverdriver.FlowUnique is %d", n, droverdriver.FlowUnique)
			}
		}
		for _, m := range keyedCase.FindAllStringSubmatch(code, -1) {
			if n := value(name, "Flow", m[1], m[0]); n != droverdriver.FlowKeyed {
				bad(name, "stores flow %d for a keyed job; droverdriver.FlowKeyed is %d", n, droverdriver.FlowKeyed)
			}
		}
		// Unique keys' final-state bits.
		for _, m := range finalCase.FindAllStringSubmatch(code, -1) {
			named := map[drovertype.JobState]bool{}
			for _, w := range finalWhen.FindAllStringSubmatch(m[1], -1) {
				n := value(name, "Final", w[2], m[0])
				named[drovertype.JobState(w[1])] = true
				if got := droverdriver.FinalBit(drovertype.JobState(w[1])); got != n {
					bad(name, "final-state bit of %s is %d; droverdriver.FinalBit says %d", w[1], n, got)
				}
			}
			var rest []drovertype.JobState
			for _, s := range drovertype.JobStates() {
				if s.Finished() && !named[s] {
					rest = append(rest, s)
				}
			}
			n := value(name, "Final", m[2], m[0])
			if len(rest) != 1 || droverdriver.FinalBit(rest[0]) != n {
				bad(name, "final-state ELSE %d must be the bit of the one final state left (%v)", n, rest)
			}
		}
		// The driver's own encodings.
		if packed != nil {
			for _, m := range packed.FindAllStringSubmatch(code, -1) {
				if t := numTag.FindStringSubmatch(m[1]); t[2] == "" {
					bad(name, "%q: the number is untagged; tag it with the driver's constant", m[0])
				} else if _, ok := x.Constants[t[2]]; !ok {
					bad(name, "%q: %s is none of the driver's own constants", m[0], t[2])
				}
			}
		}
		// State names.
		var states []string
		for _, m := range stateCmp.FindAllStringSubmatch(code, -1) {
			states = append(states, m[1])
		}
		for _, m := range stateIn.FindAllStringSubmatch(code, -1) {
			for _, w := range quotedWord.FindAllStringSubmatch(m[1], -1) {
				states = append(states, w[1])
			}
		}
		for _, s := range states {
			if !drovertype.JobState(s).Valid() {
				bad(name, "compares state with %q, which is no droverdriver.State", s)
			}
		}
	}
	if !sawOutcomes {
		problems = append(problems, "no statement documents its Outcomes: the outcome numbering is unchecked")
	}
	if !sawFlow {
		problems = append(problems, "no statement tests flow bits: the checker found nothing to check")
	}
	return problems
}

// sameState reports whether every outcome of set ends a job in one and the
// same state, counting a driver's own extra outcomes: SQLite's forget
// outcome is a completion, so IN (completed, forget) is a test for
// "completed".
func sameState(set []int, x Extras) bool {
	var state drovertype.JobState
	for i, n := range set {
		st, ok := outcomeState[droverdriver.Outcome(n)]
		if extra, isExtra := x.Outcomes[n]; isExtra {
			st, ok = extra, true
		}
		if !ok || (i > 0 && st != state) {
			return false
		}
		state = st
	}
	return true
}
