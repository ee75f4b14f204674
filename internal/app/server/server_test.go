package server_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	legacyrouter "github.com/getkin/kin-openapi/routers/legacy"
	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// testClient is the server's view of a client plus what the tests do
// with it besides serving: start and stop it.
type testClient interface {
	server.Client
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// The server takes a client of either store.
var (
	_ server.Client = (*drover.Client[pgx.Tx])(nil)
	_ server.Client = (*drover.Client[*sql.Tx])(nil)
)

// stores opens a migrated store of its own per test.
var stores = []struct {
	name string
	open func(t *testing.T) (droverdriver.Driver, testClient)
}{
	{"postgres", func(t *testing.T) (droverdriver.Driver, testClient) {
		d, err := droverpg.New(testdb.NewPool(t), droverpg.WithSchema(testdb.NewSchema(t)))
		if err != nil {
			t.Fatal(err)
		}
		return d, newClient(t, d, func(cfg *drover.Config) (testClient, error) { return drover.NewClient(d, cfg) })
	}},
	{"sqlite", func(t *testing.T) (droverdriver.Driver, testClient) {
		d, err := droversqlite.Open(context.Background(), filepath.Join(t.TempDir(), "drover.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d, newClient(t, d, func(cfg *drover.Config) (testClient, error) { return drover.NewClient(d, cfg) })
	}},
}

func newClient(t *testing.T, d droverdriver.Driver, mk func(*drover.Config) (testClient, error)) testClient {
	t.Helper()
	if _, err := drover.Migrate(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	c, err := mk(&drover.Config{Logger: quietLogger(), LeaseDuration: time.Second, LeaderTTL: time.Second,
		RescueInterval: 100 * time.Millisecond, RetryPolicy: func(int) time.Duration { return time.Hour }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// forEachStore runs fn as a parallel subtest per store.
func forEachStore(t *testing.T, fn func(t *testing.T, b *bundle), mutate ...func(*server.Config)) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, s.open, mutate...))
		})
	}
}

// bundle is a running server on a store of its own, with one token per
// scope, and the OpenAPI document every exchange is checked against.
type bundle struct {
	url    string
	client testClient
	tokens map[server.Scope]string
	doc    *openapi3.T
	router routers.Router
	// leases holds the lease token of each job's latest claim (claim),
	// which finish and heartbeat requests echo.
	leases map[int64]string
	srv    *server.Server
	// stop stops the server and its loops, as the test's end does.
	stop func()
	// driver is the store, for tests that run the leader's loops on it.
	driver droverdriver.Driver
	// cfg is the server's configuration, for restart.
	cfg server.Config
}

func setup(t *testing.T, open func(t *testing.T) (droverdriver.Driver, testClient), mutate ...func(*server.Config)) *bundle {
	t.Helper()
	d, client := open(t)
	b := &bundle{client: client, tokens: map[server.Scope]string{}, leases: map[int64]string{}, driver: d}
	var toks []server.Token
	for _, sc := range []server.Scope{server.ScopeEnqueue, server.ScopeWork, server.ScopeAdmin} {
		secret, tok, err := server.NewToken("t-"+string(sc), []server.Scope{sc})
		if err != nil {
			t.Fatal(err)
		}
		b.tokens[sc] = secret
		toks = append(toks, tok)
	}
	cfg := server.Config{Client: client, Tokens: toks, Logger: quietLogger(),
		MaxBodyBytes: 64 << 10, MaxBatch: 100, MaxWait: 5 * time.Second, SampleInterval: 20 * time.Millisecond}
	for _, m := range mutate {
		m(&cfg)
	}
	b.cfg = cfg
	b.restart(t)
	b.doc, b.router = loadDoc(t)
	return b
}

// restart starts a new server on the bundle's store and client, with the
// same tokens, as a deploy would: what the old one kept in memory (its
// samples, its dashboard sessions) is gone. The old one keeps running
// until the test ends.
func (b *bundle) restart(t *testing.T) {
	t.Helper()
	srv, err := server.New(b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); srv.Run(ctx) }()
	hs := httptest.NewServer(srv.Handler())
	b.stop = sync.OnceFunc(func() { hs.Close(); cancel(); <-done })
	t.Cleanup(b.stop)
	b.url, b.srv = hs.URL, srv
}

