package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/maintenance"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// waitJS waits until the JavaScript expression js is true on the page: an
// evaluation that fails (the page is being replaced) counts as false.
func (br *browser) waitJS(t *testing.T, what, js string) {
	t.Helper()
	waitfor.Cond(t, what, func() bool {
		v, err := chromedp.Run(br.ctx, chromedp.Evaluate[string](`String(Boolean(`+js+`))`))
		return err == nil && v == "true"
	})
}

// dialogs answers every confirmation the page asks as accept says and
// keeps the last question. It must start after the browser has (after the
// first navigation).
type dialogs struct {
	accept atomic.Bool
	asked  atomic.Value
}

func (br *browser) answerDialogs() *dialogs {
	d := &dialogs{}
	go func() {
		for ev, err := range chromedp.Events(br.ctx, page.JavascriptDialogOpening) {
			if err != nil {
				return
			}
			d.asked.Store(ev.Message)
			if _, err := chromedp.Call(br.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: d.accept.Load()}); err != nil {
				return
			}
		}
	}()
	return d
}

func (d *dialogs) last() string { s, _ := d.asked.Load().(string); return s }

// waitAsked waits until the last question the page asked satisfies ok (the
// dialog event arrives on its own goroutine), failing the test with the
// question it saw last.
func (d *dialogs) waitAsked(t *testing.T, what string, ok func(string) bool) {
	t.Helper()
	if !waitfor.Within(waitfor.Timeout, func() bool { return ok(d.last()) }) {
		t.Fatalf("timed out after %s waiting for %s; the page last asked %q", waitfor.Timeout, what, d.last())
	}
}

// startsWith is a waitAsked condition: the question starts with prefix
// (the rest explains the consequences).
func startsWith(prefix string) func(string) bool {
	return func(q string) bool { return strings.HasPrefix(q, prefix) }
}

// stillThere is true while the page has not been reloaded since the test
// set its marker: live updates swap regions, never the page.
const stillThere = `window.__console === 1`

// TestConsoleInBrowser checks in headless Chromium, against a real store,
// what an operator used to Oban Web, River UI or Sidekiq expects of the
// console (issue 38): queues, workers, job lists and topics follow the
// store without a reload; every job view counts its jobs by state; the
// charts draw per queue and per kind from the history the leader stores,
// with ticks and legends, after a restart too; a queue's settings are
// shown and edited, and a strict queue says what it is stuck behind;
// topics show their options, lag over time, retry queue and messages,
// release a held lane and lose a subscription from the page; periodic jobs are created, edited and
// deleted; the jobs table shows args, finish time, run time and worker,
// and a page lists what runs now; "Delete all not running" counts what it
// deletes; both workers tables agree, and the queues table fills the
// window with its actions on one line.
func TestConsoleInBrowser(t *testing.T) {
	exe := chromium(t)
	shots := screenshotDir(t)
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			console(t, setup(t, s.open), newBrowserFor(t, exe, 5*time.Minute), func(name string) string {
				return shots + "/" + s.name + "-console-" + name + ".png"
			})
		})
	}
}

