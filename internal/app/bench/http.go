package bench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// httpStreams is how many claim loops the HTTP fleet runs at once, so that
// one loop's claim or finish round trip does not leave the workers idle.
const httpStreams = 4

// httpFleet works jobs the way a worker in another language would: through
// `drover serve`'s HTTP API, served from this process on a loopback port.
// Comparing its rate with the in-process client's gives the cost of the
// HTTP hop (JSON both ways, one claim and one finish round trip per batch,
// no completer batching across requests).
type httpFleet struct {
	store *storeurl.Store
	cfg   workerConfig

	api   *apiServer
	http  *http.Client
	quit  chan struct{}
	loops sync.WaitGroup // the claim loops

	claims, claimedJobs, claimNanos atomic.Int64
	ran, runNanos                   atomic.Int64
	flushes, flushed, flushNanos    atomic.Int64
	written                         atomic.Int64

	errMu sync.Mutex
	err   error
}

// apiServer is drover serve's API on a loopback port of the bench process,
// with one token of the work scope: what a worker in another language
// talks to.
type apiServer struct {
	hs          *http.Server
	url, secret string
	cancel      context.CancelFunc
	bg          sync.WaitGroup // the HTTP server and the API server's loops
}

// startAPI serves the API on store. wrap, when set, wraps its handler, so
// that a fleet can observe the requests its workers make.
func startAPI(store *storeurl.Store, lease time.Duration, wrap func(http.Handler) http.Handler) (*apiServer, error) {
	client, err := storeurl.NewClient[server.Client](store, &drover.Config{Logger: discardLogger(), LeaseDuration: lease})
	if err != nil {
		return nil, err
	}
	secret, tok, err := server.NewToken("bench", []server.Scope{server.ScopeWork})
	if err != nil {
		return nil, err
	}
	srv, err := server.New(server.Config{Client: client, Tokens: []server.Token{tok}, Logger: discardLogger()})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := srv.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	a := &apiServer{secret: secret, url: "http://" + ln.Addr().String()}
	a.hs = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	loopCtx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	a.bg.Add(2)
	go func() { defer a.bg.Done(); _ = a.hs.Serve(ln) }()
	go func() { defer a.bg.Done(); srv.Run(loopCtx) }()
	return a, nil
}

// stop shuts the HTTP server down, then the API server's loops.
func (a *apiServer) stop(ctx context.Context) error {
	err := a.hs.Shutdown(ctx)
	a.cancel()
	a.bg.Wait()
	return err
}

func (f *httpFleet) start(ctx context.Context) error {
	api, err := startAPI(f.store, f.cfg.Lease, nil)
	if err != nil {
		return err
	}
	f.api = api
	f.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * httpStreams}}
	f.quit = make(chan struct{})
	per := min(max(f.cfg.Concurrency/httpStreams, 1), drover.MaxClaim)
	for i := range httpStreams {
		f.loops.Add(1)
		go func() {
			defer f.loops.Done()
			if err := f.loop(fmt.Sprintf("bench-http-%d", i), per); err != nil {
				f.fail(err)
			}
		}()
	}
	return nil
}

func (f *httpFleet) fail(err error) {
	f.errMu.Lock()
	defer f.errMu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

// loop claims a batch, runs it, and reports it while it claims the next
// one, as the SDKs' workers do (a claimer and a finisher of their own):
// one batch's finish overlaps the next batch's claim, never more. A batch
// claimed is always finished before the loop returns, so that stopping
// loses nothing and leaves no lease to expire.
func (f *httpFleet) loop(worker string, per int) (err error) {
	var finishing chan error // the previous batch's finish, when under way
	defer func() {
		if finishing != nil {
			err = errors.Join(err, <-finishing)
		}
	}()
	for {
		select {
		case <-f.quit:
			return nil
		default:
		}
		start := time.Now()
		var claimed compactClaim
		if err := f.post("/v1/claim", map[string]any{"queue": f.cfg.Queue, "worker": worker, "max": per,
			"lease_ms": f.cfg.Lease.Milliseconds(), "wait_ms": 200, "compact": true}, &claimed); err != nil {
			return err
		}
		if len(claimed.Jobs) == 0 {
			continue
		}
		f.claims.Add(1)
		f.claimedJobs.Add(int64(len(claimed.Jobs)))
		f.claimNanos.Add(int64(time.Since(start)))

		results := make([]finishResult, len(claimed.Jobs))
		var wg sync.WaitGroup
		for i, j := range claimed.Jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = f.run(j, &claimed.Shared)
			}()
		}
		wg.Wait()

		if finishing != nil {
			ferr := <-finishing
			finishing = nil
			if ferr != nil {
				return ferr
			}
		}
		finishing = make(chan error, 1)
		go func() { finishing <- f.finish(claimed.Shared, results) }()
	}
}

