package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// evalJSON runs js, which returns JSON text, and decodes it into v.
func (br *browser) evalJSON(t *testing.T, js string, v any) {
	t.Helper()
	raw := br.eval(t, js)
	if err := json.Unmarshal([]byte(raw), v); err != nil {
		t.Fatalf("evaluate %s: %q: %v", js, raw, err)
	}
}

func (br *browser) screenshot(t *testing.T, path string) {
	t.Helper()
	png, err := chromedp.Run(br.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// rowIDs reads the data-id of the rows of the table sel.
func (br *browser) rowIDs(t *testing.T, sel string) []int64 {
	t.Helper()
	var ids []int64
	br.evalJSON(t, `JSON.stringify([...document.querySelectorAll("`+sel+` tr[data-id]")].map(tr => Number(tr.dataset.id)))`, &ids)
	return ids
}

// screenshotDir is where the browser tests write their screenshots.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv(envScreenshots)
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDashboardViewsInBrowser loads the search, the workflow graph, the
// batches and periodic pages, a job's dependants and the charts in
// headless Chromium against a real store, and checks each against what the
// store says: the jobs a search lists and its count, every step's state
// and every edge of a workflow, each batch's counters, each periodic job
// (paused and triggered from the page), and the charts' samples, before
// and after a reload.
func TestDashboardViewsInBrowser(t *testing.T) {
	exe := chromium(t)
	shots := screenshotDir(t)
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			b := setup(t, s.open)
			views(t, b, newBrowser(t, exe), func(name string) string { return filepath.Join(shots, s.name+"-"+name+".png") })
		})
	}
}