func loadDoc(t *testing.T) (*openapi3.T, routers.Router) {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(server.OpenAPI)
	if err != nil {
		t.Fatalf("openapi.json does not load: %v", err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	// The document names no server; route on paths alone.
	doc.Servers = openapi3.Servers{{URL: "http://drover"}}
	router, err := legacyrouter.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc, router
}

// response is one answer, decoded.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// errorMessage returns the message of a JSON error response, failing the
// test if the body is not one.
func (r response) errorMessage(t *testing.T) string {
	t.Helper()
	var e struct {
		Error  string `json:"error"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == "" || e.Status != r.status {
		t.Fatalf("error response %d is not a JSON error naming the problem: %s", r.status, r.body)
	}
	return e.Error
}

// call sends a request with the token of scope (none when empty) and
// checks the exchange against the OpenAPI document: the request when
// strict (bad-input tests send invalid requests on purpose), the response
// always, including that its status is one the document lists.
func (b *bundle) call(t *testing.T, scope server.Scope, method, path string, body any, strict bool) response {
	t.Helper()
	var raw []byte
	switch v := body.(type) {
	case nil:
	case string:
		raw = []byte(v)
	default:
		var err error
		if raw, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, b.url+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if scope != "" {
		req.Header.Set("Authorization", "Bearer "+b.tokens[scope])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := response{status: resp.StatusCode, header: resp.Header, body: got}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" && !(path == "/metrics" && r.status == http.StatusOK) &&
		!(r.status == http.StatusNoContent && len(got) == 0) {
		t.Fatalf("%s %s: content type %q, want application/json", method, path, ct)
	}

	// Check the exchange against the document.
	vreq, _ := http.NewRequest(method, "http://drover"+path, bytes.NewReader(raw))
	vreq.Header = req.Header.Clone()
	route, params, err := b.router.FindRoute(vreq)
	if err != nil {
		if r.status == http.StatusNotFound || r.status == http.StatusMethodNotAllowed || r.status == http.StatusUnauthorized {
			return r // not a documented operation, and the server says so
		}
		t.Fatalf("%s %s is not in openapi.json: %v", method, path, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}}
	if strict {
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			t.Fatalf("%s %s: the test's request does not match openapi.json: %v", method, path, err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: r.status, Header: r.header,
		Body: io.NopCloser(bytes.NewReader(r.body)), Options: in.Options}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		t.Fatalf("%s %s: response %d does not match openapi.json: %v\nbody: %s", method, path, r.status, err, r.body)
	}
	return r
}

// must calls and fails unless the status is want.
func (b *bundle) must(t *testing.T, want int, scope server.Scope, method, path string, body any) response {
	t.Helper()
	r := b.call(t, scope, method, path, body, true)
	if r.status != want {
		t.Fatalf("%s %s = %d, want %d: %s", method, path, r.status, want, r.body)
	}
	return r
}

type job struct {
	ID             int64      `json:"id"`
	State          string     `json:"state"`
	Queue          string     `json:"queue"`
	Kind           string     `json:"kind"`
	Args           any        `json:"args"`
	Attempt        int        `json:"attempt"`
	MaxAttempts    int        `json:"max_attempts"`
	LeaseOwner     string     `json:"lease_owner"`
	LeaseExpiresAt *time.Time `json:"lease_expires_at"`
	BatchID        int64      `json:"batch_id"`
	LeaseToken     string     `json:"lease_token"`
	Errors         []struct {
		Error string `json:"error"`
		Trace string `json:"trace"`
	} `json:"errors"`
}

func (b *bundle) enqueue(t *testing.T, jobs ...map[string]any) []int64 {
	t.Helper()
	var out struct{ IDs []int64 }
	b.must(t, http.StatusCreated, server.ScopeEnqueue, "POST", "/v1/jobs", map[string]any{"jobs": jobs}).decode(t, &out)
	if len(out.IDs) != len(jobs) {
		t.Fatalf("enqueue returned %d ids for %d jobs", len(out.IDs), len(jobs))
	}
	return out.IDs
}

func (b *bundle) claim(t *testing.T, body map[string]any) []job {
	t.Helper()
	var out struct{ Jobs []job }
	b.must(t, http.StatusOK, server.ScopeWork, "POST", "/v1/claim", body).decode(t, &out)
	for _, j := range out.Jobs {
		if len(j.LeaseToken) != 32 {
			t.Fatalf("claimed job %d has lease token %q, want 32 hex digits", j.ID, j.LeaseToken)
		}
		b.leases[j.ID] = j.LeaseToken
	}
	return out.Jobs
}

// lease returns the lease token of job id's latest claim or, for a job
// never claimed through the bundle, a well-formed token no claim issued,
// as a caller that never claimed the job would send.
func (b *bundle) lease(id int64) string {
	if tok, ok := b.leases[id]; ok {
		return tok
	}
	return strings.Repeat("0f", 16)
}

// stored returns a job as the store has it.
func (b *bundle) stored(t *testing.T, id int64) *drovertype.JobRow {
	t.Helper()
	row, err := b.client.JobGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

// counts returns the store's job counts, to show that a rejected request
// stored or changed nothing.
func (b *bundle) counts(t *testing.T) map[drovertype.JobState]int64 {
	t.Helper()
	c, err := b.client.JobCountByState(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func jsonEqual(t *testing.T, got any, want string) bool {
	t.Helper()
	g, _ := json.Marshal(got)
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	wb, _ := json.Marshal(w)
	return string(g) == string(wb)
}
