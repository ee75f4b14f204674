package server

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/jobjson"
)

// TestCompactClaimMergesToTheFullForm: every job of a compact answer, its
// entry with the fields it lacks taken from shared, is the job's full
// form, field for field; shared holds the scalar fields every job has
// with one value, never the id, and never an array or object (args, tags:
// each job's own, so that no two handlers get one value).
func TestCompactClaimMergesToTheFullForm(t *testing.T) {
	at := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	later := at.Add(30 * time.Second)
	token := drovertype.NewLeaseToken().String()
	noop := func(id int64) claimedJob {
		return claimedJob{Job: jobjson.Job{ID: id, State: drovertype.JobStateRunning, Queue: "q", Kind: "k", Args: json.RawMessage(`{"n":1}`),
			Tags: []string{}, Attempt: 1, MaxAttempts: 25, Errors: []drovertype.AttemptError{}, CreatedAt: at, RunAt: at,
			AttemptedAt: &at, LeaseOwner: "w", LeaseExpiresAt: &later, LeaseToken: token}}
	}
	with := func(j claimedJob, f func(*claimedJob)) claimedJob { f(&j); return j }
	for _, tc := range []struct {
		name   string
		jobs   []claimedJob
		shared []string // the fields shared must hold
		own    []string // fields some entry must carry
	}{
		{name: "none", jobs: nil},
		{name: "one", jobs: []claimedJob{noop(1)}, shared: []string{"state", "queue", "kind", "lease_token"},
			own: []string{"args", "tags", "errors"}},
		{name: "alike", jobs: []claimedJob{noop(1), noop(2), noop(3)},
			shared: []string{"state", "queue", "kind", "attempt", "max_attempts", "error_count",
				"created_at", "run_at", "attempted_at", "lease_owner", "lease_expires_at", "cancel_requested", "lease_token"},
			own: []string{"args", "tags", "errors"}},
		{name: "kinds and args differ", jobs: []claimedJob{noop(1), with(noop(2), func(j *claimedJob) {
			j.Kind, j.Args, j.MaxAttempts = "k2", json.RawMessage(`{"n":2}`), 3
		})}, shared: []string{"queue", "lease_token"}, own: []string{"kind", "args", "max_attempts"}},
		{name: "a field one job lacks", jobs: []claimedJob{noop(1), with(noop(2), func(j *claimedJob) {
			j.Key, j.BatchID, j.Metadata = "order-7", 9, json.RawMessage(`{"a":"<b>"}`)
		}), with(noop(3), func(j *claimedJob) { j.Key = "order-7" })}, own: []string{"key", "batch_id", "metadata"}},
		{name: "quotes, colons, commas and brackets in values", jobs: []claimedJob{
			with(noop(1), func(j *claimedJob) {
				j.Kind, j.Args = `k"a,b:c}]`, json.RawMessage(`{"s":"x\"},[:","n":[1,{"a":"]"}]}`)
			}),
			with(noop(2), func(j *claimedJob) {
				j.Kind, j.Args = `k"a,b:c}]`, json.RawMessage(`{"s":"\\","t":{}}`)
			}),
		}, shared: []string{"kind", "queue"}, own: []string{"args"}},
		{name: "dependants", jobs: []claimedJob{with(noop(1), func(j *claimedJob) {
			j.DependsOn = []int64{7}
			j.ParentResults = []resultJSON{resultFrom(7, "completed", "k", []byte(`{"ok":true}`))}
		}), noop(2)}, own: []string{"depends_on", "parent_results"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full := make([][]byte, len(tc.jobs))
			for i, j := range tc.jobs {
				b, err := json.Marshal(j)
				if err != nil {
					t.Fatal(err)
				}
				full[i] = b
			}
			body := compactClaim(full)
			var got struct {
				Shared map[string]json.RawMessage   `json:"shared"`
				Jobs   []map[string]json.RawMessage `json:"jobs"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("%s: %v", body, err)
			}
			if got.Shared == nil || got.Jobs == nil || len(got.Jobs) != len(tc.jobs) {
				t.Fatalf("answer %s: want shared and %d jobs", body, len(tc.jobs))
			}
			if _, ok := got.Shared["id"]; ok {
				t.Fatalf("shared holds the id: %s", body)
			}
			for k, v := range got.Shared {
				if v[0] == '[' || v[0] == '{' {
					t.Errorf("shared holds %s, an array or object: %s", k, body)
				}
			}
			for _, f := range tc.shared {
				if _, ok := got.Shared[f]; !ok {
					t.Errorf("shared lacks %s, which every job has alike: %s", f, body)
				}
			}
			for _, f := range tc.own {
				if _, ok := got.Shared[f]; ok {
					t.Errorf("shared holds %s, which not every job has alike: %s", f, body)
				}
			}
			for i, j := range tc.jobs {
				var want map[string]any
				if err := json.Unmarshal(full[i], &want); err != nil {
					t.Fatal(err)
				}
				merged := map[string]json.RawMessage{}
				for k, v := range got.Shared {
					merged[k] = v
				}
				for k, v := range got.Jobs[i] {
					if _, dup := got.Shared[k]; dup {
						t.Errorf("job %d repeats shared's %s", j.ID, k)
					}
					merged[k] = v
				}
				mb, _ := json.Marshal(merged)
				var have map[string]any
				if err := json.Unmarshal(mb, &have); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(have, want) {
					t.Errorf("job %d merged:\n%s\nwant the full form:\n%s", j.ID, mb, full[i])
				}
			}
		})
	}
}
