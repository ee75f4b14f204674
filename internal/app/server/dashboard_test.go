package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// post sends a dashboard form with the given credentials and headers.
func (b *bundle) post(t *testing.T, path string, form url.Values, header map[string]string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest("POST", b.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header
}

// TestBulkActionCoversTheWholeFilter cancels every job of a filter that
// spans more than one page of the bulk walk, and nothing else.
func TestBulkActionCoversTheWholeFilter(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		params := make([]drover.InsertManyParams, 1005)
		for i := range params {
			params[i] = drover.InsertManyParams{Args: drover.RawArgs{KindName: "k", JSON: []byte(`{}`)}, Opts: &drover.InsertOpts{Queue: "bulk"}}
		}
		if _, err := b.client.InsertMany(ctx, params); err != nil {
			t.Fatal(err)
		}
		other := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}})[0]
		status, body, h := b.post(t, "/ui/bulk", url.Values{"action": {"cancel"}, "state": {"available"}, "queue": {"bulk"}},
			map[string]string{"Authorization": "Bearer " + b.tokens[server.ScopeAdmin]})
		if status != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "task=1") {
			t.Fatalf("bulk cancel = %d to %q: %s", status, h.Get("Location"), body)
		}
		// The jobs page follows the task until it is done, with the
		// number of jobs it changed.
		waitfor.Cond(t, "the bulk cancel to finish", func() bool {
			return strings.Contains(b.page(t, h.Get("Location")), "cancel done: changed 1005 of 1005 jobs that matched.")
		})
		counts, err := b.client.JobCountByState(ctx, "bulk")
		if err != nil {
			t.Fatal(err)
		}
		if counts[drovertype.JobStateCancelled] != 1005 || counts[drovertype.JobStateAvailable] != 0 {
			t.Fatalf("queue bulk after cancel-all = %v", counts)
		}
		if b.stored(t, other).State != drovertype.JobStateAvailable {
			t.Fatal("bulk cancel touched a job outside the filter")
		}
		status, body, _ = b.post(t, "/ui/bulk", url.Values{"action": {"explode"}},
			map[string]string{"Authorization": "Bearer " + b.tokens[server.ScopeAdmin]})
		if status != http.StatusBadRequest || !strings.Contains(body, `action &#34;explode&#34;: use retry, cancel, discard or delete`) {
			t.Fatalf("unknown bulk action = %d: %s", status, body)
		}
		// Discard everything waiting in the default queue: the one job.
		status, _, _ = b.post(t, "/ui/bulk", url.Values{"action": {"discard"}, "queue": {"default"}},
			map[string]string{"Authorization": "Bearer " + b.tokens[server.ScopeAdmin]})
		if status != http.StatusSeeOther {
			t.Fatalf("bulk discard = %d", status)
		}
		waitfor.Cond(t, "the bulk discard to discard the job", func() bool {
			return b.stored(t, other).State == drovertype.JobStateDiscarded
		})
	})
}