func views(t *testing.T, b *bundle, br *browser, shot func(string) string) {
	ctx := context.Background()
	// Jobs to search.
	b.enqueue(t,
		map[string]any{"kind": "email", "queue": "mail", "args": map[string]any{"to": "ada@example.com", "user": map[string]any{"id": 7}},
			"tags": []string{"vip"}, "metadata": map[string]any{"tenant": "acme"}},
		map[string]any{"kind": "email", "queue": "mail", "args": map[string]any{"to": "grace@example.com"}, "tags": []string{"vip", "eu"}},
		map[string]any{"kind": "email", "queue": "mail", "args": map[string]any{"to": "ada@example.com", "retry": true}},
		map[string]any{"kind": "report", "queue": "reports", "args": map[string]any{"day": "2026-11-21"}, "metadata": map[string]any{"tenant": "acme"}},
	)
	// A workflow: fetch, then two resizes, then publish; fetch and the
	// first resize complete.
	var wf struct{ IDs []int64 }
	b.must(t, http.StatusCreated, server.ScopeEnqueue, "POST", "/v1/workflows", map[string]any{"steps": []any{
		map[string]any{"ref": "fetch", "kind": "image.fetch", "queue": "images", "args": map[string]any{}},
		map[string]any{"ref": "r0", "kind": "image.resize", "queue": "images", "args": map[string]any{"size": 64}, "after": []string{"fetch"}},
		map[string]any{"ref": "r1", "kind": "image.resize", "queue": "images", "args": map[string]any{"size": 128}, "after": []string{"fetch"}},
		map[string]any{"kind": "album.publish", "queue": "default", "args": map[string]any{}, "after": []string{"r0", "r1"}},
	}}).decode(t, &wf)
	if len(wf.IDs) != 4 {
		t.Fatalf("workflow ids %v", wf.IDs)
	}
	complete := func(queue string, n int) {
		t.Helper()
		jobs := b.claim(t, map[string]any{"queue": queue, "worker": "w", "max": n})
		if len(jobs) != n {
			t.Fatalf("claimed %d of %s, want %d", len(jobs), queue, n)
		}
		var results []any
		for _, j := range jobs {
			results = append(results, map[string]any{"id": j.ID, "attempt": j.Attempt, "lease_token": b.lease(j.ID),
				"outcome": "completed", "result": map[string]any{"ok": j.ID}})
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": results})
	}
	complete("images", 1) // fetch
	complete("images", 1) // r0
	// Two batches of three; one member of the first completes.
	for range 2 {
		b.must(t, http.StatusCreated, server.ScopeEnqueue, "POST", "/v1/batches", map[string]any{"jobs": []any{
			map[string]any{"kind": "thumb", "queue": "thumbs", "args": map[string]any{"n": 1}},
			map[string]any{"kind": "thumb", "queue": "thumbs", "args": map[string]any{"n": 2}},
			map[string]any{"kind": "thumb", "queue": "thumbs", "args": map[string]any{"n": 3}}}})
	}
	complete("thumbs", 1)
	// Two periodic jobs.
	for _, p := range []map[string]any{{"name": "nightly", "schedule": "@every 1h", "kind": "report", "queue": "reports"},
		{"name": "warm", "schedule": "@every 30m", "kind": "cache.warm"}} {
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/periodic", p)
	}

	br.login(t, b)

	// Search through the form: args containment, newest first.
	br.run(t, "search by args",
		chromedp.Navigate(b.url+"/ui/jobs"),
		chromedp.SetValue(chromedp.CSS("#args"), `{"to":"ada@example.com"}`),
		chromedp.SetValue(chromedp.CSS("#order"), "desc"),
		clickJS("#filter"),
	)
	waitfor.Cond(t, "the search's page", func() bool {
		var search string
		br.evalJSON(t, `JSON.stringify(location.search)`, &search)
		return strings.Contains(search, "args=")
	})
	br.run(t, "the results", chromedp.WaitVisible(chromedp.CSS("#count")))
	checkSearch(t, b, br, drover.JobListParams{Args: json.RawMessage(`{"to":"ada@example.com"}`), NewestFirst: true}, 2)
	br.screenshot(t, shot("search"))
	for _, tc := range []struct {
		query string
		p     drover.JobListParams
		want  int
	}{
		{"tags=vip&order=asc", drover.JobListParams{Tags: []string{"vip"}}, 2},
		{"metadata=" + url.QueryEscape(`{"tenant":"acme"}`), drover.JobListParams{Metadata: json.RawMessage(`{"tenant":"acme"}`), NewestFirst: true}, 2},
		{"queue=images&state=completed", drover.JobListParams{Queue: "images", States: []drovertype.JobState{drovertype.JobStateCompleted}, NewestFirst: true}, 2},
		{"created_since=" + url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04")) + "&kind=thumb",
			drover.JobListParams{Kind: "thumb", NewestFirst: true, Created: drovertype.TimeRange{From: time.Now().Add(-time.Hour).Truncate(time.Minute)}}, 6},
	} {
		br.run(t, tc.query, chromedp.Navigate(b.url+"/ui/jobs?"+tc.query), chromedp.WaitVisible(chromedp.CSS("#count")))
		checkSearch(t, b, br, tc.p, tc.want)
	}

	// A step's page lists the jobs it depends on and those that depend
	// on it, and leads to the workflow's graph.
	r0 := wf.IDs[1]
	br.run(t, "open a step", chromedp.Navigate(fmt.Sprintf("%s/ui/jobs/%d", b.url, r0)), chromedp.WaitVisible(chromedp.CSS("#job-dependants")))
	dependants, err := b.client.JobDependants(ctx, r0)
	if err != nil {
		t.Fatal(err)
	}
	if got := br.rowIDs(t, "#job-dependants"); len(dependants) != 1 || !slices.Equal(got, []int64{dependants[0].ID}) || got[0] != wf.IDs[3] {
		t.Errorf("dependants shown %v, the store has %+v", got, dependants)
	}
	if got := br.rowIDs(t, "#job-parents"); !slices.Equal(got, []int64{wf.IDs[0]}) {
		t.Errorf("parents shown %v, want %d", got, wf.IDs[0])
	}
	br.screenshot(t, shot("job-dependants"))
	br.run(t, "open the graph", clickJS("#job-workflow"), chromedp.WaitVisible(chromedp.CSS("#workflow-graph")))
	g, err := b.client.WorkflowGraph(ctx, r0)
	if err != nil {
		t.Fatal(err)
	}
	var nodes map[string]string
	br.evalJSON(t, `JSON.stringify(Object.fromEntries([...document.querySelectorAll("#workflow-graph g.node")].map(n => [n.dataset.id, n.dataset.state])))`, &nodes)
	want := map[string]string{}
	for _, j := range g.Jobs {
		want[fmt.Sprint(j.ID)] = string(j.State)
	}
	if fmt.Sprint(nodes) != fmt.Sprint(want) || len(nodes) != 4 || want[fmt.Sprint(wf.IDs[3])] != "pending" || want[fmt.Sprint(wf.IDs[0])] != "completed" {
		t.Errorf("the graph shows %v, the store has %v", nodes, want)
	}
	var edges [][2]int64
	br.evalJSON(t, `JSON.stringify([...document.querySelectorAll("#workflow-graph path.edge")].map(e => [Number(e.dataset.parent), Number(e.dataset.child)]))`, &edges)
	var wantEdges [][2]int64
	for _, e := range g.Edges {
		wantEdges = append(wantEdges, [2]int64{e.Parent, e.Child})
	}
	if !slices.Equal(edges, wantEdges) || len(edges) != 4 {
		t.Errorf("the graph draws edges %v, the store has %v", edges, wantEdges)
	}
	br.screenshot(t, shot("workflow"))

	// Batches, newest first, with the store's counters.
	br.run(t, "batches", chromedp.Navigate(b.url+"/ui/batches"), chromedp.WaitVisible(chromedp.CSS("#batches")))
	var shownBatches []map[string]int64
	br.evalJSON(t, `JSON.stringify([...document.querySelectorAll("#batches tr[data-id]")].map(tr => Object.fromEntries(
		[["id", Number(tr.dataset.id)], ...[...tr.querySelectorAll("[data-count]")].map(td => [td.dataset.count, Number(td.textContent)])])))`, &shownBatches)
	stored, err := b.client.BatchList(ctx, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	var wantBatches []map[string]int64
	for _, x := range stored {
		wantBatches = append(wantBatches, map[string]int64{"id": x.ID, "total": x.Total, "pending": x.Pending(), "running": x.Running,
			"failed": x.Failed, "completed": x.Completed, "cancelled": x.Cancelled, "discarded": x.Discarded})
	}
	if fmt.Sprint(shownBatches) != fmt.Sprint(wantBatches) || len(stored) != 2 || stored[1].Completed != 1 {
		t.Errorf("batches shown %v, the store has %v", shownBatches, wantBatches)
	}
	br.screenshot(t, shot("batches"))

	// Periodic jobs: listed as stored, paused and triggered from the page.
	br.run(t, "periodic", chromedp.Navigate(b.url+"/ui/periodic"), chromedp.WaitVisible(chromedp.CSS("#periodic")))
	var names []string
	br.evalJSON(t, `JSON.stringify([...document.querySelectorAll("#periodic tr[data-name]")].map(tr => tr.dataset.name))`, &names)
	list, err := b.client.PeriodicJobs().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var wantNames []string
	for _, p := range list {
		wantNames = append(wantNames, p.Name)
	}
	if !slices.Equal(names, wantNames) || len(names) != 2 {
		t.Errorf("periodic jobs shown %v, stored %v", names, wantNames)
	}
	br.run(t, "pause nightly", clickJS(`tr[data-name="nightly"] button.pause`),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-name="nightly"][data-paused="true"]`)))
	if p, err := b.client.PeriodicJobs().Get(ctx, "nightly"); err != nil || !p.Paused || p.NextRunAt != nil {
		t.Errorf("after pause the store has %+v, %v", p, err)
	}
	if flash := br.text(t, `[data-testid="flash"]`); !strings.Contains(flash, "nightly paused") {
		t.Errorf("flash %q", flash)
	}
	br.run(t, "trigger warm", clickJS(`tr[data-name="warm"] button.trigger`))
	var flash string
	waitfor.Cond(t, "the trigger's banner", func() bool {
		flash = br.eval(t, `(document.querySelector('[data-testid="flash"]') || {}).textContent || ""`)
		return strings.Contains(flash, "triggered")
	})
	var triggered int64
	if _, err := fmt.Sscanf(flash[strings.LastIndex(flash, "job "):], "job %d inserted", &triggered); err != nil {
		t.Fatalf("flash %q names no job: %v", flash, err)
	}
	var meta struct{ Periodic string }
	if j := b.stored(t, triggered); j.Kind != "cache.warm" || json.Unmarshal(j.Metadata, &meta) != nil || meta.Periodic != "warm" {
		t.Errorf("triggered job %+v", j)
	}
	if p, err := b.client.PeriodicJobs().Get(ctx, "warm"); err != nil || p.LastRunAt == nil {
		t.Errorf("after trigger the store has %+v, %v", p, err)
	}
	if last := br.text(t, `tr[data-name="warm"] [data-field="last"]`); last == "never" {
		t.Errorf("warm's last run shows %q after a trigger", last)
	}
	br.screenshot(t, shot("periodic"))

	// The charts draw every sample the server keeps, from the first view
	// and again after a reload. The server samples every 20 ms and the
	// chart follows every second, so the two are compared once the
	// server keeps all it keeps (half an hour at the default interval; 360
	// samples here), when a chart that draws them all draws as many.
	points := func() (shown, kept int) {
		raw, err := chromedp.Run(br.ctx, chromedp.Evaluate[string](`fetch("/ui/history.json").then(r => r.json()).then(h =>
			JSON.stringify({Shown: Number(document.querySelector("#chart-depth").dataset.points), Kept: h.length}))`, chromedp.EvalAwaitPromise))
		var got struct{ Shown, Kept int }
		if err != nil || json.Unmarshal([]byte(raw), &got) != nil {
			t.Fatalf("read the samples: %q, %v", raw, err)
		}
		return got.Shown, got.Kept
	}
	var shown, kept int
	br.run(t, "the charts", chromedp.Navigate(b.url+"/"), chromedp.WaitReady(chromedp.CSS(`#chart-depth[data-ready="true"]`)))
	waitfor.Cond(t, "the depth chart to draw every sample the server keeps", func() bool {
		shown, kept = points()
		return shown >= 2 && kept >= shown && kept-shown <= 5
	})
	br.run(t, "reload", chromedp.Reload(), chromedp.WaitReady(chromedp.CSS(`#chart-depth[data-ready="true"]`)))
	if again, _ := points(); again < shown {
		t.Errorf("after a reload the chart draws %d samples, before %d", again, shown)
	}
	legend := br.text(t, "#chart-depth .u-legend")
	for _, want := range []string{"available", "retryable", "running"} {
		if !strings.Contains(legend, want) {
			t.Errorf("the depth chart's legend %q lacks %s", legend, want)
		}
	}
	br.screenshot(t, shot("overview"))
}

// checkSearch compares the jobs page as shown with what JobSearch and
// JobCount answer for p, which must match want jobs.
func checkSearch(t *testing.T, b *bundle, br *browser, p drover.JobListParams, want int) {
	t.Helper()
	ctx := context.Background()
	p.Limit = 50
	page, err := b.client.JobSearch(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, j := range page.Jobs {
		ids = append(ids, j.ID)
	}
	if got := br.rowIDs(t, "#jobs"); !slices.Equal(got, ids) || len(ids) != want {
		t.Errorf("%+v: the page lists %v, the store %v (want %d jobs)", p, got, ids, want)
	}
	n, err := b.client.JobCount(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Count string
		Exact string
	}
	br.evalJSON(t, `JSON.stringify({Count: document.querySelector("#count").dataset.count, Exact: document.querySelector("#count").dataset.exact})`, &shown)
	if shown.Count != fmt.Sprint(n.Count) || shown.Exact != fmt.Sprint(n.Exact) {
		t.Errorf("%+v: the page counts %+v, the store %+v", p, shown, n)
	}
}

// TestDashboardDemoScreenshots takes the dashboard's screenshots for the
// documentation from a server already running (DROVER_DEMO_URL, logged in
// with the admin token DROVER_DEMO_TOKEN), filled by
// scripts/dashboard-demo.py, into DROVER_SCREENSHOT_DIR. It is skipped
// unless DROVER_DEMO_URL is set.
func TestDashboardDemoScreenshots(t *testing.T) {
	base := os.Getenv("DROVER_DEMO_URL")
	if base == "" {
		t.Skip("DROVER_DEMO_URL is not set: see scripts/dashboard-demo.py")
	}
	exe := chromium(t)
	dir := screenshotDir(t)
	token := os.Getenv("DROVER_DEMO_TOKEN")
	br := newBrowser(t, exe)
	br.run(t, "log in",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), token),
		chromedp.Click(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS("#queues")),
	)
	// A workflow's last step, for its graph and its page.
	req, _ := http.NewRequest("GET", base+"/v1/jobs?kind=album.publish&order=desc&limit=1", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var page struct{ Jobs []struct{ ID int64 } }
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || len(page.Jobs) == 0 {
		t.Fatalf("no album.publish job: %v", err)
	}
	resp.Body.Close()
	step := page.Jobs[0].ID
	for _, s := range []struct{ name, path, ready string }{
		{"dashboard", "/", `#chart-depth[data-ready="true"]`},
		{"dashboard-jobs", "/ui/jobs", "#jobs"},
		{"dashboard-search", "/ui/jobs?state=retryable&metadata=" + url.QueryEscape(`{"tenant":"acme"}`), "#jobs"},
		{"dashboard-workflow", fmt.Sprintf("/ui/jobs/%d/workflow", step), "#workflow-graph"},
		{"dashboard-batches", "/ui/batches", "#batches"},
		{"dashboard-periodic", "/ui/periodic", "#periodic"},
		{"dashboard-queue", "/ui/queues/payments", `#chart-by-available[data-ready="true"]`},
		{"dashboard-running", "/ui/running", "#running"},
		{"dashboard-topic", "/ui/topics/orders", `#chart-lag[data-ready="true"]`},
	} {
		br.run(t, s.name, chromedp.Navigate(base+s.path), chromedp.WaitReady(chromedp.CSS(s.ready)))
		br.screenshot(t, filepath.Join(dir, s.name+".png"))
	}
}
