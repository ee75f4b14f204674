package droverpg

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/jsonmatch"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// TestJSONContainsAsPostgres asks PostgreSQL's jsonb @> about the cases
// where containment is least obvious, and checks that JSONContains, which
// SQLite's search runs instead, answers the same.
func TestJSONContainsAsPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.NewPool(t)
	for _, c := range [][2]string{
		{`{"a":1}`, `{"a":1.0}`}, {`{"a":10}`, `{"a":1e1}`}, {`{"a":1}`, `{"a":"1"}`},
		{`{"a":[1,2,3]}`, `{"a":[3,1]}`}, {`{"a":[1,2,3]}`, `{"a":[1,1]}`}, {`{"a":[1,2,3]}`, `{"a":1}`},
		{`{"a":[{"x":1,"y":2},{"x":3}]}`, `{"a":[{"x":3}]}`}, {`{"a":[[1,2]]}`, `{"a":[[1]]}`},
		{`{"a":[[1,2]]}`, `{"a":[1]}`}, {`{"a":null}`, `{"a":false}`}, {`{"a":{"b":1}}`, `{"a":{}}`},
		{`{"a":{"b":1}}`, `{"a":[]}`}, {`[1,2,3]`, `2`}, {`[1,[2]]`, `[2]`}, {`[1,[2]]`, `[[2]]`},
		{`{}`, `{}`}, {`{"a":"é"}`, `{"a":"\u00e9"}`},
	} {
		var pg bool
		if err := pool.QueryRow(ctx, "SELECT $1::jsonb @> $2::jsonb", c[0], c[1]).Scan(&pg); err != nil {
			t.Fatal(err)
		}
		got, err := jsonmatch.JSONContains([]byte(c[0]), []byte(c[1]))
		if err != nil {
			t.Fatal(err)
		}
		if got != pg {
			t.Errorf("%s @> %s: PostgreSQL says %v, JSONContains %v", c[0], c[1], pg, got)
		}
	}
}

// searchPlanRows is the size of the table TestSearchPlan plans on: large
// enough that a plan which scanned the table, or sorted it, would cost the
// planner far more than walking the primary key.
const searchPlanRows = 1_000_000