// TestDashboardSession covers the browser session: the login form refuses
// bad and non-admin tokens, the cookie it sets opens the pages, and a form
// post riding on the cookie from another origin is refused.
func TestDashboardSession(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		status, body, _ := b.post(t, "/login", url.Values{"token": {"drv_wrong"}}, nil)
		if status != http.StatusUnauthorized || !strings.Contains(body, "unknown or revoked token") {
			t.Fatalf("login with a wrong token = %d: %s", status, body)
		}
		status, body, _ = b.post(t, "/login", url.Values{"token": {b.tokens[server.ScopeWork]}}, nil)
		if status != http.StatusUnauthorized || !strings.Contains(body, "lacks the admin scope") {
			t.Fatalf("login with a work token = %d: %s", status, body)
		}
		status, _, h := b.post(t, "/login", url.Values{"token": {b.tokens[server.ScopeAdmin]}}, nil)
		cookie := h.Get("Set-Cookie")
		if status != http.StatusSeeOther || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") {
			t.Fatalf("login = %d, cookie %q", status, cookie)
		}
		session := strings.Split(cookie, ";")[0]
		id := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}})[0]

		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/ui/jobs/%d", b.url, id), nil)
		req.Header.Set("Cookie", session)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), fmt.Sprintf("Job %d", id)) {
			t.Fatalf("job page with the session = %d: %s", resp.StatusCode, page)
		}

		status, body, _ = b.post(t, fmt.Sprintf("/ui/jobs/%d/cancel", id), nil,
			map[string]string{"Cookie": session, "Origin": "https://evil.example"})
		if status != http.StatusForbidden || !strings.Contains(body, "cross-site request refused") {
			t.Fatalf("cross-site cancel = %d: %s", status, body)
		}
		if b.stored(t, id).State != drovertype.JobStateAvailable {
			t.Fatal("a cross-site post cancelled the job")
		}
		status, _, _ = b.post(t, fmt.Sprintf("/ui/jobs/%d/cancel", id), nil,
			map[string]string{"Cookie": session, "Origin": b.url})
		if status != http.StatusSeeOther || b.stored(t, id).State != drovertype.JobStateCancelled {
			t.Fatalf("same-origin cancel = %d, job %s", status, b.stored(t, id).State)
		}
	})
}

// TestHistoryCountsEachFinishedJobOnce: the samples' windows follow each
// other without overlap, so over the history every finished job is
// counted exactly once, whichever process finished it.
func TestHistoryCountsEachFinishedJobOnce(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ids := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}}, map[string]any{"kind": "k", "args": map[string]any{"n": 2}},
			map[string]any{"kind": "k", "args": map[string]any{"n": 3}, "max_attempts": 1})
		jobs := b.claim(t, map[string]any{"queue": "default", "worker": "w", "max": 3})
		if len(jobs) != 3 {
			t.Fatalf("claimed %d", len(jobs))
		}
		b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/finish", map[string]any{"results": []any{
			map[string]any{"id": ids[0], "attempt": 1, "lease_token": b.lease(ids[0]), "outcome": "completed"},
			map[string]any{"id": ids[1], "attempt": 1, "lease_token": b.lease(ids[1]), "outcome": "completed"},
			map[string]any{"id": ids[2], "attempt": 1, "lease_token": b.lease(ids[2]), "outcome": "failed", "max_attempts": 1},
		}})
		finishedAt := b.stored(t, ids[0]).FinalizedAt
		var completed, discarded int64
		waitfor.Cond(t, "the history to cover the finishes", func() bool {
			req, _ := http.NewRequest("GET", b.url+"/ui/history.json", nil)
			req.Header.Set("Authorization", "Bearer "+b.tokens[server.ScopeAdmin])
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var points []server.Point
			if err := json.NewDecoder(resp.Body).Decode(&points); err != nil {
				t.Fatal(err)
			}
			completed, discarded = 0, 0
			for _, p := range points {
				for _, f := range p.Finished {
					completed += f.Completed
					discarded += f.Discarded
				}
			}
			return len(points) > 0 && points[len(points)-1].Until.After(finishedAt.Add(time.Second))
		})
		if completed != 2 || discarded != 1 {
			t.Fatalf("history counts %d completed and %d discarded, want 2 and 1", completed, discarded)
		}
	})
}

// TestDashboardSelectionNeedsRows: the selection's buttons with no row
// ticked change nothing and say why.
func TestDashboardSelectionNeedsRows(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		id := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{}, "queue": "q"})[0]
		admin := map[string]string{"Authorization": "Bearer " + b.tokens[server.ScopeAdmin]}
		status, body, _ := b.post(t, "/ui/bulk", url.Values{"action": {"delete"}, "selection": {"1"}, "queue": {"q"}}, admin)
		if status != http.StatusBadRequest || !strings.Contains(body, "no job selected") {
			t.Fatalf("delete with no row selected = %d: %s", status, body)
		}
		if st := b.stored(t, id).State; st != drovertype.JobStateAvailable {
			t.Fatalf("job %d is %s after a refused delete", id, st)
		}
	})
}
