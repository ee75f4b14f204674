package server_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
)

// send makes one request exactly as given: no token unless the headers
// carry one, no redirects followed.
func (b *bundle) send(t *testing.T, method, path, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, b.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// login opens a dashboard session with the admin token and returns its
// cookie as a Cookie header value.
func (b *bundle) login(t *testing.T) string {
	t.Helper()
	status, body, h := b.post(t, "/login", url.Values{"token": {b.tokens[server.ScopeAdmin]}}, nil)
	if status != http.StatusSeeOther || h.Get("Set-Cookie") == "" {
		t.Fatalf("login = %d: %s", status, body)
	}
	return strings.Split(h.Get("Set-Cookie"), ";")[0]
}

// TestAPIRefusesTheDashboardCookie replays the three cross-site requests
// of the report against /v1 with a logged-in admin's cookie attached, as
// a browser attaches it to requests that a page on another port of the
// same host makes it send (SameSite does not look at ports): a form post
// that discarded a job, a no-cors fetch that cancelled one, and a Blob
// post that inserted one. Each must be refused and change nothing in the
// store.
func TestAPIRefusesTheDashboardCookie(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		cookie := b.login(t)
		evil := "http://127.0.0.1:1" // another port of the same host
		ids := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}}, map[string]any{"kind": "k", "args": map[string]any{"n": 2}})
		before := b.counts(t)

		// <form method=POST action=".../v1/jobs/9/discard">
		status, body := b.send(t, "POST", fmt.Sprintf("/v1/jobs/%d/discard", ids[0]), "x=1",
			map[string]string{"Cookie": cookie, "Origin": evil, "Content-Type": "application/x-www-form-urlencoded"})
		if status != http.StatusUnauthorized {
			t.Errorf("cross-site form discard = %d: %s", status, body)
		}
		// fetch(url, {method: "POST", mode: "no-cors", credentials: "include"})
		status, body = b.send(t, "POST", fmt.Sprintf("/v1/jobs/%d/cancel", ids[1]), "",
			map[string]string{"Cookie": cookie, "Origin": evil, "Content-Type": "text/plain;charset=UTF-8"})
		if status != http.StatusUnauthorized {
			t.Errorf("no-cors cancel = %d: %s", status, body)
		}
		// fetch(url, {method: "POST", mode: "no-cors", body: new Blob([json])}): no Content-Type.
		status, body = b.send(t, "POST", "/v1/jobs", `{"jobs":[{"kind":"evil","args":{"rm":"-rf"}}]}`,
			map[string]string{"Cookie": cookie, "Origin": evil})
		if status != http.StatusUnauthorized {
			t.Errorf("Blob enqueue = %d: %s", status, body)
		}
		// The cookie does not open the API from the dashboard's own origin
		// either: the API takes bearer tokens only.
		status, body = b.send(t, "GET", "/v1/jobs", "", map[string]string{"Cookie": cookie, "Origin": b.url})
		if status != http.StatusUnauthorized {
			t.Errorf("same-origin API call with the cookie = %d: %s", status, body)
		}

		for _, id := range ids {
			if st := b.stored(t, id).State; st != drovertype.JobStateAvailable {
				t.Errorf("job %d is %s after the cross-site requests, want available", id, st)
			}
		}
		if after := b.counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("job counts changed from %v to %v", before, after)
		}
	})
}

// TestAPIBodiesMustBeJSON: with a valid bearer token, a body that does not
// say it is JSON is refused with 415 before anything runs, whether it
// carries no type (a Blob), a form encoding or text/plain (what browsers
// send without a preflight).
func TestAPIBodiesMustBeJSON(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		id := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}})[0]
		before := b.counts(t)
		enqueue := `{"jobs":[{"kind":"k","args":{"n":1}}]}`
		for _, c := range []struct {
			scope       server.Scope
			path, body  string
			contentType string
		}{
			{server.ScopeEnqueue, "/v1/jobs", enqueue, ""},
			{server.ScopeEnqueue, "/v1/jobs", enqueue, "text/plain"},
			{server.ScopeEnqueue, "/v1/batches", enqueue, "application/x-www-form-urlencoded"},
			{server.ScopeWork, "/v1/claim", `{"queue":"default","worker":"w"}`, ""},
			{server.ScopeAdmin, fmt.Sprintf("/v1/jobs/%d/discard", id), "x=1", "application/x-www-form-urlencoded"},
			{server.ScopeAdmin, fmt.Sprintf("/v1/jobs/%d/cancel", id), "{}", "text/plain"},
		} {
			h := map[string]string{"Authorization": "Bearer " + b.tokens[c.scope]}
			if c.contentType != "" {
				h["Content-Type"] = c.contentType
			}
			status, body := b.send(t, "POST", c.path, c.body, h)
			if status != http.StatusUnsupportedMediaType || !strings.Contains(body, "application/json") {
				t.Errorf("POST %s with content type %q = %d: %s", c.path, c.contentType, status, body)
			}
		}
		if st := b.stored(t, id).State; st != drovertype.JobStateAvailable {
			t.Errorf("job is %s after refused requests, want available", st)
		}
		if after := b.counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("job counts changed from %v to %v", before, after)
		}
		// A bodiless action needs no type, and JSON with a charset is JSON.
		b.must(t, http.StatusOK, server.ScopeAdmin, "POST", fmt.Sprintf("/v1/jobs/%d/cancel", id), nil)
		status, body := b.send(t, "POST", "/v1/jobs", enqueue, map[string]string{
			"Authorization": "Bearer " + b.tokens[server.ScopeEnqueue], "Content-Type": "application/json; charset=utf-8"})
		if status != http.StatusCreated {
			t.Errorf("enqueue with a charset = %d: %s", status, body)
		}
	})
}
