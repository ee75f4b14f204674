package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
)

type blockArgs struct{}

func (blockArgs) Kind() string { return "block" }

// releasedJob runs a job in a Go client that stops while the job runs, so
// that the job is released with its attempt undone and an error that says
// so, and returns its id.
func releasedJob(t *testing.T, d droverdriver.Driver) int64 {
	t.Helper()
	workers := drover.NewWorkers()
	started := make(chan struct{})
	drover.AddWorker(workers, drover.WorkFunc(func(ctx context.Context, _ *drover.Job[blockArgs]) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}))
	cfg := &drover.Config{Queues: map[string]drover.QueueConfig{"held": {MaxWorkers: 1}}, Workers: workers,
		Logger: quietLogger(), StopTimeout: time.Millisecond, PollInterval: 20 * time.Millisecond}
	var c testClient
	var err error
	switch d := d.(type) {
	case *droverpg.Driver:
		c, err = drover.NewClient[pgx.Tx](d, cfg)
	case *droversqlite.Driver:
		c, err = drover.NewClient[*sql.Tx](d, cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	row, err := c.(interface {
		Insert(context.Context, drover.Args, *drover.InsertOpts) (*drovertype.JobRow, error)
	}).Insert(ctx, blockArgs{}, &drover.InsertOpts{Queue: "held"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	return row.ID
}

// TestDashboardActionsInBrowser checks in headless Chromium that a job's
// page offers only the actions its state allows, that the banner shows
// only the server's own messages whatever the URL says, that a released
// attempt's error says it was not counted, and that a browser at a path
// outside the dashboard gets a page, not JSON.
func TestDashboardActionsInBrowser(t *testing.T) {
	exe := chromium(t)
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			var d droverdriver.Driver
			b := setup(t, func(t *testing.T) (droverdriver.Driver, testClient) {
				var c testClient
				d, c = s.open(t)
				return d, c
			})
			released := releasedJob(t, d)
			ids := b.enqueue(t,
				map[string]any{"kind": "a", "args": map[string]any{}, "queue": "fail", "max_attempts": 1},
				map[string]any{"kind": "a", "args": map[string]any{}, "queue": "run"},
				map[string]any{"kind": "a", "args": map[string]any{}, "queue": "wait"},
			)
			discarded, running, waiting := ids[0], ids[1], ids[2]
			b.claim(t, map[string]any{"queue": "fail", "worker": "w", "max": 1})
			b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{map[string]any{
				"id": discarded, "attempt": 1, "lease_token": b.lease(discarded), "outcome": "failed", "error": "no"}}})
			b.claim(t, map[string]any{"queue": "run", "worker": "w", "max": 1, "lease_ms": 60000})

			br := newBrowser(t, exe)
			br.login(t, b)

			// Each job's buttons, against its state in the store.
			for _, tc := range []struct {
				id    int64
				state drovertype.JobState
				want  string // the buttons shown, in order
			}{
				{discarded, drovertype.JobStateDiscarded, "retry"},
				{running, drovertype.JobStateRunning, "cancel"},
				{waiting, drovertype.JobStateAvailable, "cancel discard"},
				{released, drovertype.JobStateAvailable, "cancel discard"},
			} {
				br.run(t, "open job", chromedp.Navigate(fmt.Sprintf("%s/ui/jobs/%d", b.url, tc.id)), chromedp.WaitVisible(chromedp.CSS("#job-state")))
				if got := b.stored(t, tc.id).State; got != tc.state {
					t.Fatalf("job %d is %s in the store, want %s", tc.id, got, tc.state)
				}
				shown := br.eval(t, `[...document.querySelectorAll(".actions button")].map(b => b.id).join(" ")`)
				if br.text(t, "#job-state") != string(tc.state) || shown != tc.want {
					t.Errorf("job %d (%s): page shows state %q and buttons %q, want %q", tc.id, tc.state, br.text(t, "#job-state"), shown, tc.want)
				}
			}

			// The released attempt: no attempt used, its error numbered as
			// it ran and marked as not counted.
			br.run(t, "open the released job", chromedp.Navigate(fmt.Sprintf("%s/ui/jobs/%d", b.url, released)), chromedp.WaitVisible(chromedp.CSS("#job-state")))
			row := b.stored(t, released)
			if row.Attempt != 0 || len(row.Errors) != 1 || !row.Errors[0].Released || row.Errors[0].Attempt != 1 {
				t.Fatalf("released job in the store: attempt %d, errors %+v", row.Attempt, row.Errors)
			}
			if a, main := br.text(t, "#job-attempt"), br.text(t, "main"); !strings.HasPrefix(a, "0 of") ||
				!strings.Contains(main, "Attempt 1 (released when its client stopped; not counted)") {
				t.Errorf("released job shows attempt %q and:\n%s", a, main)
			}

			// The banner: text from the URL is never shown; the server's
			// messages are.
			for _, path := range []string{
				fmt.Sprintf("/ui/jobs/%d?flash=Your+account+is+locked", waiting),
				fmt.Sprintf("/ui/jobs/%d?done=Your+account+is+locked", waiting),
				"/ui/jobs?flash=Your+account+is+locked",
				"/ui/jobs?bulk=Your+account+is+locked&changed=1",
				"/ui/jobs?bulk=retry&changed=lots",
			} {
				br.run(t, "open "+path, chromedp.Navigate(b.url+path), chromedp.WaitVisible(chromedp.CSS("main")))
				if n := br.eval(t, `String(document.querySelectorAll("[data-testid=flash]").length)`); n != "0" || strings.Contains(br.text(t, "main"), "account") {
					t.Errorf("%s shows a banner from the URL: %s", path, br.text(t, "main"))
				}
			}
			br.run(t, "discard the waiting job", chromedp.Navigate(fmt.Sprintf("%s/ui/jobs/%d", b.url, waiting)),
				chromedp.WaitVisible(chromedp.CSS("#discard")), clickJS("#discard"),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
			if flash, st := br.text(t, `[data-testid="flash"]`), b.stored(t, waiting).State; st != drovertype.JobStateDiscarded ||
				flash != fmt.Sprintf("Job %d discarded if it was waiting: now discarded.", waiting) {
				t.Errorf("after discard: banner %q, store %s", flash, st)
			}

			// Paths outside the dashboard.
			br.run(t, "open /jobs", chromedp.Navigate(b.url+"/jobs?state=discarded"), chromedp.WaitVisible(chromedp.CSS("#jobs")))
			if loc := br.eval(t, `location.pathname + location.search`); loc != "/ui/jobs?state=discarded" {
				t.Errorf("/jobs led to %s, want /ui/jobs?state=discarded", loc)
			}
			br.run(t, "open /nope", chromedp.Navigate(b.url+"/nope"), chromedp.WaitVisible(chromedp.CSS("#error")))
			if msg := br.text(t, "#error"); !strings.Contains(msg, "No page at /nope") {
				t.Errorf("/nope shows %q", msg)
			}
		})
	}
}