// TestSearchPlan plans a search's statements on a million finished jobs,
// analysed, with every filter a search can take, for a window deep in the
// table, as PostgreSQL plans them for these values (the first executions
// of a prepared statement) and as the generic plan it may switch to after:
// each table is read by its primary key within the window, never scanned
// whole, never sorted, so a page's cost is its window's whatever the
// depth. It also runs the deep page and checks that it examined no more
// rows than the window holds.
func TestSearchPlan(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("inserts a million jobs")
	}
	ctx := context.Background()
	d := migrated(t)
	schema := `"` + d.Schema() + `".`
	if _, err := d.Pool().Exec(ctx, `INSERT INTO `+schema+`finished_jobs (id, state, queue, kind, priority, args, metadata, tags,
		attempt, max_attempts, timeout_ms, created_at, run_at, attempted_at, finalized_at)
	SELECT g, CASE WHEN g % 100 = 7 THEN 'discarded' ELSE 'completed' END, 'q' || (g % 5), 'k' || (g % 7), 0,
		jsonb_build_object('user', g % 5000, 'n', g), CASE WHEN g % 50 = 0 THEN '{"tenant":"t1"}'::jsonb ELSE '{}' END,
		CASE WHEN g % 10 = 0 THEN ARRAY['vip'] ELSE '{}' END, 1, 25, 0,
		timestamptz '2026-01-01' + g * interval '1 s', timestamptz '2026-01-01' + g * interval '1 s',
		timestamptz '2026-01-01' + g * interval '1 s', timestamptz '2026-01-01' + g * interval '1 s'
	FROM generate_series(1, $1::bigint) g`, searchPlanRows); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Pool().Exec(ctx, `INSERT INTO `+schema+`jobs (queue, kind, args, max_attempts)
		SELECT 'q1', 'k1', '{}', 25 FROM generate_series(1, 1000)`); err != nil {
		t.Fatal(err)
	}
	// A few jobs no filter of the windows below meets, for the seeks:
	// two finished jobs of a rare queue, a discarded one of a rare kind,
	// and an available one of a rare queue behind the hot table's 1,000.
	if _, err := d.Pool().Exec(ctx, `INSERT INTO `+schema+`finished_jobs (id, state, queue, kind, priority, args, metadata, tags,
		attempt, max_attempts, timeout_ms, created_at, run_at, attempted_at, finalized_at)
	SELECT g, CASE WHEN g = $1 + 3 THEN 'discarded' ELSE 'completed' END, CASE WHEN g = $1 + 3 THEN 'q1' ELSE 'rare' END,
		CASE WHEN g = $1 + 3 THEN 'flaky' ELSE 'k1' END, 0, '{}', '{}', '{}', 1, 25, 0, now(), now(), now(), now()
	FROM generate_series($1 + 1, $1 + 3) g`, searchPlanRows); err != nil {
		t.Fatal(err)
	}
	var hotRare int64
	if err := d.Pool().QueryRow(ctx, `INSERT INTO `+schema+`jobs (queue, kind, args, max_attempts) VALUES ('rare', 'k1', '{}', 25)
		RETURNING id`).Scan(&hotRare); err != nil {
		t.Fatal(err)
	}
	// The plans are checked against full statistics: with a statistics
	// target of 10,000, ANALYZE samples 3,000,000 rows, so it reads every
	// finished job and sees the rare queue's two of a million, as it
	// would on a store whose sample happened to hold them; the default
	// sample of 30,000 rarely does, and a plan that depended on which
	// rows it drew passed or failed by chance (the rare queue's seek
	// walked the primary key over 999,000 jobs about one run in 15). The
	// target stays on the columns, so an autovacuum's ANALYZE during the
	// test draws the same statistics.
	for _, sql := range []string{
		`ALTER TABLE ` + schema + `finished_jobs ALTER queue SET STATISTICS 10000, ALTER kind SET STATISTICS 10000, ALTER state SET STATISTICS 10000`,
		`VACUUM ANALYZE ` + schema + `finished_jobs`, `ANALYZE ` + schema + `jobs`,
	} {
		if _, err := d.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}

	// A window of 65,536 IDs (the widest a search reads) ending 100,000
	// IDs above the oldest job: the 900,000 jobs above it are the ones an
	// OFFSET, a scan or a sort would have to pass.
	const width = 65_536
	filter := droverdriver.ListParams{
		States: []drovertype.JobState{drovertype.JobStateDiscarded, drovertype.JobStateCompleted, drovertype.JobStateRunning},
		Queue:  "q2", Kind: "k3", Tags: []string{"vip"},
		Args: []byte(`{"user":42}`), Metadata: []byte(`{"tenant":"t1"}`),
		Created:  drovertype.TimeRange{From: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		Finished: drovertype.TimeRange{From: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)},
		AfterID:  100_000, UntilID: 100_000 - width + 1, Desc: true, Limit: 50,
	}
	for _, tc := range []struct {
		name, stmt string
		p          droverdriver.ListParams
	}{
		{"JobListDesc, every filter", jobListDesc.name, filter},
		{"JobListDesc, no filter", jobListDesc.name, droverdriver.ListParams{AfterID: 100_000, UntilID: 100_000 - width + 1, Desc: true, Limit: 50}},
		{"JobList, state only", jobList.name, droverdriver.ListParams{States: []drovertype.JobState{drovertype.JobStateDiscarded},
			AfterID: 100_000, UntilID: 100_000 + width - 1, Limit: 50}},
		{"JobMatchCount", jobMatchCount.name, filter},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := search(&tc.p)
			args := searchArgs(&sp)
			for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
				plan := explain(t, d, mode, d.exec.q[tc.stmt], args)
				checkSearchPlan(t, mode, plan, d.Schema())
			}
		})
	}

	// The seeks of a search (JobIDNext) for filters few jobs match read
	// one entry of finished jobs, from the index that serves them:
	// finished_jobs_queue_idx or finished_jobs_kind_idx for a queue or
	// kind, the failed indexes for a failed state; and the claim index
	// for a queue's available jobs.
	discarded := []drovertype.JobState{drovertype.JobStateDiscarded}
	completed := []drovertype.JobState{drovertype.JobStateCompleted}
	for _, tc := range []struct {
		name string
		p    droverdriver.ListParams
		want int64
	}{
		{"no filter", droverdriver.ListParams{}, 1},
		{"a rare queue", droverdriver.ListParams{Queue: "rare", AfterID: hotRare}, searchPlanRows + 1},
		{"a rare queue, completed", droverdriver.ListParams{Queue: "rare", States: completed}, searchPlanRows + 1},
		{"a rare queue, newest first", droverdriver.ListParams{Queue: "rare", Desc: true, AfterID: searchPlanRows + 2}, searchPlanRows + 1},
		{"a rare kind", droverdriver.ListParams{Kind: "flaky"}, searchPlanRows + 3},
		{"a rare kind, discarded", droverdriver.ListParams{Kind: "flaky", States: discarded}, searchPlanRows + 3},
		{"a common queue and a rare kind", droverdriver.ListParams{Queue: "q1", Kind: "flaky"}, searchPlanRows + 3},
		{"discarded, past the last", droverdriver.ListParams{States: discarded, AfterID: searchPlanRows - 50}, searchPlanRows + 3},
		{"a rare queue, available", droverdriver.ListParams{Queue: "rare", States: []drovertype.JobState{drovertype.JobStateAvailable}}, hotRare},
	} {
		t.Run("JobIDNext, "+tc.name, func(t *testing.T) {
			s := explainSeek(t, d, tc.p, tc.want)
			// The hot table's 1,001 jobs may be walked by its primary
			// key, by each branch of the states no index of it serves;
			// finished jobs, a million, never are: one entry of an index.
			if most := float64(searchPlanRows / 20); tc.name == "no filter" && s.examined > 2 || s.finished > 1 || s.examined > most {
				t.Errorf("the seek examined %v rows, %v of them finished jobs: %v", s.examined, s.finished, s.reads)
			}
			t.Logf("%v rows examined, %.1f ms: %v", s.examined, s.ms, s.reads)
		})
	}

	// The deep page itself: it reads the window's rows by the primary key
	// and no others.
	plan := explainAnalyze(t, d, d.exec.q[jobListDesc.name], searchArgs(ptr(search(&filter))))
	var examined float64
	walkPlan(plan, func(n map[string]any) {
		if rel, _ := n["Relation Name"].(string); rel == "finished_jobs" {
			examined += num(n["Actual Rows"]) + num(n["Rows Removed by Filter"])
		}
	})
	if examined == 0 || examined > width {
		t.Errorf("the deep page examined %v finished jobs, want at most the window's %d", examined, width)
	}
	t.Logf("deep page: %v finished jobs examined, %.1f ms", examined, num(plan["Execution Time"]))
}