func console(t *testing.T, b *bundle, br *browser, shot func(string) string) {
	ctx := context.Background()
	te, _ := b.driver.Executor().(droverdriver.TopicExecutor)
	recorder := &maintenance.HistoryRecorder{Exec: b.driver.Executor(), Topics: te, Retention: drover.HistoryRetentionDefault,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	// record stores the history of the minutes before now, as the
	// leader does each minute.
	record := func(minutes int) {
		t.Helper()
		now := time.Now()
		for i := minutes; i >= 0; i-- {
			if err := recorder.RunOnce(ctx, now.Add(-time.Duration(i)*time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
	}
	text := func(sel string) string { t.Helper(); return br.text(t, sel) }
	mark := func() { t.Helper(); br.eval(t, `(window.__console = 1, "marked")`) }

	live := b.enqueue(t,
		map[string]any{"kind": "email.send", "queue": "live", "args": map[string]any{"to": "ada@example.com", "n": 1}},
		map[string]any{"kind": "email.send", "queue": "live", "args": map[string]any{"to": "grace@example.com", "n": 2}},
		map[string]any{"kind": "email.digest", "queue": "live", "args": map[string]any{"n": 3}})
	record(6)
	br.login(t, b)
	dlg := br.answerDialogs()

	// 1, 10. The overview follows the store without a reload: a new
	// queue's jobs, then a worker's claims; both tables of workers say
	// what the store says it holds.
	br.run(t, "overview", chromedp.Navigate(b.url+"/"), chromedp.WaitVisible(chromedp.CSS("#queues")))
	mark()
	br.waitJS(t, "queue live with its 3 jobs", `document.querySelector('tr[data-queue="live"] [data-field=available]')?.textContent === "3"`)
	b.enqueue(t, map[string]any{"kind": "email.send", "queue": "live", "args": map[string]any{"n": 4}},
		map[string]any{"kind": "email.send", "queue": "live", "args": map[string]any{"n": 5}})
	br.waitJS(t, "the overview to show 5 jobs of live without a reload",
		`document.querySelector('tr[data-queue="live"] [data-field=available]')?.textContent === "5" && `+stillThere)
	claimed := b.claim(t, map[string]any{"queue": "live", "worker": "w-live", "max": 2, "lease_ms": 60000})
	if len(claimed) != 2 {
		t.Fatalf("claimed %d jobs of live", len(claimed))
	}
	br.waitJS(t, "the workers table to show w-live holding 2 jobs without a reload",
		`document.querySelector('#workers tr[data-worker="w-live"] [data-field=held]')?.textContent === "2" && `+stillThere)
	held := func() int64 {
		t.Helper()
		ws, err := b.client.Workers(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			if w.Name == "w-live" {
				return w.JobsHeld
			}
		}
		return -1
	}
	// 10. The page uses the window's width, and a queue's actions sit on
	// one line.
	var layout struct {
		Width float64
		Tops  []float64
	}
	br.evalJSON(t, `JSON.stringify({Width: document.querySelector("#queues").getBoundingClientRect().width,
		Tops: [...document.querySelectorAll('tr[data-queue="live"] .row-actions > *')].map(e => Math.round(e.getBoundingClientRect().top))})`, &layout)
	if layout.Width < 1300 || len(layout.Tops) != 3 || slices.Max(layout.Tops)-slices.Min(layout.Tops) > 4 {
		t.Errorf("the queues table is %.0f px wide in a 1,400 px window and its actions start at %v: want the width and one line", layout.Width, layout.Tops)
	}
	br.screenshot(t, shot("overview"))
	br.run(t, "workers page", chromedp.Navigate(b.url+"/ui/workers"), chromedp.WaitVisible(chromedp.CSS("#workers")))
	if got := text(`#workers tr[data-worker="w-live"] [data-field=held]`); got != "2" || held() != 2 {
		t.Errorf("the workers page shows w-live holding %q, the store %d; the overview showed 2", got, held())
	}

	// 2, 8. The jobs of queue live: tabs count each state as the store
	// does; the rows show args, worker, run time; a new job appears
	// without a reload, and so does a finish.
	br.run(t, "jobs of live", chromedp.Navigate(b.url+"/ui/jobs?queue=live"), chromedp.WaitVisible(chromedp.CSS("#state-tabs")))
	mark()
	checkTabs := func() bool {
		t.Helper()
		counts, err := b.client.JobStateCounts(ctx, drover.JobListParams{Queue: "live"})
		if err != nil {
			t.Fatal(err)
		}
		var shown map[string]string
		br.evalJSON(t, `JSON.stringify(Object.fromEntries([...document.querySelectorAll("#state-tabs a")].map(a => [a.dataset.state, a.dataset.count])))`, &shown)
		var all int64
		for st, c := range counts {
			all += c.Count
			if shown[string(st)] != strconv.FormatInt(c.Count, 10) {
				return false
			}
		}
		return shown["all"] == strconv.FormatInt(all, 10)
	}
	waitfor.Cond(t, "the state tabs to count what the store counts", checkTabs)
	if text(`#state-tabs a[data-state="available"]`) != "available 3" || text(`#state-tabs a[data-state="running"]`) != "running 2" ||
		text(`#state-tabs a.current`) != "all 5" {
		t.Errorf("tabs: %q", text("#state-tabs"))
	}
	run := claimed[0].ID
	if w, ran := text(fmt.Sprintf(`#jobs tr[data-id="%d"] [data-field=worker]`, run)), text(fmt.Sprintf(`#jobs tr[data-id="%d"] [data-field=ran]`, run)); w != "w-live" || ran == "-" {
		t.Errorf("running job %d shows worker %q, ran %q", run, w, ran)
	}
	if args := text(fmt.Sprintf(`#jobs tr[data-id="%d"] [data-field=args]`, live[0])); args != `{"n":1,"to":"ada@example.com"}` {
		t.Errorf("job %d's args preview %q", live[0], args)
	}
	late := b.enqueue(t, map[string]any{"kind": "email.send", "queue": "live", "args": map[string]any{"n": 6}})[0]
	b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
		map[string]any{"id": run, "attempt": 1, "lease_token": b.lease(run), "outcome": "completed"}}})
	br.waitJS(t, "the new job and the finish to show without a reload", fmt.Sprintf(
		`document.querySelector('#jobs tr[data-id="%d"]') && document.querySelector('#jobs tr[data-id="%d"] [data-field=state]')?.textContent === "completed" && %s`,
		late, run, stillThere))
	waitfor.Cond(t, "the tabs to count the new job and the finish", checkTabs)
	if fin, ran := text(fmt.Sprintf(`#jobs tr[data-id="%d"] [data-field=finished]`, run)), text(fmt.Sprintf(`#jobs tr[data-id="%d"] [data-field=ran]`, run)); fin == "-" || ran == "-" {
		t.Errorf("completed job %d shows finished %q, ran %q", run, fin, ran)
	}
	// Suggestions for the filters: the queues and kinds in use.
	var options struct{ Queues, Kinds []string }
	br.evalJSON(t, `JSON.stringify({Queues: [...document.querySelectorAll("#queue-names option")].map(o => o.value),
		Kinds: [...document.querySelectorAll("#kind-names option")].map(o => o.value)})`, &options)
	if !slices.Contains(options.Queues, "live") || !slices.Contains(options.Kinds, "email.send") || !slices.Contains(options.Kinds, "email.digest") {
		t.Errorf("the filters suggest queues %v and kinds %v", options.Queues, options.Kinds)
	}
	br.run(t, "the available tab", clickJS(`#state-tabs a[data-state="available"]`),
		chromedp.WaitVisible(chromedp.CSS(`#state-tabs a.current[data-state="available"]`)))
	var states []string
	br.evalJSON(t, `JSON.stringify([...document.querySelectorAll("#jobs [data-field=state]")].map(td => td.textContent))`, &states)
	if len(states) != 4 || slices.ContainsFunc(states, func(s string) bool { return s != "available" }) {
		t.Errorf("the available tab lists states %v, want 4 available jobs", states)
	}
	// 10. The table, with its args, times and worker, fits the window.
	if fits := br.eval(t, `String(document.documentElement.scrollWidth <= window.innerWidth)`); fits != "true" {
		t.Errorf("the jobs page is %s px wide in a window of %s", br.eval(t, `String(document.documentElement.scrollWidth)`), br.eval(t, `String(window.innerWidth)`))
	}
	br.screenshot(t, shot("jobs"))

	// 8. What runs now, on which worker, for how long.
	br.run(t, "running now", chromedp.Navigate(b.url+"/ui/running"), chromedp.WaitVisible(chromedp.CSS("#running")))
	still := claimed[1].ID
	if w, since := text(fmt.Sprintf(`#running tr[data-id="%d"] [data-field=worker]`, still)), text(fmt.Sprintf(`#running tr[data-id="%d"] [data-field=for]`, still)); w != "w-live" || since == "-" || since == "" {
		t.Errorf("running job %d shows worker %q, running for %q", still, w, since)
	}
	if n := text(`#running-workers tr[data-worker="w-live"] [data-field=jobs]`); n != "1" || held() != 1 {
		t.Errorf("w-live runs %q jobs on the page, %d in the store", n, held())
	}

	// 4. Charts per queue and per kind from the stored history, with a
	// tick every few dozen pixels and legends showing the latest values;
	// after a restart the stored ranges draw the same minutes.
	record(2)
	br.run(t, "queue live", chromedp.Navigate(b.url+"/ui/queues/live"), chromedp.WaitReady(chromedp.CSS(`#chart-by-available[data-ready="true"]`)))
	var chart struct {
		Points, Ticks int
		Series        string
		Legend        []string
	}
	readChart := func(id string) {
		t.Helper()
		br.evalJSON(t, `(() => { const f = document.querySelector("#`+id+`"); return JSON.stringify({Points: Number(f.dataset.points),
			Ticks: Number(f.dataset.ticks), Series: f.dataset.series,
			Legend: [...f.querySelectorAll(".u-legend .u-series:not(:first-child) .u-value")].map(v => v.textContent)}) })()`, &chart)
	}
	readChart("chart-by-available")
	if chart.Points < 6 || chart.Ticks < 5 || chart.Series != "email.digest,email.send" ||
		slices.ContainsFunc(chart.Legend, func(v string) bool { return v == "" || v == "-" || v == "--" }) {
		t.Errorf("the per-kind chart of queue live: %+v; want a point a minute, 5 ticks or more, both kinds, and their latest values in the legend", chart)
	}
	br.screenshot(t, shot("queue"))
	b.restart(t)
	br.login(t, b)
	br.run(t, "the overview after a restart", chromedp.Navigate(b.url+"/"), chromedp.WaitVisible(chromedp.CSS("#charts")),
		clickJS(`#charts button[data-range="6h"]`),
		chromedp.WaitReady(chromedp.CSS(`#charts[data-range="6h"] #chart-by-available[data-ready="true"]`)))
	br.waitJS(t, "the 6 h charts to draw the stored minutes", `document.querySelector("#chart-depth").dataset.points >= 7 && document.querySelector("#charts").dataset.range === "6h"`)
	readChart("chart-by-available")
	if !strings.Contains(chart.Series, "live") || chart.Ticks < 5 {
		t.Errorf("the per-queue chart after a restart: %+v", chart)
	}

	// 5. A queue's settings, edited on its page; a strict queue stuck
	// behind a failed job says so.
	sq := b.enqueue(t, map[string]any{"kind": "charge", "queue": "sq", "args": map[string]any{"invoice": 27725}},
		map[string]any{"kind": "charge", "queue": "sq", "args": map[string]any{"invoice": 27726}})
	br.run(t, "queue sq", chromedp.Navigate(b.url+"/ui/queues/sq"), chromedp.WaitVisible(chromedp.CSS("#strict-max")),
		chromedp.SetValue(chromedp.CSS("#strict-max"), "1"), clickJS("#strict-save"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	br.run(t, "limits of sq", chromedp.SetValue(chromedp.CSS("#limit-global"), "3"), chromedp.SetValue(chromedp.CSS("#limit-rate"), "10"),
		chromedp.SetValue(chromedp.CSS("#limit-period"), "1s"), clickJS("#limits-save"))
	br.waitJS(t, "the limits' banner", `document.querySelector('[data-testid="flash"]')?.textContent === "Queue sq: saved its limits."`)
	st, err := b.client.QueueGet(ctx, "sq")
	if err != nil || st.Strict != 1 || st.Limit.MaxRunning != 3 || st.Limit.Rate != 10 || st.Limit.Period != time.Second {
		t.Fatalf("store after the forms: %+v, %v; want strict 1, at most 3 running, 10 per second", st, err)
	}
	if got := text(`#queue-region [data-setting="strict"]`) + " / " + text(`#queue-region [data-setting="rate"]`); got != "strict, 1 at once / 10 per 1s" {
		t.Errorf("the queue's badges say %q", got)
	}
	if status, body, _ := b.post(t, "/ui/queues/sq/strict", url.Values{"max_running": {"one"}}, map[string]string{"Authorization": "Bearer " + b.tokens[server.ScopeAdmin]}); status != http.StatusBadRequest || !strings.Contains(body, "max_running") {
		t.Errorf("strict order %q = %d: %s; want a 400 naming max_running", "one", status, body)
	}
	head := b.claim(t, map[string]any{"queue": "sq", "worker": "w-sq", "max": 5})
	if len(head) != 1 || head[0].ID != sq[0] {
		t.Fatalf("the strict claim took %+v, want job %d alone", head, sq[0])
	}
	b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
		map[string]any{"id": sq[0], "attempt": 1, "lease_token": b.lease(sq[0]), "outcome": "failed", "error": "card declined"}}})
	br.run(t, "overview", chromedp.Navigate(b.url+"/"), chromedp.WaitVisible(chromedp.CSS("#queues")))
	br.waitJS(t, "the overview to say what sq is stuck behind", `document.querySelector('tr[data-head="sq"]')`)
	note := text(`tr[data-head="sq"] [data-field=head]`)
	if want := fmt.Sprintf("Queue sq is stuck behind job %d (charge, attempt 1 of 25 after \"card declined\"), retrying in ", sq[0]); !strings.HasPrefix(note, want) ||
		!strings.Contains(note, "nothing else of the queue starts") {
		t.Errorf("the overview says %q; want it to start %q", note, want)
	}
	if j := b.stored(t, sq[1]); j.State != drovertype.JobStateAvailable {
		t.Errorf("the job behind the head is %s", j.State)
	}
	br.screenshot(t, shot("strict"))

	// 6. Topics: options, lag over time, the retry queue, live lag, a
	// lane released, the messages, and a subscription deleted from the page.
	b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "orders", "lanes": 4})
	for _, sub := range []string{"billing", "audit"} {
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/orders/subscriptions", map[string]any{"name": sub})
	}
	publish := func(n int) {
		msgs := make([]map[string]any, n)
		for i := range msgs {
			msgs[i] = map[string]any{"payload": map[string]any{"order": i}}
		}
		b.must(t, http.StatusOK, server.ScopeEnqueue, "POST", "/v1/topics/orders/publish", map[string]any{"messages": msgs})
	}
	publish(3)
	record(3)
	br.run(t, "topics", chromedp.Navigate(b.url+"/ui/topics"), chromedp.WaitVisible(chromedp.CSS(`#topics tr[data-topic="orders"]`)))
	if link := br.eval(t, `document.querySelector('#topics tr[data-subscription="billing"] a.retry-queue')?.textContent || ""`); link != "topic:orders" {
		t.Errorf("the topics page links the retry queue as %q", link)
	}
	br.run(t, "topic orders", clickJS(`#topics tr[data-subscription="billing"] a[href="/ui/topics/orders"]`),
		chromedp.WaitReady(chromedp.CSS(`#chart-lag[data-ready="true"]`)))
	mark()
	if lanes, retention, retry := text(`#topic-options [data-field=lanes]`), text(`#topic-options [data-field=retention]`), text("#retry-queue"); !strings.HasPrefix(lanes, "4:") ||
		!strings.HasPrefix(retention, "168h0m0s:") || retry != "topic:orders" {
		t.Errorf("topic options: lanes %q, retention %q, retry queue %q", lanes, retention, retry)
	}
	readChart("chart-lag")
	if chart.Series != "audit,billing" || chart.Points < 3 || !slices.Equal(chart.Legend, []string{"3.0", "3.0"}) {
		t.Errorf("the lag chart: %+v; want both subscriptions at 3 messages over the stored minutes", chart)
	}
	publish(2)
	br.waitJS(t, "the lag to follow the publish without a reload",
		`document.querySelector('#subscriptions tr[data-subscription="billing"] [data-field=lag]')?.textContent === "5" && `+stillThere)
	br.screenshot(t, shot("topic"))
	// A subscription's lanes, live like every page.
	br.run(t, "billing's lanes", clickJS(`#subscriptions tr[data-subscription="billing"] a[href="/ui/topics/orders/billing"]`),
		chromedp.WaitVisible(chromedp.CSS("#lanes")))
	mark()
	publish(1)
	br.waitJS(t, "the lanes' lag to follow the publish without a reload",
		`[...document.querySelectorAll('#lanes [data-field=lag]')].reduce((n, td) => n + Number(td.textContent), 0) === 6 && `+stillThere)
	// A held lane released from the page, after its question.
	b.receiveHTTP(t, server.ScopeWork, "orders", "billing", map[string]any{"batch_size": 1})
	br.waitJS(t, "the held lane's release button to appear without a reload",
		`document.querySelector('#lanes button[id^="release-"]') !== null && `+stillThere)
	dlg.accept.Store(true)
	br.run(t, "release the held lane", clickJS(`#lanes button[id^="release-"]`), chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	dlg.waitAsked(t, "the release's question", startsWith("Release lane "))
	if flash := text(`[data-testid="flash"]`); !strings.Contains(flash, "of subscription billing released") {
		t.Errorf("releasing the lane said %q", flash)
	}
	for _, l := range b.lanesHTTP(t, "orders", "billing") {
		if l["holder"] != nil {
			t.Errorf("lane %v still held after the release", l)
		}
	}
	br.run(t, "back to orders", clickJS(`h1 a[href="/ui/topics/orders"]`), chromedp.WaitVisible(chromedp.CSS("#delete-audit")))
	// The topic's messages, peeked at.
	if n := br.eval(t, `String(document.querySelectorAll('#peek tr[data-message]').length)`); n != "6" {
		t.Errorf("the topic's page peeks at %s messages, want the 6 published", n)
	}
	// billing rewound to the earliest from the page, after its question:
	// what it had acknowledged is pending again.
	var acks []map[string]any
	for _, batch := range b.receiveHTTP(t, server.ScopeWork, "orders", "billing", map[string]any{"batch_size": 10, "max_batches": 4}).Batches {
		acks = append(acks, map[string]any{"receipt": batch.Receipt})
	}
	b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/topics/orders/subscriptions/billing/ack", map[string]any{"acks": acks})
	br.run(t, "rewind billing", clickJS("#rewind-earliest-billing"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	dlg.waitAsked(t, "the rewind's question", startsWith("Rewind subscription billing of topic orders to the earliest message kept?"))
	if flash := text(`[data-testid="flash"]`); !strings.HasPrefix(flash, "Subscription billing rewound:") || !strings.Contains(flash, "6 messages to deliver") {
		t.Errorf("rewinding billing said %q", flash)
	}
	br.run(t, "delete audit", clickJS("#delete-audit"), chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
	dlg.waitAsked(t, "the delete's question", startsWith("Delete subscription audit of topic orders?"))
	if flash := text(`[data-testid="flash"]`); !strings.HasPrefix(flash, "Subscription audit of topic orders deleted") {
		t.Errorf("deleting audit said %q", flash)
	}
	topics, err := b.client.Topics(ctx)
	if err != nil || len(topics) != 1 || !slices.Equal(topics[0].Subscriptions, []string{"billing"}) {
		t.Errorf("topics after the delete: %+v, %v; want orders with billing alone", topics, err)
	}
	// The whole topic, from its page.
	br.run(t, "delete orders", clickJS("#delete-topic"), chromedp.WaitVisible(chromedp.CSS("#topics")))
	dlg.waitAsked(t, "the topic delete's question", startsWith("Delete topic orders, its 1 subscriptions and every message it keeps?"))
	if flash := text(`[data-testid="flash"]`); !strings.HasPrefix(flash, "Topic orders deleted") {
		t.Errorf("deleting orders said %q", flash)
	}
	if topics, err := b.client.Topics(ctx); err != nil || len(topics) != 0 {
		t.Errorf("topics after deleting orders: %+v, %v; want none", topics, err)
	}

	// 7. Periodic jobs created, edited and deleted from the page.
	br.run(t, "a new periodic job", chromedp.Navigate(b.url+"/ui/periodic"), chromedp.WaitVisible(chromedp.CSS("#periodic-new")),
		chromedp.SetValue(chromedp.CSS(`#periodic-new input[name="name"]`), "digest"),
		chromedp.SetValue(chromedp.CSS(`#periodic-new input[name="schedule"]`), "@every 1h"),
		chromedp.SetValue(chromedp.CSS(`#periodic-new input[name="kind"]`), "email.digest"),
		chromedp.SetValue(chromedp.CSS(`#periodic-new input[name="queue"]`), "live"),
		chromedp.SetValue(chromedp.CSS(`#periodic-new textarea[name="args"]`), `{"scope":"all"}`),
		clickJS(`#periodic-new button.save`),
		chromedp.WaitVisible(chromedp.CSS(`#periodic tr[data-name="digest"]`)))
	p, err := b.client.PeriodicJobs().Get(ctx, "digest")
	if err != nil || p.Schedule != "@every 1h" || p.Kind != "email.digest" || p.Queue != "live" || !sameJSON(p.Args, `{"scope":"all"}`) ||
		text(`[data-testid="flash"]`) != "Periodic job digest created." {
		t.Fatalf("after the create: %+v, %v; banner %q", p, err, text(`[data-testid="flash"]`))
	}
	br.run(t, "edit digest", clickJS(`#periodic tr[data-name="digest"] details.edit summary`),
		chromedp.SetValue(chromedp.CSS(`#periodic tr[data-name="digest"] input[name="schedule"]`), "@every 2h"),
		clickJS(`#periodic tr[data-name="digest"] button.save`))
	br.waitJS(t, "the edit's banner", `document.querySelector('[data-testid="flash"]')?.textContent === "Periodic job digest saved."`)
	if p, err := b.client.PeriodicJobs().Get(ctx, "digest"); err != nil || p.Schedule != "@every 2h" || !sameJSON(p.Args, `{"scope":"all"}`) {
		t.Errorf("after the edit: %+v, %v; want @every 2h, its args kept", p, err)
	}
	if text(`#periodic tr[data-name="digest"] [data-field=schedule]`) != "@every 2h" {
		t.Errorf("the page shows schedule %q", text(`#periodic tr[data-name="digest"] [data-field=schedule]`))
	}
	br.run(t, "delete digest", clickJS(`#periodic tr[data-name="digest"] button.delete`))
	br.waitJS(t, "the delete's banner", `(document.querySelector('[data-testid="flash"]')?.textContent || "").startsWith("Periodic job digest deleted")`)
	if _, err := b.client.PeriodicJobs().Get(ctx, "digest"); !errors.Is(err, drover.ErrPeriodicNotFound) {
		t.Errorf("after the delete: %v, want it gone", err)
	}
	dlg.waitAsked(t, "the delete's question", startsWith("Delete periodic job digest?"))

	// 9. With no filter, "Delete all not running" says how many jobs it
	// deletes; dismissed, it deletes none.
	counts, err := b.client.JobStateCounts(ctx, drover.JobListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var notRunning int64
	for st, c := range counts {
		if st != drovertype.JobStateRunning {
			notRunning += c.Count
		}
	}
	dlg.accept.Store(false)
	br.run(t, "delete all, dismissed", chromedp.Navigate(b.url+"/ui/jobs"), chromedp.WaitVisible(chromedp.CSS("#bulk-delete")),
		clickJS("#bulk-delete"))
	want := fmt.Sprintf("Delete all not running: %d jobs match no filter (every job of the store) and are deleted, on every page. Go ahead?", notRunning)
	dlg.waitAsked(t, "the confirmation with the count", func(q string) bool { return q == want })
	if after, err := b.client.JobStateCounts(ctx, drover.JobListParams{}); err != nil || !maps.Equal(after, counts) {
		t.Errorf("counts after a dismissed delete: %v, %v; before %v", after, err, counts)
	}
}

// sameJSON reports whether raw holds the JSON value want, however spaced
// (PostgreSQL's jsonb writes its own spacing).
func sameJSON(raw []byte, want string) bool {
	var a, b any
	return json.Unmarshal(raw, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && reflect.DeepEqual(a, b)
}
