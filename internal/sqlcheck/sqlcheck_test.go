package sqlcheck

import (
	"strings"
	"testing"

	"github.com/droverhq/drover/droverdriver"
)

// good is a statement in the drivers' spellings that agrees with
// droverdriver.
const good = `-- Outcomes: 1 completed, 2 retry, 3 discarded, 4 cancelled, 5 released.
DELETE FROM jobs j WHERE j.state = 'running'
  AND (($2::jsonb -> j.id::text ->> 1)::integer IN (1, 3, 4) OR j.cancel_requested)
  AND j.flow & $3 = 0 AND NOT (j.flow & 15 = 0);
SELECT CASE outcome WHEN 1 THEN 'completed' WHEN 6 THEN 'completed' WHEN 3 THEN 'discarded' ELSE 'cancelled' END;
SELECT packed & 7 IN (2, 5), r.outcome = 5, j.state IN ('available', 'running'), flow | 2, flow & 3;
SELECT CASE WHEN unique_key IS NULL THEN 0 ELSE 8 END | CASE WHEN ordering_key IS NULL THEN 0 ELSE 16 END;
UPDATE u SET held = false WHERE u.final_states & CASE f.state WHEN 'completed' THEN 1 WHEN 'cancelled' THEN 2 ELSE 4 END = 0;
SELECT id, flow & 27 FROM done`

// TestEnums checks that the statement above passes, and that each single
// change of a number or name in it is reported.
func TestEnums(t *testing.T) {
	x := Extras{Outcomes: map[int]droverdriver.State{6: droverdriver.StateCompleted}}
	if p := Enums(map[string]string{"S": good}, x); len(p) != 0 {
		t.Fatalf("good statement reported: %v", p)
	}
	for _, m := range []struct{ from, to string }{
		{"2 retry", "6 retry"},
		{"4 cancelled,", "4 released,"},
		{"IN (1, 3, 4)", "IN (1, 3, 5)"},
		{"& 15 = 0", "& 7 = 0"},
		{"WHEN 3 THEN 'discarded'", "WHEN 2 THEN 'discarded'"},
		{"ELSE 'cancelled'", "ELSE 'discarded'"},
		{"IN (2, 5)", "IN (2, 4)"},
		{"r.outcome = 5", "r.outcome = 7"},
		{"'running')", "'runing')"},
		{"flow | 2", "flow | 32"},
		{"THEN 0 ELSE 16 END", "THEN 0 ELSE 8 END"},
		{"ELSE 8 END", "ELSE 16 END"},
		{"WHEN 'cancelled' THEN 2", "WHEN 'cancelled' THEN 4"},
		{"ELSE 4 END = 0", "ELSE 2 END = 0"},
		{"SELECT id, flow & 27", "SELECT id, flow & 11"},
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
