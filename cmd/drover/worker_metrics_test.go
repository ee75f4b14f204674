package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestWorkerMetrics runs `drover worker --metrics-addr` and checks that the
// jobs it completes reach drover_jobs_completed_total under their queue and
// kind, with their run times and pickup latencies.
func TestWorkerMetrics(t *testing.T) {
	t.Parallel()
	const total = 5
	f := setupSQLite(t).migrated(t)
	_, client := f.open(t)
	params := make([]drover.InsertManyParams, total)
	for i := range params {
		params[i] = drover.InsertManyParams{Args: drover.RawArgs{KindName: "drover.bench", JSON: json.RawMessage(`{}`)},
			Opts: &drover.InsertOpts{Queue: "metricsq"}}
	}
	if _, err := client.InsertMany(context.Background(), params); err != nil {
		t.Fatal(err)
	}

	scrape := metricsWorker(t, f.env, "--database-url", f.url)
	var body string
	waitfor.Cond(t, "five completions in the metrics", func() bool {
		body = scrape()
		return strings.Contains(body, `drover_jobs_completed_total{kind="drover.bench",queue="metricsq"} 5`)
	})
	for _, want := range []string{
		`drover_job_run_seconds_count{kind="drover.bench",queue="metricsq"} 5`,
		`drover_job_pickup_latency_seconds_count{queue="metricsq"} 5`,
		`drover_jobs_failed_total{kind="drover.bench",queue="metricsq"} 0`,
		"go_goroutines",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}
	if strings.Contains(body, "shard") {
		t.Errorf("a lone store's metrics have shard series:\n%s", body)
	}
}

// TestWorkerMetricsOfAFleet: `drover worker` on a fleet of two databases
// works the jobs of both, and its metrics add each shard's series,
// labelled by shard: both up, and the jobs it claimed from each.
func TestWorkerMetricsOfAFleet(t *testing.T) {
	t.Parallel()
	urls := newDatabases(t, 2)
	env := map[string]string{envDatabaseURLs: strings.Join(urls, " ")}
	if r := runCLI(t, env, "migrate"); r.code != exitOK {
		t.Fatalf("migrate: %s", r)
	}
	shards := map[int]int{}
	for range 6 {
		r := runCLI(t, env, "enqueue", "--queue", "metricsq", "drover.bench", "{}")
		id, err := strconv.ParseInt(strings.TrimSpace(r.stdout), 10, 64)
		if r.code != exitOK || err != nil {
			t.Fatalf("enqueue: %s", r)
		}
		shards[droverdriver.ShardOf(id)]++
	}
	scrape := metricsWorker(t, env)
	claimed := regexp.MustCompile(`drover_shard_claimed_jobs_total\{shard="(\d)"\} (\d+)`)
	var body string
	completed := `drover_jobs_completed_total{kind="drover.bench",queue="metricsq"} 6`
	waitfor.Cond(t, "each shard's jobs claimed and every job completed in the metrics", func() bool {
		body = scrape()
		got := map[int]int{}
		for _, m := range claimed.FindAllStringSubmatch(body, -1) {
			i, _ := strconv.Atoi(m[1])
			got[i], _ = strconv.Atoi(m[2])
		}
		// A job counts as completed once its finish is written, after
		// its claim counted.
		return got[0] == shards[0] && got[1] == shards[1] && strings.Contains(body, completed)
	})
	for _, want := range []string{`drover_shard_up{shard="0"} 1`, `drover_shard_up{shard="1"} 1`, `drover_shard_attached{shard="1"} 1`, completed} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}
}

// metricsWorker runs `drover worker` on queue metricsq with --metrics-addr
// until the test ends, and returns a scrape of its metrics.
func metricsWorker(t *testing.T, env map[string]string, global ...string) (scrape func() string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, append(global, "worker", "--queue", "metricsq", "--metrics-addr", "127.0.0.1:0"),
			io.Discard, stderr, func(k string) string { return env[k] })
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("worker exited with %d:\n%s", code, stderr.String())
		}
	})
	addr := regexp.MustCompile(`metrics listening.*addr=(http://\S+)`)
	var url string
	waitfor.Cond(t, "the metrics address in the log", func() bool {
		m := addr.FindStringSubmatch(stderr.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})
	return func() string {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
}
