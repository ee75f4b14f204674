package server

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
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
	token := drovertype.NewLeaseToken().String()
	noop := func(id int64) claimedJob { return claimedNoop(id, `{"n":1}`, at, token) }
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
			var enc claimJSON
			for i, j := range tc.jobs {
				b, err := json.Marshal(j)
				if err != nil {
					t.Fatal(err)
				}
				full[i] = b
				if err := enc.add(&j); err != nil {
					t.Fatal(err)
				}
			}
			body := enc.compact()
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

// TestClaimJSONIsEncodingJSON: the members claimJSON writes by hand are
// the bytes encoding/json writes for the same claimedJob, in both forms of
// the answer and whatever the job holds: every optional field set or left
// out, strings and args that encoding/json escapes or compacts (HTML
// characters, line separators, non-ASCII, control characters, the spaces
// PostgreSQL's jsonb puts in), times in other zones and with nanoseconds,
// routing, errors and parents' results.
func TestClaimJSONIsEncodingJSON(t *testing.T) {
	at := time.Date(2026, 11, 29, 13, 0, 0, 123456789, time.UTC)
	zoned := time.Date(2026, 1, 2, 3, 4, 5, 600, time.FixedZone("x", -(3*3600+30*60)))
	token := drovertype.NewLeaseToken().String()
	base := func(id int64) claimedJob { return claimedNoop(id, `{}`, at, token) }
	with := func(id int64, f func(*claimedJob)) claimedJob { j := base(id); f(&j); return j }
	jobs := []claimedJob{
		base(1),
		with(2, func(j *claimedJob) { j.Args = json.RawMessage(`{ "a" : [1, 2],` + "\n" + `"b": {"c": "d e"} }`) }),
		with(3, func(j *claimedJob) {
			j.Args = json.RawMessage(`{"html":"<b>&amp;</b>","sep":"a` + "\u2028" + `b","u":"é"}`)
		}),
		with(4, func(j *claimedJob) {
			j.Kind, j.Queue, j.LeaseOwner = "k<&>\"\\\t\u00e9\u2029", "q-é", "owner \x01"
			j.Tags = []string{"a", "b<c>", "\u2028", "ü"}
		}),
		with(5, func(j *claimedJob) {
			j.Metadata = json.RawMessage(`{"traceparent": "00-ab"}`)
			j.Priority, j.TimeoutMS, j.BatchID, j.Key, j.ErrorCount = -3, 1500, 77, "order-7", 2
			j.CreatedAt, j.RunAt, j.FinalizedAt, j.CancelRequested, j.Unroutable = zoned, zoned.Add(time.Nanosecond), &zoned, true, true
			j.Errors = []drovertype.AttemptError{{At: zoned, Attempt: 1, Error: "boom <x>", Trace: "t"}}
			j.Routing = &jobjson.Routing{WorkerType: "gpu", WorkerNames: []string{"a"}, WorkerLabels: map[string]string{"z": "1", "a": "2"},
				OnWorkerAbsent: "wait", WorkerAbsentAfterMS: 10, FellBackFrom: []string{"b"}}
			j.DependsOn = []int64{3, 4}
			j.ParentResults = []resultJSON{resultFrom(3, "completed", "k", []byte(`{"ok": true}`)), resultFrom(4, "failed", "k", nil)}
		}),
		with(6, func(j *claimedJob) {
			j.Args, j.Tags, j.Errors, j.AttemptedAt, j.LeaseExpiresAt, j.LeaseOwner, j.LeaseToken = nil, nil, nil, nil, nil, "", ""
		}),
	}
	var enc claimJSON
	full := make([]json.RawMessage, len(jobs))
	for i := range jobs {
		b, err := json.Marshal(jobs[i])
		if err != nil {
			t.Fatal(err)
		}
		full[i] = b
		if err := enc.add(&jobs[i]); err != nil {
			t.Fatal(err)
		}
		var m jobMembers = enc.jobs[i]
		if got := string(enc.buf[m.start:m.ends[len(claimFields)-1]]); got == "" || enc.size(i) != len(b) {
			t.Errorf("job %d: size %d, encoding/json wrote %d bytes", jobs[i].ID, enc.size(i), len(b))
		}
	}
	want, err := json.Marshal(struct {
		Jobs []json.RawMessage `json:"jobs"`
	}{full})
	if err != nil {
		t.Fatal(err)
	}
	if got := enc.full(); string(got) != string(want)+"\n" {
		t.Errorf("full form:\n%s\nencoding/json:\n%s", got, want)
	}
	// The compact form of each job alone is its full form: every member
	// goes to shared but the id and the arrays and objects.
	for i := range jobs {
		var one claimJSON
		if err := one.add(&jobs[i]); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Shared map[string]json.RawMessage `json:"shared"`
			Jobs   []map[string]json.RawMessage
		}
		if err := json.Unmarshal(one.compact(), &got); err != nil {
			t.Fatal(err)
		}
		merged := got.Jobs[0]
		for k, v := range got.Shared {
			merged[k] = v
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(full[i], &fields); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(merged, fields) {
			t.Errorf("job %d: compact form merged %v, want %v", jobs[i].ID, merged, fields)
		}
	}

	// A time JSON cannot hold fails the job, as encoding/json does, and
	// leaves the jobs encoded before it as they were.
	bad := base(9)
	bad.RunAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := json.Marshal(bad); err == nil {
		t.Fatal("encoding/json encodes a time past 9999; the test's premise is gone")
	}
	before := string(enc.full())
	if err := enc.add(&bad); err == nil {
		t.Error("a run_at past 9999 encoded")
	}
	if got := string(enc.full()); got != before {
		t.Errorf("a failed job changed the answer:\n%s\nwant\n%s", got, before)
	}
}