// browser is a headless Chromium for one test.
type browser struct{ ctx context.Context }

func newBrowser(t *testing.T, exe string) *browser {
	t.Helper()
	return newBrowserFor(t, exe, 90*time.Second)
}

// newBrowserFor is newBrowser for a test that runs up to timeout.
func newBrowserFor(t *testing.T, exe string, timeout time.Duration) *browser {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000))
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return &browser{ctx: ctx}
}

func (br *browser) run(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(br.ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// clickJS waits for the element sel and clicks it from the page's own
// script, in one evaluation. chromedp's Click finds the element's node,
// then scrolls to it and sends the mouse events, and fails when the node
// is gone in between: a click that submits a form navigates away, and the
// dashboard's live regions (live.js) swap their elements for fresh ones
// every second or so.
func clickJS(sel string) chromedp.Action[chromedp.Void] {
	q, _ := json.Marshal(sel)
	wait := chromedp.WaitReady(chromedp.CSS(sel))
	click := chromedp.Evaluate[chromedp.Void](`document.querySelector(` + string(q) + `).click()`)
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if _, err := wait(ctx, t); err != nil {
			return chromedp.Void{}, err
		}
		return click(ctx, t)
	}
}

// text reads the text of the element sel, as the browser renders it. It
// waits for the element, and reads it in one evaluation, so that a live
// region swapped in between (live.js) cannot leave it reading a node
// that is gone.
func (br *browser) text(t *testing.T, sel string) string {
	t.Helper()
	if err := chromedp.Do(br.ctx, chromedp.WaitReady(chromedp.CSS(sel))); err != nil {
		t.Fatalf("read %s: %v", sel, err)
	}
	q, _ := json.Marshal(sel)
	v, err := chromedp.Run(br.ctx, chromedp.Evaluate[string](`(document.querySelector(`+string(q)+`) || {innerText: ""}).innerText`))
	if err != nil {
		t.Fatalf("read %s: %v", sel, err)
	}
	return strings.TrimSpace(v)
}

func (br *browser) eval(t *testing.T, js string) string {
	t.Helper()
	v, err := chromedp.Run(br.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// login signs in with the admin token.
func (br *browser) login(t *testing.T, b *bundle) {
	t.Helper()
	br.run(t, "log in",
		chromedp.Navigate(b.url+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), b.tokens[server.ScopeAdmin]),
		chromedp.Click(chromedp.CSS("#login")),
		chromedp.WaitVisible(chromedp.CSS("#queues")),
	)
}