// The compact forms of a claim's answer and of a finish request, as the
// SDKs' workers use them (docs/http.md): what the jobs of a claim share
// (for a backlog's first attempts, their attempt and lease token) comes
// once, and the results name only their jobs, so that the Go worker over
// HTTP pays for the bytes the SDKs pay for, not the full form's.
type compactClaim struct {
	Shared claimShared    `json:"shared"`
	Jobs   []claimedEntry `json:"jobs"`
}

// claimShared are the fields of a compact claim's "shared" that the
// bench's worker reads, and of its finish request's; an entry's own value
// wins over shared's.
type claimShared struct {
	Attempt    int    `json:"attempt,omitempty"`
	LeaseToken string `json:"lease_token,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
}

// claimedEntry is one job of a compact claim, with the fields the worker
// uses.
type claimedEntry struct {
	ID int64 `json:"id"`
	claimShared
	Args json.RawMessage `json:"args"`
}

// finishResult is one result of a compact finish request, without the
// fields it takes from the request's "shared".
type finishResult struct {
	ID int64 `json:"id"`
	claimShared
	Error string `json:"error,omitempty"`
}

// finish reports one batch's results, sending once what they share.
func (f *httpFleet) finish(shared claimShared, results []finishResult) error {
	start := time.Now()
	shared.Outcome = "completed"
	var done struct {
		Accepted []int64 `json:"accepted"`
	}
	if err := f.post("/v1/finish", map[string]any{"shared": shared, "results": results}, &done); err != nil {
		return err
	}
	f.flushes.Add(1)
	f.flushed.Add(int64(len(results)))
	f.written.Add(int64(len(done.Accepted)))
	f.flushNanos.Add(int64(time.Since(start)))
	return nil
}

// run runs one job with the bench's own handler and returns its result,
// carrying the job's own attempt and lease token where it had them.
func (f *httpFleet) run(j claimedEntry, shared *claimShared) finishResult {
	start := time.Now()
	defer func() {
		f.ran.Add(1)
		f.runNanos.Add(int64(time.Since(start)))
	}()
	res := finishResult{ID: j.ID, claimShared: claimShared{Attempt: j.Attempt, LeaseToken: j.LeaseToken}}
	var args Args
	err := json.Unmarshal(j.Args, &args)
	if err == nil {
		err = work(context.Background(), &drover.Job[Args]{JobRow: &drovertype.JobRow{ID: j.ID, Attempt: cmp.Or(j.Attempt, shared.Attempt)},
			Args: args})
	}
	if err != nil {
		res.Outcome, res.Error = "failed", err.Error()
	}
	return res
}

// post sends one API request and decodes its answer.
func (f *httpFleet) post(path string, body, out any) error {
	return postJSON(context.Background(), f.http, f.api.url+path, f.api.secret, body, out)
}

// postJSON POSTs body as JSON to url with the bearer token secret and
// decodes a 200 answer into out; any other status is an error with the
// answer's body.
func postJSON(ctx context.Context, c *http.Client, url, secret string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %d: %s", url, resp.StatusCode, bytes.TrimSpace(data))
	}
	return json.Unmarshal(data, out)
}

func (f *httpFleet) counters() workerStats {
	return workerStats{
		Stats: drover.Stats{
			Claims: f.claims.Load(), ClaimedJobs: f.claimedJobs.Load(), ClaimTime: time.Duration(f.claimNanos.Load()),
			Ran: f.ran.Load(), RunTime: time.Duration(f.runNanos.Load()), Completed: f.ran.Load(),
			Flushes: f.flushes.Load(), FlushedResults: f.flushed.Load(), Written: f.written.Load(),
			FlushTime: time.Duration(f.flushNanos.Load()),
		},
		P99Ms: pickup.Load().Snapshot().P99,
		Ready: true,
	}
}

func (f *httpFleet) pids() []int { return nil }

func (f *httpFleet) stop(ctx context.Context) error {
	close(f.quit)
	// Each loop finishes its batch first; then the server goes.
	f.loops.Wait()
	err := f.api.stop(ctx)
	f.errMu.Lock()
	defer f.errMu.Unlock()
	return errors.Join(f.err, err)
}