// TestClaimFieldsFollowTheStruct: claimFields, the members claimJSON
// writes, are claimedJob's JSON fields in the struct's order, so that a
// field added to jobjson.Job fails here until the encoder writes it.
func TestClaimFieldsFollowTheStruct(t *testing.T) {
	var names []string
	var walk func(reflect.Type)
	walk = func(typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Anonymous {
				walk(f.Type)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, name)
		}
	}
	walk(reflect.TypeFor[claimedJob]())
	if !slices.Equal(names, claimFields[:]) {
		t.Errorf("claimedJob's fields:\n%v\nclaimFields:\n%v", names, claimFields)
	}
}

// BenchmarkClaimAnswer measures the server's encoding of a claim of 1,000
// noop jobs in the compact form, per job (go test -bench ClaimAnswer).
func BenchmarkClaimAnswer(b *testing.B) {
	jobs := benchJobs()
	b.ReportAllocs()
	for b.Loop() {
		var enc claimJSON
		for i := range jobs {
			if err := enc.add(&jobs[i]); err != nil {
				b.Fatal(err)
			}
		}
		_ = enc.compact()
	}
}

// benchJobs are 1,000 claimed noop jobs.
func benchJobs() []claimedJob {
	at := time.Date(2026, 11, 29, 13, 0, 0, 123456789, time.UTC)
	token := drovertype.NewLeaseToken().String()
	jobs := make([]claimedJob, 1000)
	for i := range jobs {
		jobs[i] = claimedNoop(int64(i+1), `{"cpu_ns":0,"work_ns":0}`, at, token)
	}
	return jobs
}

// claimedNoop is a job as a claim answers it: a first attempt, started at
// at under token, of queue q and kind k, with args.
func claimedNoop(id int64, args string, at time.Time, token string) claimedJob {
	later := at.Add(30 * time.Second)
	return claimedJob{Job: jobjson.Job{ID: id, State: drovertype.JobStateRunning, Queue: "q", Kind: "k", Args: json.RawMessage(args),
		Tags: []string{}, Attempt: 1, MaxAttempts: 25, Errors: []drovertype.AttemptError{}, CreatedAt: at, RunAt: at,
		AttemptedAt: &at, LeaseOwner: "w", LeaseExpiresAt: &later, LeaseToken: token}}
}
