package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/jobjson"
	"github.com/droverhq/drover/internal/app/server"
)

func TestServeToken(t *testing.T) {
	r := runCLI(t, nil, "serve", "token", "--name", "billing", "--scope", "enqueue,work")
	if r.code != exitOK {
		t.Fatalf("serve token:\n%s", r)
	}
	toks, err := server.ParseTokens(strings.NewReader(r.stdout))
	if err != nil || len(toks) != 1 || toks[0].Name != "billing" || !toks[0].Allows(server.ScopeWork) || toks[0].Allows(server.ScopeAdmin) {
		t.Fatalf("stdout %q is not one tokens-file line for billing (enqueue, work): %+v, %v", r.stdout, toks, err)
	}
	secret := regexp.MustCompile(`drv_\S+`).FindString(r.stderr)
	if secret == "" || strings.Contains(r.stdout, secret) {
		t.Fatalf("the secret must be on stderr only: stdout %q, stderr %q", r.stdout, r.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "token", "--name", "x", "--scope", "root"}, `unknown scope "root"`},
		{[]string{"serve", "token", "--scope", "work"}, `token name ""`},
		{[]string{"serve", "token", "--name", "x"}, "at least one scope"},
	} {
		if r := runCLI(t, nil, c.args...); r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("drover %s:\n%s\nwant exit 2 naming %q", strings.Join(c.args, " "), r, c.want)
		}
	}
}

func TestServeRejectsBadFlags(t *testing.T) {
	f := setupSQLite(t)
	bad := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(bad, []byte("ops admin drv_plaintext\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--tokens", filepath.Join(t.TempDir(), "missing")}, "--tokens"},
		{[]string{"serve", "--tokens", bad}, "line 1: hash must be sha256:"},
		{[]string{"serve", "--listen", "127.0.0.1:99999"}, "--listen 127.0.0.1:99999"},
		{[]string{"serve", "--listen", "127.0.0.1:0", "--max-batch", "0", "--max-wait", "1s", "--max-body", "10"}, "max body 10 bytes"},
	} {
		if r := f.run(t, c.args...); r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("drover %s:\n%s\nwant exit 2 naming %q", strings.Join(c.args, " "), r, c.want)
		}
	}
}

// syncBuffer is a buffer that the server's goroutines and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe runs `drover serve` on each store, enqueues through it and
// stops it with the command's context, as an interrupt would.
func TestServe(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f := b.setup(t).migrated(t)
			tokens := filepath.Join(t.TempDir(), "tokens")
			tr := runCLI(t, nil, "serve", "token", "--name", "ci", "--scope", "enqueue")
			if err := os.WriteFile(tokens, []byte(tr.stdout), 0o600); err != nil {
				t.Fatal(err)
			}
			secret := regexp.MustCompile(`drv_\S+`).FindString(tr.stderr)

			ctx, cancel := context.WithCancel(context.Background())
			var stderr syncBuffer
			done := make(chan int, 1)
			go func() {
				done <- execute(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--tokens", tokens,
					"--database-url", f.url, "--schema", f.schema}, io.Discard, &stderr, func(k string) string { return f.env[k] })
			}()
			addr := regexp.MustCompile(`serving on (http://\S+)`)
			var base string
			deadline := time.Now().Add(time.Minute)
			for base == "" {
				if m := addr.FindStringSubmatch(stderr.String()); m != nil {
					base = m[1]
				}
				select {
				case code := <-done:
					t.Fatalf("serve exited with %d:\n%s", code, stderr.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("serve did not start:\n%s", stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}

			req, _ := http.NewRequest("POST", base+"/v1/jobs", strings.NewReader(`{"jobs":[{"kind":"email","args":{"to":"a"}}]}`))
			req.Header.Set("Authorization", "Bearer "+secret)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated || !strings.Contains(string(body), `"ids":[1]`) {
				t.Fatalf("enqueue through serve = %d %s", resp.StatusCode, body)
			}
			if job := f.getJob(t, 1); job.Kind != "email" || string(job.EncodedArgs) != `{"to": "a"}` && string(job.EncodedArgs) != `{"to":"a"}` {
				t.Fatalf("stored job = %+v", job)
			}

			cancel()
			select {
			case code := <-done:
				if code != exitOK {
					t.Fatalf("serve exited with %d after the interrupt:\n%s", code, stderr.String())
				}
			case <-time.After(time.Minute):
				t.Fatal("serve did not stop")
			}
			if strings.Contains(stderr.String(), secret) {
				t.Fatal("the server logged a token")
			}
		})
	}
}

func TestJobsDiscard(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			f := b.setup(t).migrated(t)
			id := f.enqueue(t, "email", `{}`)[0]
			sid := strconv.FormatInt(id, 10)
			var j jobjson.Job
			decodeJSON(t, f.mustRun(t, "jobs", "discard", sid, "--json"), &j)
			if j.ID != id || j.State != drovertype.JobStateDiscarded || f.getJob(t, id).State != drovertype.JobStateDiscarded {
				t.Fatalf("after discard: %+v, stored %s", j, f.getJob(t, id).State)
			}
			if out := f.mustRun(t, "jobs", "retry", sid); !strings.Contains(out, "available") {
				t.Fatalf("retry after discard:\n%s", out)
			}
			if r := f.run(t, "jobs", "discard", "0"); r.code != exitUsage || !strings.Contains(r.stderr, `job ID "0"`) {
				t.Fatalf("discard 0:\n%s", r)
			}
		})
	}
}
