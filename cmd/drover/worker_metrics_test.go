package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/waitfor"
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

	ctx, cancel := context.WithCancel(context.Background())
	stderr := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- execute(ctx, []string{"worker", "--database-url", f.url, "--queue", "metricsq", "--metrics-addr", "127.0.0.1:0"},
			io.Discard, stderr, func(k string) string { return f.env[k] })
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
	scrape := func() string {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
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
}
