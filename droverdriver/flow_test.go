package droverdriver

import (
	"testing"

	"github.com/droverhq/drover/drovertype"
)

// TestJobRowHasParentsIsFlowHasParents: drovertype names the one flow bit
// users ask about without importing the stores' encoding, so it must stay
// the bit the stores set.
func TestJobRowHasParentsIsFlowHasParents(t *testing.T) {
	for _, f := range []int{0, FlowBatchMember, FlowHasParents, FlowHasParents | FlowBatchMember, FlowEnd &^ FlowHasParents} {
		row := drovertype.JobRow{Flow: f}
		if want := f&FlowHasParents != 0; row.HasParents() != want {
			t.Errorf("flow %b: HasParents %v, want %v", f, row.HasParents(), want)
		}
	}
}