func ptr[T any](v T) *T { return &v }

// seek is what one JobIDNext (or JobIDPrev) read, from its EXPLAIN
// ANALYZE: the rows it examined in both tables and in finished jobs, each
// read of them, and its execution time.
type seek struct {
	examined, finished float64
	reads              []string
	ms                 float64
}

// explainSeek runs the seek of p, fails unless it finds want, and
// explains it with the same values.
func explainSeek(t *testing.T, d *Driver, p droverdriver.ListParams, want int64) seek {
	t.Helper()
	id, err := d.exec.JobIDNext(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if id != want {
		t.Fatalf("next ID %d, want %d", id, want)
	}
	ip := idNext(&p)
	name := jobIDNext.name
	if p.Desc {
		name = jobIDPrev.name
	}
	plan := explainAnalyze(t, d, d.exec.q[name], idNextArgs(&ip))
	s := seek{ms: num(plan["Execution Time"])}
	walkPlan(plan["Plan"].(map[string]any), func(n map[string]any) {
		if rel, _ := n["Relation Name"].(string); rel == "finished_jobs" || rel == "jobs" {
			rows := num(n["Actual Rows"]) + num(n["Rows Removed by Filter"]) + num(n["Rows Removed by Index Recheck"])
			s.examined += rows
			if rel == "finished_jobs" {
				s.finished += rows
			}
			s.reads = append(s.reads, fmt.Sprint(n["Node Type"], " ", rel, " ", n["Index Name"]))
		}
	})
	return s
}

// explain returns the plan of query with args under plan_cache_mode mode,
// as PostgreSQL's JSON.
func explain(t *testing.T, d *Driver, mode, query string, args []any) map[string]any {
	t.Helper()
	ctx := context.Background()
	conn, err := d.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "RESET plan_cache_mode")
	// EXPLAIN of a prepared statement shows the plan its executions
	// would use under the mode.
	if _, err := conn.Conn().Prepare(ctx, "search_plan", query); err != nil {
		t.Fatal(err)
	}
	defer conn.Conn().Deallocate(ctx, "search_plan")
	values := make([]string, len(args))
	for i, a := range args {
		values[i] = literal(t, a)
	}
	var raw []byte
	if err := conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) EXECUTE search_plan("+strings.Join(values, ", ")+")").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	return firstPlan(t, raw)
}

