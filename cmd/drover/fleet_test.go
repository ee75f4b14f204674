package main

import (
	"context"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// newDatabases creates n databases of their own on the test cluster and
// returns their URLs: the shards of a fleet.
func newDatabases(t *testing.T, n int) []string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testdb.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var urls []string
	for range n {
		name := testdb.NewSchema(t) // a fresh, valid name
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			c, err := pgx.Connect(context.Background(), testdb.URL(t))
			if err == nil {
				_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
				_ = c.Close(context.Background())
			}
		})
		u, err := url.Parse(testdb.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + name
		urls = append(urls, u.String())
	}
	return urls
}

// shardRecord reads the shard record of the drover schema at raw.
func shardRecord(t *testing.T, raw string) *droverdriver.ShardRecord {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	d, err := droverpg.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := d.Executor().(droverdriver.ShardExecutor).ShardGet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestFleetFromFlagsAndEnv: repeated --database-url flags and
// DROVER_DATABASE_URLS both make a fleet: migrate migrates and attaches
// every shard in order, jobs inserted by separate processes land on both
// shards, and each is found by ID and listed.
func TestFleetFromFlagsAndEnv(t *testing.T) {
	for _, how := range []string{"flags", "env"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			urls := newDatabases(t, 2)
			env := map[string]string{}
			var global []string
			if how == "env" {
				env[envDatabaseURLs] = strings.Join(urls, " \n\t")
			} else {
				for _, u := range urls {
					global = append(global, "--database-url", u)
				}
			}
			run := func(args ...string) string {
				t.Helper()
				r := runCLI(t, env, append(append([]string{}, global...), args...)...)
				if r.code != exitOK {
					t.Fatalf("drover %s: %s", strings.Join(args, " "), r)
				}
				return r.stdout
			}
			run("migrate")
			var fleet string
			for i, u := range urls {
				rec := shardRecord(t, u)
				if rec == nil || rec.Index != i || rec.KeyShards != 2 || (fleet != "" && rec.Fleet != fleet) {
					t.Fatalf("shard %d's record %+v, want index %d of one fleet over 2 key shards", i, rec, i)
				}
				fleet = rec.Fleet
			}
			if out := run("migrate"); !strings.Contains(out, "up to date") {
				t.Fatalf("second migrate: %q, want up to date", out)
			}
			shards := map[int]bool{}
			var ids []int64
			for k := 0; len(shards) < 2; k++ {
				if k == 40 {
					t.Fatalf("40 inserts all went to shards %v", shards)
				}
				id, err := strconv.ParseInt(strings.TrimSpace(run("enqueue", "noop", `{}`)), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
				shards[droverdriver.ShardOf(id)] = true
			}
			for _, id := range ids {
				if out := run("jobs", "get", strconv.FormatInt(id, 10)); !strings.Contains(out, strconv.FormatInt(id, 10)) {
					t.Fatalf("jobs get %d: %q", id, out)
				}
			}
			out := run("jobs", "list", "--limit", "1000")
			for _, id := range ids {
				if !strings.Contains(out, strconv.FormatInt(id, 10)) {
					t.Fatalf("jobs list does not show job %d:\n%s", id, out)
				}
			}
			// Draining shard 1 sends every new job to shard 0.
			run("shards", "drain", "1")
			if out := run("shards", "list"); !strings.Contains(out, "1      "+fleet) || !strings.Contains(out, "true") {
				t.Fatalf("shards list after drain 1:\n%s", out)
			}
			for range 10 {
				id, err := strconv.ParseInt(strings.TrimSpace(run("enqueue", "noop", `{}`)), 10, 64)
				if err != nil || droverdriver.ShardOf(id) != 0 {
					t.Fatalf("job %d (%v) inserted while shard 1 drains, want shard 0", id, err)
				}
			}
			run("shards", "undrain", "1")
			if rec := shardRecord(t, urls[1]); rec.Draining {
				t.Fatalf("shard 1 still draining after undrain: %+v", rec)
			}
		})
	}
}

// TestFleetRefusesBadShards: a fleet of a SQLite file, the same URL
// twice, or shards listed in another order than they were attached is
// refused with an error naming the problem.
func TestFleetRefusesBadShards(t *testing.T) {
	t.Parallel()
	urls := newDatabases(t, 2)
	flags := func(us ...string) []string {
		var out []string
		for _, u := range us {
			out = append(out, "--database-url", u)
		}
		return out
	}
	if r := runCLI(t, nil, append(flags(urls...), "migrate")...); r.code != exitOK {
		t.Fatal(r)
	}
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"sqlite shard", append(flags(urls[0], "sqlite:///tmp/x.db"), "jobs", "list"), exitUsage, "a fleet is made of PostgreSQL databases"},
		{"same URL twice", append(flags(urls[0], urls[0]), "jobs", "list"), exitUsage, "shards 0 and 1 are the same URL"},
		{"reordered", append(flags(urls[1], urls[0]), "jobs", "list"), exitFailure, "the database given as shard 0 is shard 1"},
		{"shards of one store", append(flags(urls[0]), "shards", "list"), exitUsage, "drover shards works on a fleet"},
	}
	for _, tt := range tests {
		r := runCLI(t, nil, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%s: %s\nwant exit %d and an error containing %q", tt.name, r, tt.code, tt.want)
		}
	}
}

// TestBenchOnAFleet: given several databases, drover bench burndown runs
// on the fleet they make (its jobs finish on both shards, none lost),
// what it cannot do on a fleet is refused naming why, and every other
// bench refuses the fleet rather than use its first database alone.
func TestBenchOnAFleet(t *testing.T) {
	t.Parallel()
	urls := newDatabases(t, 2)
	var global []string
	for _, u := range urls {
		global = append(global, "--database-url", u)
	}
	bench := func(args ...string) result {
		t.Helper()
		return runCLI(t, nil, append(append(append([]string{}, global...), "bench"), args...)...)
	}
	r := bench("burndown", "--jobs", "2000", "--concurrency", "50", "--keep")
	if r.code != exitOK || !strings.Contains(r.stderr, "each of the 2 shards of a fleet") || !regexp.MustCompile(`lost / duplicates +0 / 0`).MatchString(r.stdout) ||
		!strings.Contains(r.stdout, "DROVER_DATABASE_URLS='"+urls[0]+" "+urls[1]+"'") {
		t.Fatalf("bench burndown on a fleet: %s; want a run on both shards with nothing lost", r)
	}
	ctx := context.Background()
	total := 0
	for i, u := range urls {
		pool, err := pgxpool.New(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = pool.QueryRow(ctx, `SELECT count(*) FROM drover_bench.finished_jobs WHERE state = 'completed'`).Scan(&n)
		pool.Close()
		if err != nil || n == 0 {
			t.Fatalf("shard %d: %d completed bench jobs (%v); want some on every shard", i, n, err)
		}
		total += n
	}
	if total < 2000 {
		t.Fatalf("%d jobs completed over the shards, want the 2000 of the burndown", total)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"burndown", "--jobs", "10", "--processes", "2"}, "--processes: a burndown on a fleet runs its workers in the bench process"},
		{[]string{"burndown", "--jobs", "10", "--floor"}, "--floor: the store ceiling and the raw SQL floor are one database's"},
		{[]string{"steady", "--duration", "2s"}, "2 databases given (a fleet): this bench runs on one database"},
		{[]string{"fanout", "--messages", "10"}, "2 databases given (a fleet): this bench runs on one database"},
	} {
		if r := bench(c.args...); r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("bench %s on a fleet: %s; want a usage error saying %q", strings.Join(c.args, " "), r, c.want)
		}
	}
}
