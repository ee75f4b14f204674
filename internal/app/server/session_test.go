package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// openPage requests a dashboard page with a cookie and returns the status
// and where a redirect leads.
func (b *bundle) openPage(t *testing.T, path, cookie string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", b.url+path, nil)
	req.Header.Set("Cookie", cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

// TestSessionCookieHoldsNoToken: the cookie is a random session ID, not
// the token; logging out ends the session on the server, so that a copy
// of the cookie kept from before opens nothing.
func TestSessionCookieHoldsNoToken(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		cookie := b.login(t)
		if strings.Contains(cookie, b.tokens[server.ScopeAdmin]) || !strings.HasPrefix(cookie, "drover_session=") {
			t.Fatalf("cookie %q carries the token or is not a session", cookie)
		}
		if status, _ := b.openPage(t, "/ui/jobs", cookie); status != http.StatusOK {
			t.Fatalf("jobs page with the session = %d", status)
		}
		// A second login is a session of its own.
		other := b.login(t)
		if other == cookie {
			t.Fatal("two logins share a session ID")
		}
		status, _, _ := b.post(t, "/logout", nil, map[string]string{"Cookie": cookie, "Origin": "http://evil.example"})
		if status != http.StatusForbidden {
			t.Fatalf("cross-site logout = %d, want 403", status)
		}
		status, _, _ = b.post(t, "/logout", nil, map[string]string{"Cookie": cookie, "Origin": b.url})
		if status != http.StatusSeeOther {
			t.Fatalf("logout = %d", status)
		}
		if status, loc := b.openPage(t, "/ui/jobs", cookie); status != http.StatusSeeOther || loc != "/login" {
			t.Fatalf("jobs page with the logged-out cookie = %d to %q, want the login form", status, loc)
		}
		if status, _ := b.openPage(t, "/ui/jobs", other); status != http.StatusOK {
			t.Fatalf("the other session ended with the first: %d", status)
		}
	})
}

// TestTokenReloadEndsSessions: replacing the tokens (a SIGHUP reload)
// revokes a removed token at once, for bearer calls and for the
// dashboard sessions opened with it, and leaves kept tokens working.
func TestTokenReloadEndsSessions(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		cookie := b.login(t)
		secret, fresh, err := server.NewToken("fresh", []server.Scope{server.ScopeAdmin})
		if err != nil {
			t.Fatal(err)
		}
		// Keep the same tokens plus one: the session survives.
		kept := tokensOf(t, b, server.ScopeEnqueue, server.ScopeWork, server.ScopeAdmin)
		b.srv.SetTokens(append(kept, fresh))
		if status, _ := b.openPage(t, "/ui/jobs", cookie); status != http.StatusOK {
			t.Fatalf("session after a reload that kept its token = %d", status)
		}
		status, _ := b.send(t, "GET", "/v1/stats", "", map[string]string{"Authorization": "Bearer " + secret})
		if status != http.StatusOK {
			t.Fatalf("a token added by the reload = %d", status)
		}
		// Drop the admin token.
		b.srv.SetTokens(append(tokensOf(t, b, server.ScopeEnqueue, server.ScopeWork), fresh))
		status, body := b.send(t, "GET", "/v1/stats", "", map[string]string{"Authorization": "Bearer " + b.tokens[server.ScopeAdmin]})
		if status != http.StatusUnauthorized || !strings.Contains(body, "unknown or revoked token") {
			t.Fatalf("removed token = %d: %s", status, body)
		}
		if status, loc := b.openPage(t, "/ui/jobs", cookie); status != http.StatusSeeOther || loc != "/login" {
			t.Fatalf("session of a removed token = %d to %q, want the login form", status, loc)
		}
		b.must(t, http.StatusCreated, server.ScopeEnqueue, "POST", "/v1/jobs", map[string]any{"jobs": []any{map[string]any{"kind": "k", "args": map[string]any{"n": 1}}}})
	})
}

// tokensOf rebuilds the bundle's tokens of the given scopes from their
// secrets, as a tokens file lists them.
func tokensOf(t *testing.T, b *bundle, scopes ...server.Scope) []server.Token {
	t.Helper()
	var lines []string
	for _, sc := range scopes {
		h := sha256Hex(b.tokens[sc])
		lines = append(lines, "t-"+string(sc)+" "+string(sc)+" sha256:"+h)
	}
	toks, err := server.ParseTokens(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

// TestSessionExpires: a session ends after its time to live.
func TestSessionExpires(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		cookie := b.login(t)
		if status, loc := b.openPage(t, "/ui/jobs", cookie); status != http.StatusSeeOther || loc != "/login" {
			t.Fatalf("expired session = %d to %q, want the login form", status, loc)
		}
	}, func(cfg *server.Config) { cfg.SessionTTL = time.Nanosecond })
}

