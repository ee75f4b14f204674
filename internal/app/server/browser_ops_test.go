package server_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestDashboardOperationsInBrowser checks in headless Chromium the
// operator's actions added on the dashboard, against the store: rows
// selected on the jobs page (one by one, and the whole page) are deleted
// after a confirmation, exactly those and not the running one; a dismissed
// confirmation changes nothing; a kind is paused and resumed within a
// queue from the overview.
func TestDashboardOperationsInBrowser(t *testing.T) {
	exe := chromium(t)
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			b := setup(t, s.open)
			ids := b.enqueue(t,
				map[string]any{"kind": "a", "args": map[string]any{}, "queue": "ops"},
				map[string]any{"kind": "a", "args": map[string]any{}, "queue": "ops"},
				map[string]any{"kind": "a", "args": map[string]any{}, "queue": "ops"},
				map[string]any{"kind": "b", "args": map[string]any{}, "queue": "ops"},
			)
			running := b.claim(t, map[string]any{"queue": "ops", "worker": "w", "max": 1, "lease_ms": 60000})
			if len(running) != 1 || running[0].ID != ids[0] {
				t.Fatalf("claimed %+v, want job %d", running, ids[0])
			}

			br := newBrowser(t, exe)
			// Logging in starts the browser, which the listener below
			// must not start a second time.
			br.login(t, b)
			// Answer every confirmation as accept says, and keep what
			// it asked.
			var accept atomic.Bool
			var asked atomic.Value
			go func() {
				for ev, err := range chromedp.Events(br.ctx, page.JavascriptDialogOpening) {
					if err != nil {
						return
					}
					asked.Store(ev.Message)
					if _, err := chromedp.Call(br.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept.Load()}); err != nil {
						return
					}
				}
			}()

			// Select the running job and the second one; delete them.
			jobsPage := b.url + "/ui/jobs?queue=ops"
			box := func(id int64) string { return fmt.Sprintf(`#jobs input[value="%d"]`, id) }
			br.run(t, "select two rows", chromedp.Navigate(jobsPage), chromedp.WaitVisible(chromedp.CSS("#selection")),
				clickJS(box(ids[0])), clickJS(box(ids[1])))
			if n := br.text(t, "#selected-count"); n != "2" {
				t.Fatalf("selection count shows %q after ticking two rows", n)
			}
			accept.Store(true)
			br.run(t, "delete the selection", clickJS("#selected-delete"),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
			waitfor.Cond(t, "the delete to be reported done", func() bool {
				br.run(t, "reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#selection")))
				return strings.Contains(br.text(t, "main"), "delete done")
			})
			if msg, _ := asked.Load().(string); !strings.Contains(msg, "Apply to the selected jobs?") {
				t.Errorf("the delete asked %q", msg)
			}
			if flash := br.text(t, `[data-testid="flash"]`); flash != "delete done: changed 1 of 2 selected jobs." {
				t.Errorf("banner after the delete: %q", flash)
			}
			if st := b.stored(t, ids[0]).State; st != drovertype.JobStateRunning {
				t.Errorf("the running job is %s after the delete, want running", st)
			}
			if _, err := b.client.JobGet(context.Background(), ids[1]); !errors.Is(err, drover.ErrNotFound) {
				t.Errorf("the deleted job: %v, want it gone", err)
			}
			if shown := br.eval(t, `[...document.querySelectorAll("#jobs tr[data-id]")].map(tr => tr.dataset.id).join(",")`); shown != fmt.Sprintf("%d,%d,%d", ids[3], ids[2], ids[0]) {
				t.Errorf("the jobs page shows rows %s after the delete, want the other three newest first", shown)
			}

			// The page's box selects every row; a dismissed confirmation
			// sends nothing.
			br.run(t, "select the page", chromedp.Navigate(jobsPage), chromedp.WaitVisible(chromedp.CSS("#selection")),
				clickJS("#select-page"))
			if n := br.text(t, "#selected-count"); n != "3" {
				t.Fatalf("selection count shows %q after selecting the page of 3", n)
			}
			accept.Store(false)
			br.run(t, "dismiss a delete of all", clickJS("#bulk-delete"))
			waitfor.Cond(t, "the confirmation to be asked, with the count of jobs it deletes", func() bool {
				msg, _ := asked.Load().(string)
				return strings.HasPrefix(msg, "Delete all not running: 2 jobs match this filter and are deleted, on every page.")
			})
			if counts, err := b.client.JobCountByState(context.Background(), "ops"); err != nil ||
				counts[drovertype.JobStateAvailable] != 2 || counts[drovertype.JobStateRunning] != 1 {
				t.Fatalf("store after a dismissed delete: %v, %v; want 2 available and 1 running", counts, err)
			}

			// Pause kind a of queue ops from its page, then resume it.
			br.run(t, "pause kind a", chromedp.Navigate(b.url+"/"), chromedp.WaitVisible(chromedp.CSS("#queues")),
				clickJS(`tr[data-queue="ops"] a.settings`), chromedp.WaitVisible(chromedp.CSS("#pause-kind")),
				chromedp.SendKeys(chromedp.CSS("#pause-kind"), "a"),
				clickJS(`form[action$="pause-kind"] button`),
				chromedp.WaitVisible(chromedp.CSS(`[data-testid="flash"]`)))
			if got, err := b.client.QueueGet(context.Background(), "ops"); err != nil || got.Paused || !slices.Equal(got.PausedKinds, []string{"a"}) {
				t.Fatalf("store after pausing kind a: %+v, %v", got, err)
			}
			if flash, badge := br.text(t, `[data-testid="flash"]`), br.text(t, `#queue-region [data-kind="a"]`); !strings.HasPrefix(flash, "Kind a of queue ops paused") || badge != "a paused" {
				t.Errorf("after pausing kind a: banner %q, badge %q", flash, badge)
			}
			// HTTP workers claim the other kind only.
			if jobs := b.claim(t, map[string]any{"queue": "ops", "worker": "w", "max": 10}); len(jobs) != 1 || jobs[0].ID != ids[3] {
				t.Errorf("claim with kind a paused took %+v, want only job %d of kind b", jobs, ids[3])
			}
			br.run(t, "resume kind a", clickJS(`form[action$="resume-kind"] button`))
			waitfor.Cond(t, "the overview to say kind a resumed", func() bool {
				// The page is being replaced: a read may find no page yet.
				flash, err := chromedp.Run(br.ctx, chromedp.Evaluate[string](`(document.querySelector("[data-testid=flash]") || {}).textContent || ""`))
				return err == nil && strings.HasPrefix(flash, "Kind a of queue ops resumed")
			})
			if got, err := b.client.QueueGet(context.Background(), "ops"); err != nil || got.PausedKinds != nil {
				t.Fatalf("store after resuming kind a: %+v, %v", got, err)
			}
			if n := br.eval(t, `String(document.querySelectorAll("[data-kind]").length)`); n != "0" {
				t.Errorf("the overview still shows %s paused kinds after the resume", n)
			}
			b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/queues/ops", nil)
		})
	}
}
