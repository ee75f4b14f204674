package engine

import (
	"errors"
	"reflect"
	"testing"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

func TestPlanFlowInsert(t *testing.T) {
	job := func(after []int, dependsOn []int64, release bool) droverdriver.FlowJob {
		return droverdriver.FlowJob{After: after, DependsOn: dependsOn, ReleaseOnParentFailure: release}
	}
	live := map[int64]bool{10: true, 11: true}
	ended := map[int64]drovertype.JobState{20: drovertype.JobStateCompleted, 21: drovertype.JobStateDiscarded, 22: drovertype.JobStateCancelled}
	tests := []struct {
		name    string
		p       droverdriver.FlowInsertParams
		want    droverdriver.FlowInsertPlan
		wantErr error
		errText string
	}{
		{
			name: "chain within the call",
			p:    droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{job(nil, nil, false), job([]int{0}, nil, false), job([]int{1, 1}, nil, false)}},
			want: droverdriver.FlowInsertPlan{
				States:    []drovertype.JobState{drovertype.JobStateAvailable, drovertype.JobStatePending, drovertype.JobStatePending},
				Flow:      []int{droverdriver.FlowHasDependants, droverdriver.FlowHasDependants | droverdriver.FlowHasParents, droverdriver.FlowHasParents},
				WaitingOn: []int{0, 1, 1},
				Parents:   [][]int64{nil, nil, nil},
			},
		},
		{
			name: "stored parents: live ones wait, completed ones are met, duplicates count once",
			p:    droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{job(nil, []int64{10, 20, 10, 11}, false)}},
			want: droverdriver.FlowInsertPlan{
				States: []drovertype.JobState{drovertype.JobStatePending}, Flow: []int{droverdriver.FlowHasParents}, WaitingOn: []int{2},
				Parents: [][]int64{{10, 20, 11}},
			},
		},
		{
			name: "released on failure: a failed parent is met",
			p:    droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{job(nil, []int64{21, 22}, true)}},
			want: droverdriver.FlowInsertPlan{
				States: []drovertype.JobState{drovertype.JobStateAvailable}, Flow: []int{droverdriver.FlowReleaseOnParentFailure | droverdriver.FlowHasParents}, WaitingOn: []int{0},
				Parents: [][]int64{{21, 22}},
			},
		},
		{
			name: "batch members",
			p:    droverdriver.FlowInsertParams{Batch: true, Jobs: []droverdriver.FlowJob{job(nil, nil, false), job([]int{0}, nil, false)}},
			want: droverdriver.FlowInsertPlan{
				States:    []drovertype.JobState{drovertype.JobStateAvailable, drovertype.JobStatePending},
				Flow:      []int{droverdriver.FlowBatchMember | droverdriver.FlowHasDependants, droverdriver.FlowBatchMember | droverdriver.FlowHasParents},
				WaitingOn: []int{0, 1},
				Parents:   [][]int64{nil, nil},
			},
		},
		{name: "failed parent", p: droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{job(nil, []int64{21}, false)}},
			wantErr: ErrDependencyFailed, errText: "job 1 of 1 depends on job 21, which ended as discarded: dependency did not complete"},
		{name: "missing parent", p: droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{job(nil, []int64{99}, false)}},
			wantErr: droverdriver.ErrNotFound, errText: "job 1 of 1 depends on job 99: job not found"},
		{name: "later position", p: droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{job([]int{1}, nil, false), job(nil, nil, false)}},
			errText: "job 1 of 2: can only depend on an earlier job of the same call, not position 2"},
		{name: "itself", p: droverdriver.FlowInsertParams{Jobs: []droverdriver.FlowJob{job([]int{0}, nil, false)}},
			errText: "job 1 of 1: can only depend on an earlier job of the same call, not position 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := planFlowInsert(tt.p, live, ended)
			if tt.errText != "" {
				if err == nil || err.Error() != tt.errText || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
					t.Fatalf("err = %v, want %q", err, tt.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("plan = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
