package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/server"
)

// TestConsoleActionsRefuseCrossSite: the forms the console added (a
// queue's strict order and limits, periodic jobs created, edited and
// deleted, a subscription or a topic deleted) are dashboard posts like the
// others: a cross-site post riding on the session cookie is refused and
// changes nothing, and every page they lead to keeps the
// Content-Security-Policy that allows no inline script.
func TestConsoleActionsRefuseCrossSite(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		session := b.login(t)
		b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{}, "queue": "q"})
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/periodic", map[string]any{"name": "p", "schedule": "@every 1h", "kind": "k"})
		b.must(t, http.StatusCreated, server.ScopeAdmin, "POST", "/v1/topics", map[string]any{"name": "t"})
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", "/v1/topics/t/subscriptions", map[string]any{"name": "s"})
		for _, tc := range []struct {
			path string
			form url.Values
		}{
			{"/ui/queues/q/strict", url.Values{"max_running": {"1"}}},
			{"/ui/queues/q/limits", url.Values{"global_max_workers": {"2"}}},
			{"/ui/periodic", url.Values{"name": {"evil"}, "schedule": {"@every 1m"}, "kind": {"k"}}},
			{"/ui/periodic/p", url.Values{"schedule": {"@every 1m"}, "kind": {"k"}}},
			{"/ui/periodic/p/delete", nil},
			{"/ui/topics/t/subscriptions/s/delete", nil},
			{"/ui/topics/t/delete", nil},
		} {
			status, body, _ := b.post(t, tc.path, tc.form, map[string]string{"Cookie": session, "Origin": "https://evil.example"})
			if status != http.StatusForbidden || !strings.Contains(body, "cross-site request refused") {
				t.Errorf("cross-site %s = %d: %s", tc.path, status, body)
			}
		}
		if st, err := b.client.QueueGet(ctx, "q"); err != nil || st.Strict != 0 || st.Limit.MaxRunning != 0 {
			t.Errorf("queue q after refused posts: %+v, %v", st, err)
		}
		if p, err := b.client.PeriodicJobs().Get(ctx, "p"); err != nil || p.Schedule != "@every 1h" {
			t.Errorf("periodic p after refused posts: %+v, %v", p, err)
		}
		if _, err := b.client.PeriodicJobs().Get(ctx, "evil"); !errors.Is(err, drover.ErrPeriodicNotFound) {
			t.Errorf("a cross-site post created periodic job evil: %v", err)
		}
		if topics, err := b.client.Topics(ctx); err != nil || len(topics) != 1 || len(topics[0].Subscriptions) != 1 {
			t.Errorf("topics after refused posts: %+v, %v", topics, err)
		}
		for _, path := range []string{"/ui/queues/q", "/ui/running", "/ui/topics/t", "/ui/periodic"} {
			req, _ := http.NewRequest("GET", b.url+path, nil)
			req.Header.Set("Cookie", session)
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if csp := resp.Header.Get("Content-Security-Policy"); resp.StatusCode != http.StatusOK || !strings.Contains(csp, "script-src 'self'") {
				t.Errorf("%s = %d with CSP %q", path, resp.StatusCode, csp)
			}
		}
	})
}