// literal writes a search parameter as SQL, for EXECUTE, which takes no
// parameters of its own.
func literal(t *testing.T, v any) string {
	t.Helper()
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return quote(v)
	case []byte:
		if v == nil {
			return "NULL"
		}
		return quote(string(v))
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = quote(s)
		}
		return "ARRAY[" + strings.Join(q, ",") + "]::text[]"
	case *time.Time:
		if v == nil {
			return "NULL"
		}
		return quote(v.Format(time.RFC3339Nano))
	case time.Time:
		return quote(v.Format(time.RFC3339Nano))
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		return strconv.FormatBool(v)
	}
	t.Fatalf("no literal for %T", v)
	return ""
}

func explainAnalyze(t *testing.T, d *Driver, query string, args []any) map[string]any {
	t.Helper()
	var raw []byte
	if err := d.Pool().QueryRow(context.Background(), "EXPLAIN (ANALYZE, FORMAT JSON) "+query, args...).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	return firstPlan(t, raw)
}

func firstPlan(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var plans []map[string]any
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) != 1 {
		t.Fatalf("plan %s: %v", raw, err)
	}
	return plans[0]
}

// checkSearchPlan fails unless every read of the jobs tables in plan is a
// scan of an index in ID order bounded by the window (the primary key, or
// finished_jobs_failed_idx, the failed jobs by ID): in key order, so that
// only the two tables' pages are ever merged and sorted.
func checkSearchPlan(t *testing.T, mode string, plan map[string]any, schema string) {
	t.Helper()
	var reads []string
	walkPlan(plan["Plan"].(map[string]any), func(n map[string]any) {
		rel, _ := n["Relation Name"].(string)
		node, _ := n["Node Type"].(string)
		if rel != "jobs" && rel != "finished_jobs" {
			return
		}
		idx, _ := n["Index Name"].(string)
		cond, _ := n["Index Cond"].(string)
		reads = append(reads, node+" "+rel+" "+idx)
		if idx != rel+"_pkey" && idx != "finished_jobs_failed_idx" || !strings.Contains(cond, "id >") || !strings.Contains(cond, "id <") {
			t.Errorf("%s: %s of %s.%s by %q on %q, want its primary key bounded by the window", mode, node, schema, rel, idx, cond)
		}
	})
	if len(reads) == 0 || len(reads) > 2 {
		t.Errorf("%s: the plan reads %v, want each table it needs once", mode, reads)
	}
	t.Logf("%s: %v", mode, reads)
}

// walkPlan calls fn for every node of a plan that can run: a subtree
// under a one-time filter of nothing but false (a table the search does not read,
// known when planning with the values) is skipped.
func walkPlan(n map[string]any, fn func(map[string]any)) {
	if f, _ := n["One-Time Filter"].(string); f != "" && strings.Trim(strings.NewReplacer("false", "", "AND", "").Replace(f), "() ") == "" {
		return
	}
	fn(n)
	if p, ok := n["Plan"].(map[string]any); ok {
		walkPlan(p, fn)
	}
	subs, _ := n["Plans"].([]any)
	for _, s := range subs {
		if m, ok := s.(map[string]any); ok {
			walkPlan(m, fn)
		}
	}
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}
