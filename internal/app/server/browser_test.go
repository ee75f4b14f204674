package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// EnvScreenshots names the directory where the browser test writes its
// screenshots; by default they go to a temporary directory.
const envScreenshots = "DROVER_SCREENSHOT_DIR"

// chromium finds the browser, or skips the test saying how to get it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed, so the dashboard is not tested in a browser: apt-get install -y chromium (.ci/run does)")
	return ""
}

// queueRow is a queue as the overview shows it.
type queueRow struct {
	Queue                                    string
	Available, Scheduled, Retryable, Running int64
}

// TestDashboardInBrowser loads the dashboard in headless Chromium against a
// real store: the queue figures shown must match the store's, and a job
// that failed for good is retried through the UI and then seen completed.
func TestDashboardInBrowser(t *testing.T) {
	exe := chromium(t)
	shots := os.Getenv(envScreenshots)
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range stores {
		// One browser at a time: the machine is small.
		t.Run(s.name, func(t *testing.T) {
			b := setup(t, s.open)
			browse(t, b, exe, func(name string) string { return filepath.Join(shots, s.name+"-"+name+".png") })
		})
	}
}

func browse(t *testing.T, b *bundle, exe string, shot func(string) string) {
	// Work for the figures: jobs waiting in two queues, one scheduled,
	// one running, one failed for good.
	b.enqueue(t,
		map[string]any{"kind": "email", "args": map[string]any{"to": "ada@example.com"}},
		map[string]any{"kind": "email", "args": map[string]any{"to": "grace@example.com"}},
		map[string]any{"kind": "report", "args": map[string]any{"day": "2026-11-21"}, "queue": "reports"},
		map[string]any{"kind": "report", "args": map[string]any{"day": "2026-11-22"}, "queue": "reports",
			"run_at": time.Now().Add(time.Hour)},
	)
	bad := b.enqueue(t, map[string]any{"kind": "resize", "args": map[string]any{"image": 42}, "queue": "images", "max_attempts": 1})[0]
	b.enqueue(t, map[string]any{"kind": "resize", "args": map[string]any{"image": 43}, "queue": "images"})
	jobs := b.claim(t, map[string]any{"queue": "images", "worker": "py-worker-1", "max": 2, "lease_ms": 60000})
	if len(jobs) != 2 {
		t.Fatalf("claimed %d", len(jobs))
	}
	b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{map[string]any{
		"id": bad, "attempt": 1, "lease_token": b.lease(bad), "outcome": "failed", "max_attempts": 1, "error": "image 42 not found",
		"trace": "Traceback (most recent call last):\n  File \"worker.py\", line 12, in resize\nKeyError: 42"}}})

	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000))
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return strings.TrimSpace(v)
	}
	screenshot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(shot(name), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", shot(name))
	}

	// Log in: the dashboard sends a visitor without a session to the form.
	run("log in",
		chromedp.Navigate(b.url+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), b.tokens[server.ScopeAdmin]),
		chromedp.Click(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS("#queues")),
	)

	// The figures shown match the store. The page shows the sampler's
	// latest figures, so reload until it has sampled this work.
	want := storeQueues(t, b)
	var shown []queueRow
	waitfor.Cond(t, "the overview to show the store's figures", func() bool {
		run("reload the overview", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#queues")))
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify([...document.querySelectorAll("#queues tr[data-queue]")].map(tr => {
			const f = n => Number(tr.querySelector("[data-field=" + n + "]").textContent);
			return {Queue: tr.dataset.queue, Available: f("available"), Scheduled: f("scheduled"), Retryable: f("retryable"), Running: f("running")};
		}))`))
		if err != nil {
			t.Fatalf("read the queues table: %v", err)
		}
		shown = nil
		if err := json.Unmarshal([]byte(raw), &shown); err != nil {
			t.Fatal(err)
		}
		// Rows for queues with nothing waiting or running (their jobs
		// finished in the last interval) show zeros; the others match.
		var waiting []queueRow
		for _, q := range shown {
			if q != (queueRow{Queue: q.Queue}) {
				waiting = append(waiting, q)
			}
		}
		return fmt.Sprint(waiting) == fmt.Sprint(want)
	})
	if len(want) != 3 {
		t.Fatalf("the store has queues %v, want default, images and reports", want)
	}
	run("wait for the charts", chromedp.WaitReady(chromedp.CSS(`#chart-depth[data-ready="true"] canvas`)))
	// The workers table shows the sampler's reading of the registry, which
	// may come a sample after the queues'.
	waitfor.Cond(t, "the workers table to show py-worker-1", func() bool {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#workers tbody")?.textContent || ""`))
		return err == nil && strings.Contains(v, "py-worker-1")
	})
	screenshot("overview")

	// Find the discarded job through the filter, open it, retry it.
	run("open the discarded job",
		chromedp.Navigate(b.url+"/ui/jobs"),
		chromedp.SetValue(chromedp.CSS("#state"), "discarded"),
		chromedp.Click(chromedp.CSS("#filter")),
		// Only the filtered page marks an option selected; waiting for it
		// keeps the next steps off the page the click is leaving.
		chromedp.WaitReady(chromedp.CSS("#state option[selected]")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#jobs tr[data-id="%d"]`, bad))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`#jobs a[href="/ui/jobs/%d"]`, bad))),
		chromedp.WaitVisible(chromedp.CSS("#job-state")),
	)
	state, errorsText := text("#job-state"), text("main")
	if state != "discarded" || !strings.Contains(errorsText, "image 42 not found") || !strings.Contains(errorsText, "KeyError: 42") {
		t.Fatalf("job page shows state %q and %q", state, errorsText)
	}
	screenshot("job-discarded")
	run("retry it", chromedp.Click(chromedp.CSS("#retry")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	state = text("#job-state")
	if row := b.stored(t, bad); state != "available" || row.State != drovertype.JobStateAvailable {
		t.Fatalf("after retry the page shows %q and the store has %s", state, row.State)
	}

	// A worker picks it up again and completes it; the page shows it.
	again := b.claim(t, map[string]any{"queue": "images", "worker": "py-worker-1", "max": 5})
	if len(again) != 1 || again[0].ID != bad || again[0].Attempt != 2 {
		t.Fatalf("claim after retry = %+v", again)
	}
	b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
		map[string]any{"id": bad, "attempt": 2, "lease_token": b.lease(bad), "outcome": "completed"}}})
	run("see it completed", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#job-state")))
	state = text("#job-state")
	if state != "completed" || b.stored(t, bad).State != drovertype.JobStateCompleted {
		t.Fatalf("after the worker finished, the page shows %q", state)
	}
	screenshot("job-completed")

	// A batch with members pending, running and completed: opened by id
	// from the jobs page, its progress shows the store's counters.
	var batch struct{ ID int64 }
	b.must(t, http.StatusCreated, server.ScopeEnqueue, "POST", "/v1/batches", map[string]any{"jobs": []any{
		map[string]any{"kind": "thumb", "args": map[string]any{"n": 1}, "queue": "thumbs"}, map[string]any{"kind": "thumb", "args": map[string]any{"n": 2}, "queue": "thumbs"},
		map[string]any{"kind": "thumb", "args": map[string]any{"n": 3}, "queue": "thumbs"}}}).decode(t, &batch)
	members := b.claim(t, map[string]any{"queue": "thumbs", "worker": "py-worker-1", "max": 2})
	if len(members) != 2 {
		t.Fatalf("claimed %d members", len(members))
	}
	b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
		map[string]any{"id": members[0].ID, "attempt": 1, "lease_token": b.lease(members[0].ID), "outcome": "completed", "result": map[string]any{"w": 64}}}})
	run("open the batch",
		chromedp.Navigate(b.url+"/ui/jobs"),
		chromedp.SetValue(chromedp.CSS("#find-batch"), fmt.Sprint(batch.ID)),
		chromedp.Click(chromedp.CSS(`form[action="/ui/batches/find"] button`)),
		chromedp.WaitVisible(chromedp.CSS("#batch-counts")),
	)
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(Object.fromEntries(
		[...document.querySelectorAll("#batch-counts [data-count]")].map(td => [td.dataset.count, Number(td.textContent)])))`))
	if err != nil {
		t.Fatalf("read the batch counts: %v", err)
	}
	var shownCounts map[string]int64
	if err := json.Unmarshal([]byte(raw), &shownCounts); err != nil {
		t.Fatal(err)
	}
	stored, err := b.client.BatchGet(context.Background(), batch.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantCounts := map[string]int64{"total": stored.Total, "pending": stored.Pending(), "running": stored.Running,
		"failed": stored.Failed, "completed": stored.Completed, "cancelled": stored.Cancelled, "discarded": stored.Discarded}
	if fmt.Sprint(shownCounts) != fmt.Sprint(wantCounts) || stored.Pending() != 1 || stored.Running != 1 || stored.Completed != 1 {
		t.Fatalf("batch page shows %v, the store has %+v", shownCounts, stored)
	}
	if res := text("#batch-results tbody"); !strings.Contains(res, `"w"`) || !strings.Contains(res, "64") {
		t.Fatalf("batch results = %q, want the completed member's result", res)
	}
	screenshot("batch")
}

// storeQueues reads the store's queue figures in the order the overview
// lists them.
func storeQueues(t *testing.T, b *bundle) []queueRow {
	t.Helper()
	stats, err := b.client.QueueStats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := make([]queueRow, len(stats))
	for i, q := range stats {
		out[i] = queueRow{q.Queue, q.Available, q.Scheduled, q.Retryable, q.Running}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Queue < out[j].Queue })
	return out
}