// TestSecureCookie: the session cookie is Secure when the operator says a
// TLS proxy is in front (--secure-cookies), and not on plain HTTP
// otherwise, where a browser would refuse to send it back.
func TestSecureCookie(t *testing.T) {
	for _, secure := range []bool{false, true} {
		b := setup(t, stores[1].open, func(cfg *server.Config) { cfg.SecureCookies = secure })
		_, _, h := b.post(t, "/login", url.Values{"token": {b.tokens[server.ScopeAdmin]}}, nil)
		if got := strings.Contains(h.Get("Set-Cookie"), "Secure"); got != secure {
			t.Errorf("SecureCookies %v: cookie %q", secure, h.Get("Set-Cookie"))
		}
	}
}

// TestEveryResponseIsNosniff: every answer, JSON, HTML, asset or error,
// tells the browser not to guess its type, and HTML keeps its CSP.
func TestEveryResponseIsNosniff(t *testing.T) {
	b := setup(t, stores[1].open)
	admin := map[string]string{"Authorization": "Bearer " + b.tokens[server.ScopeAdmin]}
	for _, c := range []struct {
		method, path string
		header       map[string]string
		html         bool
	}{
		{"GET", "/healthz", nil, false},
		{"GET", "/v1/jobs", nil, false}, // 401
		{"GET", "/v1/jobs", admin, false},
		{"GET", "/v1/nothing", admin, false}, // 404
		{"POST", "/v1/jobs", admin, false},   // 415
		{"GET", "/metrics", admin, false},
		{"GET", "/openapi.json", admin, false},
		{"GET", "/login", nil, true},
		{"GET", "/ui/static/style.css", nil, false},
		{"GET", "/ui/jobs", admin, true},
	} {
		req, _ := http.NewRequest(c.method, b.url+c.path, nil)
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (%d): X-Content-Type-Options %q", c.method, c.path, resp.StatusCode, got)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); c.html && !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s %s: CSP %q", c.method, c.path, csp)
		}
	}
}

// TestReadinessProbesWrites: an SQLite store that cannot take writes (here
// its disk is under the free-space minimum, as on a full disk) answers
// reads, and /readyz must say not ready all the same.
func TestReadinessProbesWrites(t *testing.T) {
	open := func(minFree int64) func(t *testing.T) (droverdriver.Driver, testClient) {
		return func(t *testing.T) (droverdriver.Driver, testClient) {
			d, err := droversqlite.Open(context.Background(), filepath.Join(t.TempDir(), "drover.db"),
				droversqlite.WithMinFreeBytes(minFree))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			return d, newClient(t, d, func(cfg *drover.Config) (testClient, error) { return drover.NewClient(d, cfg) })
		}
	}
	var ready struct {
		Ready  bool              `json:"ready"`
		Checks map[string]string `json:"checks"`
	}
	full := setup(t, open(1<<62))
	waitfor.Cond(t, "the loops to start", func() bool {
		r := full.call(t, server.ScopeWork, "GET", "/readyz", nil, true)
		r.decode(t, &ready)
		return ready.Checks["loops"] == "ok"
	})
	r := full.call(t, server.ScopeWork, "GET", "/readyz", nil, true)
	r.decode(t, &ready)
	if r.status != http.StatusServiceUnavailable || ready.Ready || !strings.Contains(ready.Checks["writes"], "bytes free") {
		t.Fatalf("readyz on a full disk = %d %s", r.status, r.body)
	}
	if ready.Checks["database"] != "ok" {
		t.Fatalf("the store should still answer reads: %s", r.body)
	}

	fine := setup(t, open(1))
	waitfor.Cond(t, "readiness", func() bool {
		r := fine.call(t, server.ScopeWork, "GET", "/readyz", nil, true)
		return r.status == http.StatusOK
	})
	r = fine.call(t, server.ScopeWork, "GET", "/readyz", nil, true)
	var ok struct {
		Checks map[string]string `json:"checks"`
	}
	_ = json.Unmarshal(r.body, &ok)
	if ok.Checks["writes"] != "ok" {
		t.Fatalf("readyz with room = %s", r.body)
	}
}

func sha256Hex(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}
