package sqlcheck

import (
	"strings"
	"testing"

	"github.com/droverhq/drover/drovertype"
)

// good is a statement in the drivers' spellings that agrees with
// droverdriver.
const good = `-- Outcomes: 1 completed, 2 retry, 3 discarded, 4 cancelled, 5 released.
DELETE FROM jobs j WHERE j.state = 'running'
  AND (($2::jsonb -> j.id::text ->> 1)::integer IN (1 /*OutcomeCompleted*/, 3 /*OutcomeDiscarded*/, 4 /*OutcomeCancelled*/) OR j.cancel_requested)
  AND j.flow & $3 = 0 AND NOT (j.flow & 15 /*FlowKeep*/ = 0);
SELECT CASE outcome WHEN 1 /*OutcomeCompleted*/ THEN 'completed' WHEN 6 /*outcomeForget*/ THEN 'completed' WHEN 3 /*OutcomeDiscarded*/ THEN 'discarded' ELSE 'cancelled' END;
SELECT packed & 7 /*outcomeMask*/ IN (2 /*OutcomeRetry*/, 5 /*OutcomeReleased*/), packed >> 4 /*attemptShift*/, r.outcome = 5 /*OutcomeReleased*/,
  j.state IN ('available', 'running'), flow | 2 /*FlowHasDependants*/, flow & 3 /*FlowSettle*/, f.flow & 1 /*FlowBatchMember*/ = 1 /*FlowBatchMember*/;
SELECT CASE WHEN unique_key IS NULL THEN 0 ELSE 8 /*FlowUnique*/ END | CASE WHEN ordering_key IS NULL THEN 0 ELSE 16 /*FlowKeyed*/ END;
UPDATE u SET held = false WHERE u.final_states & CASE f.state WHEN 'completed' THEN 1 /*FinalCompleted*/ WHEN 'cancelled' THEN 2 /*FinalCancelled*/ ELSE 4 /*FinalDiscarded*/ END = 0;
SELECT id, 'completed', flow & 27 /*FlowEnd*/ FROM done`

// TestEnums checks that the statement above passes, and that each single
// change of a number, a tag or a name in it is reported.
func TestEnums(t *testing.T) {
	x := Extras{
		Outcomes:  map[int]drovertype.JobState{6: drovertype.JobStateCompleted},
		Constants: map[string]int{"outcomeForget": 6, "outcomeMask": 7, "attemptShift": 4},
		Packed:    `\bpacked\s*(?:>>|&)`,
	}
	if p := Enums(map[string]string{"S": good}, x); len(p) != 0 {
		t.Fatalf("good statement reported: %v", p)
	}
	for _, m := range []struct{ from, to string }{
		// Values that disagree with the constants.
		{"2 retry", "6 retry"},
		{"4 cancelled,", "4 released,"},
		{"4 /*OutcomeCancelled*/)", "5 /*OutcomeCancelled*/)"},
		{"4 /*OutcomeCancelled*/)", "5 /*OutcomeReleased*/)"},
		{"& 15 /*FlowKeep*/ = 0", "& 7 /*FlowKeep*/ = 0"},
		{"WHEN 3 /*OutcomeDiscarded*/ THEN 'discarded'", "WHEN 2 /*OutcomeRetry*/ THEN 'discarded'"},
		{"ELSE 'cancelled'", "ELSE 'discarded'"},
		{"IN (2 /*OutcomeRetry*/, 5", "IN (2 /*OutcomeRetry*/, 4"},
		{"r.outcome = 5 /*OutcomeReleased*/", "r.outcome = 7 /*OutcomeReleased*/"},
		{"'running')", "'runing')"},
		{"flow | 2 /*FlowHasDependants*/", "flow | 32 /*FlowHasDependants*/"},
		{"ELSE 8 /*FlowUnique*/ END", "ELSE 16 /*FlowUnique*/ END"},
		{"ELSE 16 /*FlowKeyed*/ END", "ELSE 8 /*FlowKeyed*/ END"},
		{"ELSE 16 /*FlowKeyed*/ END", "ELSE 8 /*FlowUnique*/ END"},
		{"WHEN 'cancelled' THEN 2 /*FinalCancelled*/", "WHEN 'cancelled' THEN 4 /*FinalDiscarded*/"},
		{"ELSE 4 /*FinalDiscarded*/ END = 0", "ELSE 2 /*FinalCancelled*/ END = 0"},
		{"flow & 27 /*FlowEnd*/", "flow & 11 /*FlowEndTx*/"},
		{"flow & 27 /*FlowEnd*/", "flow & 11 /*FlowEnd*/"},
		{"= 1 /*FlowBatchMember*/;", "= 2 /*FlowBatchMember*/;"},
		{"packed >> 4 /*attemptShift*/", "packed >> 3 /*attemptShift*/"},
		// Tags that name no constant, or one of another kind.
		{"/*OutcomeCompleted*/, 3", "/*OutcomeComplete*/, 3"},
		{"flow & 3 /*FlowSettle*/", "flow & 3 /*FlowSettl*/"},
		{"f.flow & 1 /*FlowBatchMember*/", "f.flow & 1 /*OutcomeCompleted*/"},
		{"packed >> 4 /*attemptShift*/", "packed >> 4 /*FinalDiscarded*/"},
		// Numbers left untagged.
		{"3 /*OutcomeDiscarded*/, 4", "3, 4"},
		{"j.flow & 15 /*FlowKeep*/", "j.flow & 15"},
		{"flow & 27 /*FlowEnd*/", "flow & 27"},
		{"flow | 2 /*FlowHasDependants*/", "flow | 2"},
		{"= 1 /*FlowBatchMember*/;", "= 1;"},
		{"ELSE 8 /*FlowUnique*/ END", "ELSE 8 END"},
		{"ELSE 16 /*FlowKeyed*/ END", "ELSE 16 END"},
		{"THEN 1 /*FinalCompleted*/", "THEN 1"},
		{"ELSE 4 /*FinalDiscarded*/ END", "ELSE 4 END"},
		{"WHEN 6 /*outcomeForget*/", "WHEN 6"},
		{"r.outcome = 5 /*OutcomeReleased*/", "r.outcome = 5"},
		{"packed >> 4 /*attemptShift*/", "packed >> 4"},
	} {
		bad := strings.Replace(good, m.from, m.to, 1)
		if bad == good {
			t.Fatalf("%q not in the statement", m.from)
		}
		if p := Enums(map[string]string{"S": bad}, x); len(p) == 0 {
			t.Errorf("%q -> %q not reported", m.from, m.to)
		}
	}
	if p := Enums(map[string]string{"S": "SELECT 1"}, x); len(p) != 2 {
		t.Errorf("a store with nothing to check: %v, want both warnings", p)
	}
}
