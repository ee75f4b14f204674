package server_test

import (
	"bytes"
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestShutdownEndsLongPolls shuts the HTTP server down while a claim long
// polls: the poll must answer 200 with an empty job list long before its
// wait ends rather than hold the shutdown, the shutdown must then finish,
// and no job may be claimed afterwards.
func TestShutdownEndsLongPolls(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hs := b.srv.HTTPServer(log.New(io.Discard, "", 0))
		served := make(chan error, 1)
		go func() { served <- hs.Serve(b.srv.Listener(ln)) }()
		url := "http://" + ln.Addr().String()

		type answer struct {
			status int
			body   string
			err    error
			at     time.Time
		}
		answered := make(chan answer, 1)
		go func() {
			req, _ := http.NewRequest("POST", url+"/v1/claim",
				strings.NewReader(`{"queue":"q","worker":"w","wait_ms":5000}`))
			req.Header.Set("Authorization", "Bearer "+b.tokens[server.ScopeWork])
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answered <- answer{err: err}
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answered <- answer{status: resp.StatusCode, body: string(bytes.TrimSpace(body)), at: time.Now()}
		}()
		// The poll is in flight once its first claim is counted.
		claims := func() uint64 {
			f := b.scrape(t)["drover_claim_duration_seconds"]
			if f == nil || len(f.Metric) == 0 {
				return 0
			}
			return f.Metric[0].GetHistogram().GetSampleCount()
		}
		if !waitfor.Within(5*time.Second, func() bool { return claims() > 0 }) {
			t.Fatal("the long poll never reached the server")
		}

		stop := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil {
			t.Fatalf("shutdown with a long poll open: %v", err)
		}
		if err := <-served; err != http.ErrServerClosed {
			t.Fatalf("Serve returned %v", err)
		}
		a := <-answered
		if a.err != nil || a.status != http.StatusOK || a.body != `{"jobs":[]}` {
			t.Fatalf("long poll during shutdown = %d %q (%v), want 200 {\"jobs\":[]}", a.status, a.body, a.err)
		}
		if took := a.at.Sub(stop); took > 3*time.Second {
			t.Fatalf("the long poll answered %v after the shutdown began, as if it had waited out its 5s", took)
		}

		// A claim that still reaches the draining server claims nothing.
		b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{"n": 1}, "queue": "q"})
		req := httptest.NewRequest("POST", "/v1/claim", strings.NewReader(`{"queue":"q","worker":"w"}`))
		req.Header.Set("Authorization", "Bearer "+b.tokens[server.ScopeWork])
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		b.srv.Handler().ServeHTTP(rec, req)
		if got := strings.TrimSpace(rec.Body.String()); rec.Code != http.StatusOK || got != `{"jobs":[]}` {
			t.Fatalf("claim on a draining server = %d %s", rec.Code, got)
		}
		if counts := b.counts(t); counts[drovertype.JobStateRunning] != 0 || counts[drovertype.JobStateAvailable] != 1 {
			t.Fatalf("jobs after the shutdown: %v, want one available and none running", counts)
		}
	})
}
