package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/jobjson"
	"github.com/droverhq/drover/internal/jobtrace"
	"github.com/droverhq/drover/internal/validate"
)

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz answers 200 only when the store answers, its schema is current,
// it can take writes (where the store offers a probe: an SQLite file on a
// full disk still answers reads) and the server's loops run, so that a
// load balancer sends no traffic to a server that would fail it.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	checks := map[string]string{"database": "ok", "schema": "ok", "loops": "ok", "writes": "ok"}
	ready := true
	check, err := s.store.Check(ctx)
	switch {
	case err != nil:
		s.cfg.Logger.Warn("readiness: store check failed", "error", err)
		checks["database"], checks["schema"] = "unreachable", "unknown"
		ready = false
	case check.Version < check.Latest:
		checks["schema"] = fmt.Sprintf("at version %d of %d: run drover migrate", check.Version, check.Latest)
		ready = false
	case check.Version > check.Latest:
		checks["schema"] = fmt.Sprintf("at version %d, newer than this binary's %d: upgrade drover", check.Version, check.Latest)
		ready = false
	}
	if err == nil && check.WriteErr != nil {
		s.cfg.Logger.Warn("readiness: the store cannot take writes", "error", check.WriteErr)
		checks["writes"] = "failing: " + check.WriteErr.Error()
		ready = false
	}
	if !s.running.Load() {
		checks["loops"] = "not running"
		ready = false
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, map[string]any{"ready": ready, "checks": checks})
	return nil
}

func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(OpenAPI)
	return err
}

// enqueueJob is one job of an enqueue request.
type enqueueJob struct {
	Kind        string          `json:"kind"`
	Args        json.RawMessage `json:"args"`
	Queue       string          `json:"queue"`
	Priority    int             `json:"priority"`
	RunAt       *jsonTime       `json:"run_at"`
	MaxAttempts int             `json:"max_attempts"`
	Tags        []string        `json:"tags"`
	Metadata    json.RawMessage `json:"metadata"`
	TimeoutMS   int64           `json:"timeout_ms"`
	DependsOn   []int64         `json:"depends_on"`
	Key         string          `json:"key"`
	KeyLimit    int             `json:"key_limit"`
	// order: per-key rate limit (InsertOpts.KeyRate, KeyRatePeriod).
	KeyRate         int    `json:"key_rate"`
	KeyRatePeriodMS int64  `json:"key_rate_period_ms"`
	UniqueKey       string `json:"unique_key"`
	// UniqueStates are the job states that hold UniqueKey
	// (InsertOpts.UniqueStates); absent: the unfinished ones.
	UniqueStates []drovertype.JobState `json:"unique_states"`
	// UniqueByQueue holds UniqueKey per queue too (InsertOpts.UniqueByQueue).
	UniqueByQueue bool `json:"unique_by_queue"`
	// routing: where the job may run (InsertOpts.WorkerType, WorkerNames,
	// WorkerLabels, OnWorkerAbsent, WorkerAbsentAfter).
	WorkerType          string            `json:"worker_type"`
	WorkerNames         []string          `json:"worker_names"`
	WorkerLabels        map[string]string `json:"worker_labels"`
	OnWorkerAbsent      string            `json:"on_worker_absent"`
	WorkerAbsentAfterMS int64             `json:"worker_absent_after_ms"`
}

// insertParams checks the jobs of a request and converts them; the store
// checks the rest (kinds, queues, sizes) and its errors name the job.
func (s *Server) insertParams(field string, jobs []enqueueJob) ([]drover.InsertManyParams, error) {
	if len(jobs) == 0 {
		return nil, badRequest("%s: empty, give at least one job", field)
	}
	if len(jobs) > s.cfg.MaxBatch {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("%s: %d is over the limit of %d per request", field, len(jobs), s.cfg.MaxBatch)}
	}
	params := make([]drover.InsertManyParams, len(jobs))
	for i, j := range jobs {
		p, err := j.params()
		if err != nil {
			return nil, badRequest("%s[%d].%v", field, i, err)
		}
		params[i] = p
	}
	return params, nil
}

func (j enqueueJob) params() (drover.InsertManyParams, error) {
	if len(j.Args) == 0 {
		return drover.InsertManyParams{}, errors.New("args: required (use {} for none)")
	}
	// The store refuses these too (Client.Insert takes only objects as
	// args and metadata); checked here first so that the error names the
	// field of the request.
	if k := jsonKind(j.Args); k != "an object" {
		return drover.InsertManyParams{}, fmt.Errorf("args: must be a JSON object, got %s", k)
	}
	if len(j.Metadata) > 0 {
		if k := jsonKind(j.Metadata); k != "an object" {
			return drover.InsertManyParams{}, fmt.Errorf("metadata: must be a JSON object, got %s", k)
		}
	}
	for _, f := range []struct {
		name string
		ms   int64
	}{{"timeout_ms", j.TimeoutMS}, {"worker_absent_after_ms", j.WorkerAbsentAfterMS}} {
		if f.ms < 0 || f.ms > math.MaxInt64/int64(time.Millisecond) {
			return drover.InsertManyParams{}, fmt.Errorf("%s %d: must be between 0 and %d", f.name, f.ms,
				math.MaxInt64/int64(time.Millisecond))
		}
	}
	opts := &drover.InsertOpts{Queue: j.Queue, Priority: j.Priority, MaxAttempts: j.MaxAttempts,
		Tags: j.Tags, Metadata: j.Metadata, Timeout: millis(j.TimeoutMS),
		DependsOn: j.DependsOn, Key: j.Key, KeyLimit: j.KeyLimit, UniqueKey: j.UniqueKey, UniqueStates: j.UniqueStates,
		UniqueByQueue: j.UniqueByQueue,
		KeyRate:       j.KeyRate, KeyRatePeriod: millis(j.KeyRatePeriodMS),
		WorkerType: j.WorkerType, WorkerNames: j.WorkerNames, WorkerLabels: j.WorkerLabels,
		OnWorkerAbsent: drovertype.AbsentPolicy(j.OnWorkerAbsent), WorkerAbsentAfter: millis(j.WorkerAbsentAfterMS)}
	if j.RunAt != nil {
		opts.RunAt = j.RunAt.Time
	}
	return drover.InsertManyParams{Args: drover.RawArgs{KindName: j.Kind, JSON: j.Args}, Opts: opts}, nil
}

// traceContext is the request's context carrying the caller's trace
// context, if it sent one, so that it becomes the jobs'.
func (s *Server) traceContext(r *http.Request) context.Context {
	ctx := r.Context()
	if s.cfg.TracerProvider != nil {
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	return ctx
}

// countInserted counts the jobs of a stored request by queue and kind.
func (s *Server) countInserted(jobs []enqueueJob) {
	for _, j := range jobs {
		s.metrics.observeInserted(cmp.Or(j.Queue, drover.DefaultQueue), j.Kind)
	}
}

func (s *Server) enqueue(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Jobs []enqueueJob `json:"jobs"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	params, err := s.insertParams("jobs", req.Jobs)
	if err != nil {
		return err
	}
	if err := s.checkJobs(r, req.Jobs); err != nil {
		return err
	}
	ids, err := s.cfg.Client.InsertMany(s.traceContext(r), params)
	if err != nil {
		return err
	}
	s.countInserted(req.Jobs)
	writeJSON(w, http.StatusCreated, map[string]any{"ids": ids})
	return nil
}

// insertBatch stores jobs as one batch, with an optional callback job that
// becomes available once every member has ended.
func (s *Server) insertBatch(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Jobs     []enqueueJob `json:"jobs"`
		Callback *enqueueJob  `json:"callback"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	params, err := s.insertParams("jobs", req.Jobs)
	if err != nil {
		return err
	}
	var opts *drover.BatchOpts
	if req.Callback != nil {
		cb, err := req.Callback.params()
		if err != nil {
			return badRequest("callback.%v", err)
		}
		opts = &drover.BatchOpts{Callback: cb.Args, CallbackOpts: cb.Opts}
	}
	checked := req.Jobs
	if req.Callback != nil {
		checked = append(slices.Clip(req.Jobs), *req.Callback)
	}
	if err := s.checkJobs(r, checked); err != nil {
		return err
	}
	b, err := s.cfg.Client.InsertBatch(s.traceContext(r), params, opts)
	if err != nil {
		return err
	}
	s.countInserted(req.Jobs)
	if req.Callback != nil {
		s.countInserted([]enqueueJob{*req.Callback})
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": b.ID, "ids": b.JobIDs, "callback_job_id": b.CallbackID})
	return nil
}

func batchPathID(r *http.Request) (int64, error) { return parseID("batch", r.PathValue("id")) }

func (s *Server) getBatch(w http.ResponseWriter, r *http.Request) error {
	id, err := batchPathID(r)
	if err != nil {
		return err
	}
	if restricted(r) {
		return batchNotFound(id)
	}
	b, err := s.cfg.Client.BatchGet(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, jobjson.FromBatch(b))
	return nil
}

// resultJSON is one job's state and result as JSON.
type resultJSON struct {
	ID     int64               `json:"id"`
	State  drovertype.JobState `json:"state"`
	Kind   string              `json:"kind"`
	Result json.RawMessage     `json:"result"`
}

func resultFrom(id int64, state, kind string, result []byte) resultJSON {
	out := resultJSON{ID: id, State: drovertype.JobState(state), Kind: kind, Result: result}
	if len(out.Result) == 0 {
		out.Result = json.RawMessage("null")
	}
	return out
}

// batchResults pages through the ended members of a batch in ID order,
// straight from the store's page query, so that a page costs the same
// however deep into a large batch it is.
func (s *Server) batchResults(w http.ResponseWriter, r *http.Request) error {
	id, err := batchPathID(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	for key := range q {
		if key != "after" && key != "limit" {
			return badRequest("query parameter %q: unknown (use after, limit)", key)
		}
	}
	p := droverdriver.BatchResultsParams{BatchID: id, Limit: 100}
	// A parameter given empty is given, and the document types both as
	// integers: "after=" is an error, as in GET /v1/jobs.
	if q.Has("after") {
		v := q.Get("after")
		if p.AfterID, err = strconv.ParseInt(v, 10, 64); err != nil || p.AfterID < 0 {
			return badRequest("after %q: must be a job id (a non-negative integer)", v)
		}
	}
	if q.Has("limit") {
		v := q.Get("limit")
		if p.Limit, err = strconv.Atoi(v); err != nil || p.Limit < 1 || p.Limit > maxResultsPage {
			return badRequest("limit %q: must be an integer from 1 to %d", v, maxResultsPage)
		}
	}
	if restricted(r) {
		return batchNotFound(id)
	}
	// An unknown batch is a 404, not an empty page.
	if _, err := s.cfg.Client.BatchGet(r.Context(), id); err != nil {
		return err
	}
	results, next, err := s.batchResultsPage(r.Context(), p)
	if err != nil {
		return err
	}
	resp := map[string]any{"results": results, "next_after": nil}
	if next > 0 {
		resp["next_after"] = next
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// batchResultsPage reads one page of a batch's ended members and the
// cursor of the next page, 0 on the last. The page ends at its limit or
// at the byte budget (Config.MaxPageBytes), whichever comes first; it is
// read from the store jobsChunk results at a time, so that a page of
// large results holds no more than the budget and a chunk.
func (s *Server) batchResultsPage(ctx context.Context, p droverdriver.BatchResultsParams) ([]resultJSON, int64, error) {
	out := []resultJSON{}
	budget := &byteBudget{left: s.cfg.MaxPageBytes}
	for limit := p.Limit; len(out) < limit; {
		p.Limit = min(limit-len(out), jobsChunk)
		rows, err := s.cfg.Client.BatchResultsAfter(ctx, p.BatchID, p.AfterID, p.Limit)
		if err != nil {
			return nil, 0, err
		}
		for _, row := range rows {
			res := resultFrom(row.ID, string(row.State), row.Kind, row.Result)
			if !budget.take(res) {
				return out, out[len(out)-1].ID, nil
			}
			out = append(out, res)
		}
		if len(rows) < p.Limit {
			return out, 0, nil
		}
		p.AfterID = rows[len(rows)-1].ID
	}
	return out, out[len(out)-1].ID, nil
}

// byteBudget counts the JSON of an answer's items against the byte budget
// (Config.MaxPageBytes). The first item always fits, so that an answer
// makes progress however large one item is.
type byteBudget struct {
	left  int
	taken int
}

// take reports whether v's JSON fits what is left, and counts it if so.
func (b *byteBudget) take(v any) bool {
	// An item that cannot be encoded counts as empty here: the answer's
	// own encoding fails on it and says why.
	enc, _ := json.Marshal(v)
	n := len(enc) + 1 // and its comma
	if b.taken > 0 && n > b.left {
		return false
	}
	b.left -= n
	b.taken++
	return true
}

// maxResultsPage bounds the rows of a page of batch results; the byte
// budget bounds its size.
const maxResultsPage = 500

func (s *Server) jobResult(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if restricted(r) {
		// The result does not carry the queue; read the job first, only
		// for the tokens that need it.
		job, err := s.cfg.Client.JobGet(r.Context(), id)
		if err != nil {
			return err
		}
		if !requestToken(r).AllowsQueue(job.Queue) {
			return jobNotFound(id)
		}
	}
	res, err := s.cfg.Client.JobResult(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, resultFrom(res.ID, string(res.State), res.Kind, res.Result))
	return nil
}

func pathID(r *http.Request) (int64, error) { return parseID("job", r.PathValue("id")) }

// parseID reads the ID of a job or batch (what) from a path or form value,
// with an error that names which ID was wrong.
func parseID(what, v string) (int64, error) {
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 1 {
		return 0, badRequest("%s id %q: must be a positive integer", what, v)
	}
	return id, nil
}

// byID serves the endpoints that act on one job.
func (s *Server) byID(w http.ResponseWriter, r *http.Request, call func(context.Context, int64) (*drovertype.JobRow, error)) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	job, err := call(r.Context(), id)
	if err != nil {
		return err
	}
	// Only reads get here with a restricted token (the actions need
	// admin, which cannot be restricted), so the check comes after the
	// call; a job of another queue is answered as a missing one.
	if tok := requestToken(r); tok != nil && !tok.AllowsQueue(job.Queue) {
		return jobNotFound(id)
	}
	writeJSON(w, http.StatusOK, jobjson.From(job))
	return nil
}

func (s *Server) getJob(w http.ResponseWriter, r *http.Request) error {
	return s.byID(w, r, s.cfg.Client.JobGet)
}

func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request) error {
	return s.byID(w, r, s.cfg.Client.JobCancel)
}

func (s *Server) retryJob(w http.ResponseWriter, r *http.Request) error {
	return s.byID(w, r, s.cfg.Client.JobRetry)
}

func (s *Server) discardJob(w http.ResponseWriter, r *http.Request) error {
	return s.byID(w, r, s.cfg.Client.JobDiscard)
}

// claim claims up to max jobs for a worker, within the byte budget of an
// answer (claimbudget.go), waiting up to wait_ms for some to arrive when
// none is claimable. A worker that dies after the claim
// loses nothing: the jobs come back when their leases expire.
func (s *Server) claim(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Queue   string `json:"queue"`
		Worker  string `json:"worker"`
		Max     int    `json:"max"`
		LeaseMS int64  `json:"lease_ms"`
		WaitMS  int64  `json:"wait_ms"`
		// routing: what the worker is (drover.ClaimParams).
		WorkerName   string            `json:"worker_name"`
		WorkerType   string            `json:"worker_type"`
		WorkerLabels map[string]string `json:"worker_labels"`
		// Kinds the worker runs: only their jobs are claimed (nil:
		// every kind).
		Kinds []string `json:"kinds"`
		// Compact asks for the answer's compact form (compact.go).
		Compact bool `json:"compact"`
	}
	req.Max, req.LeaseMS = 1, drover.LeaseDurationDefault.Milliseconds()
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Worker == "" {
		return badRequest("worker: required, an ID of the worker process (it becomes the jobs' lease owner)")
	}
	if err := validate.Owner(req.Worker); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	// Checked before waiting, so that no wake-up channel is made for a
	// name that can never be a queue.
	if err := validate.Queue(req.Queue); err != nil {
		return err
	}
	if err := checkQueue(r, req.Queue); err != nil {
		return err
	}
	// Checked here, not only by Remote.Claim: the claim asks the store
	// for chunks of max, which are in range when max is not.
	if req.Max < 1 || req.Max > drover.MaxClaim {
		return badRequest("max %d: must be between 1 and %d", req.Max, drover.MaxClaim)
	}
	wait := millis(req.WaitMS)
	if req.WaitMS < 0 || wait > s.cfg.MaxWait {
		return badRequest("wait_ms %d: must be between 0 and %d", req.WaitMS, s.cfg.MaxWait.Milliseconds())
	}
	s.holdFor(w, wait)
	p := drover.ClaimParams{Queue: req.Queue, Max: req.Max, Owner: req.Worker, Lease: millis(req.LeaseMS),
		WorkerName: req.WorkerName, WorkerType: req.WorkerType, WorkerLabels: req.WorkerLabels, Kinds: req.Kinds}
	ctx := r.Context()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	poll := s.store.PollInterval()
	empty := func() error {
		if req.Compact {
			writeJSON(w, http.StatusOK, map[string]any{"shared": struct{}{}, "jobs": []any{}})
			return nil
		}
		writeJSON(w, http.StatusOK, map[string]any{"jobs": []any{}})
		return nil
	}
	for {
		// A server shutting down claims nothing more: the connection
		// closes once this answer is written, and jobs claimed now could
		// be lost with it until their leases expired.
		select {
		case <-s.stopping:
			return empty()
		default:
		}
		// Take the wake-up channel before claiming, so that jobs
		// inserted between the claim and the wait end the wait.
		woken := s.waiter.wait(req.Queue)
		body, n, err := s.claimWithin(ctx, p, req.Compact)
		if err != nil {
			return err
		}
		if n > 0 || wait == 0 {
			writeRaw(w, http.StatusOK, body)
			return nil
		}
		select {
		case <-woken:
		case <-time.After(poll):
		case <-deadline.C:
			wait = 0 // one last claim, then answer
		case <-s.stopping:
			return empty()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// finish needs no queue check for restricted tokens: a result counts
// only with the lease token of the attempt, which only its claim handed
// out, and the claim was checked against the token's queues.
//
// A request may send what its results have in common once, in "shared"
// (the compact form, compact.go): a result that lacks attempt, lease_token
// or outcome takes shared's.
func (s *Server) finish(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Shared  *finishShared `json:"shared"`
		Results []struct {
			ID int64 `json:"id"`
			finishShared
			// MaxAttempts is accepted and ignored (AttemptResult.MaxAttempts).
			MaxAttempts int       `json:"max_attempts"`
			Error       string    `json:"error"`
			Trace       string    `json:"trace"`
			RetryAt     *jsonTime `json:"retry_at"`
			// SnoozeMS is a snoozed attempt's delay, from now, as an
			// alternative to retry_at.
			SnoozeMS *int64          `json:"snooze_ms"`
			Result   json.RawMessage `json:"result"`
		} `json:"results"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	if len(req.Results) > s.cfg.MaxBatch {
		return &apiError{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("results: %d is over the limit of %d per request", len(req.Results), s.cfg.MaxBatch)}
	}
	results := make([]drover.AttemptResult, len(req.Results))
	for i, x := range req.Results {
		if req.Shared != nil {
			x.finishShared = x.or(*req.Shared)
		}
		results[i] = drover.AttemptResult{ID: x.ID, Attempt: deref(x.Attempt), LeaseToken: deref(x.LeaseToken),
			Outcome: deref(x.Outcome), Error: x.Error, Trace: x.Trace, Result: x.Result}
		if x.RetryAt != nil {
			results[i].RetryAt = x.RetryAt.Time
		}
		if x.SnoozeMS != nil {
			if results[i].Outcome != drover.AttemptSnoozed || x.RetryAt != nil {
				return badRequest("result %d: snooze_ms goes only with outcome %q, and not with retry_at", i+1, drover.AttemptSnoozed)
			}
			if *x.SnoozeMS < 0 || millis(*x.SnoozeMS) > maxSnooze {
				return badRequest("result %d: snooze_ms %d: must be between 0 and %d", i+1, *x.SnoozeMS, maxSnooze.Milliseconds())
			}
			results[i].RetryAt = time.Now().Add(millis(*x.SnoozeMS))
		}
	}
	start := time.Now()
	rep, err := s.remote.Finish(r.Context(), results)
	if err != nil {
		return err
	}
	s.finished(results, rep, time.Since(start))
	type refusedJSON struct {
		ID       int64  `json:"id"`
		Error    string `json:"error"`
		Recorded bool   `json:"recorded"`
	}
	refused := make([]refusedJSON, len(rep.Refused))
	for i, f := range rep.Refused {
		refused[i] = refusedJSON(f)
	}
	writeJSON(w, http.StatusOK, map[string]any{"accepted": nonNil(rep.Accepted), "rejected": nonNil(rep.Rejected), "refused": refused})
	return nil
}

// finishShared are the fields of a result a finish request may send once
// for all its results, each nil when absent.
type finishShared struct {
	Attempt *int `json:"attempt"`
	// LeaseToken is the claim's token; a missing or wrong one gets the
	// result rejected like a stale attempt's, and one that is not 32
	// lower-case hex digits is a malformed request.
	LeaseToken *drovertype.LeaseToken `json:"lease_token"`
	Outcome    *drover.AttemptOutcome `json:"outcome"`
}

// or returns f with each absent field taken from shared.
func (f finishShared) or(shared finishShared) finishShared {
	return finishShared{Attempt: cmp.Or(f.Attempt, shared.Attempt), LeaseToken: cmp.Or(f.LeaseToken, shared.LeaseToken),
		Outcome: cmp.Or(f.Outcome, shared.Outcome)}
}

// deref is *p, or the zero value for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// maxSnooze bounds snooze_ms: a year, far past any sensible delay, and
// well inside the times the store takes.
const maxSnooze = 366 * 24 * time.Hour

// release gives back attempts without using them, with no queue check for
// the reason finish needs none.
func (s *Server) release(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Attempts []attemptJSON `json:"attempts"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	refs, err := s.attemptRefs(req.Attempts)
	if err != nil {
		return err
	}
	rep, err := s.remote.Release(r.Context(), refs)
	if err != nil {
		return err
	}
	s.metrics.rejected.Add(float64(len(rep.Rejected)))
	released := make(map[int64]bool, len(rep.Released))
	for _, id := range rep.Released {
		released[id] = true
	}
	for _, a := range refs {
		if released[a.ID] {
			s.inflight.finished(a.ID, a.Attempt)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"released": nonNil(rep.Released), "rejected": nonNil(rep.Rejected)})
	return nil
}

// attemptJSON names one held attempt in a heartbeat or release request.
type attemptJSON struct {
	ID         int64                 `json:"id"`
	Attempt    int                   `json:"attempt"`
	LeaseToken drovertype.LeaseToken `json:"lease_token"`
}

// attemptRefs converts the attempts of a request, refusing more than one
// request may carry; the client validates each.
func (s *Server) attemptRefs(attempts []attemptJSON) ([]drover.AttemptRef, error) {
	if len(attempts) > s.cfg.MaxBatch {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("attempts: %d is over the limit of %d per request", len(attempts), s.cfg.MaxBatch)}
	}
	refs := make([]drover.AttemptRef, len(attempts))
	for i, a := range attempts {
		refs[i] = drover.AttemptRef(a)
	}
	return refs, nil
}

// heartbeat needs no queue check, for the reason finish needs none: only
// the claimer of an attempt holds its lease token.
func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		LeaseMS  int64         `json:"lease_ms"`
		Attempts []attemptJSON `json:"attempts"`
	}
	req.LeaseMS = drover.LeaseDurationDefault.Milliseconds()
	if err := decode(r, &req); err != nil {
		return err
	}
	refs, err := s.attemptRefs(req.Attempts)
	if err != nil {
		return err
	}
	lease := millis(req.LeaseMS)
	rep, err := s.remote.ExtendLeases(r.Context(), refs, lease)
	if err != nil {
		return err
	}
	s.inflight.extended(refs, rep.Lost, time.Now().Add(lease))
	writeJSON(w, http.StatusOK, map[string]any{"lost": rep.Lost, "cancel_requested": rep.CancelRequested})
	return nil
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for key := range q {
		if key != "queue" {
			return badRequest("query parameter %q: unknown (use queue)", key)
		}
	}
	queue := q.Get("queue")
	if queue != "" {
		if err := validate.Queue(queue); err != nil {
			return err
		}
	}
	counts, err := s.cfg.Client.JobCountByState(r.Context(), queue)
	if err != nil {
		return err
	}
	out := make(map[string]int64, len(jobStates))
	for _, st := range jobStates {
		out[st] = counts[drovertype.JobState(st)]
	}
	writeJSON(w, http.StatusOK, map[string]any{"queue": queue, "counts": out})
	return nil
}

// Queues: their stored settings, which every claim applies (pause,
// cluster-wide limits). Admin only, like the job actions: a pause stops
// every worker of the queue.

func (s *Server) listQueues(w http.ResponseWriter, r *http.Request) error {
	if len(r.URL.Query()) > 0 {
		return badRequest("query parameters: none are taken")
	}
	settings, err := s.cfg.Client.QueueList(r.Context())
	if err != nil {
		return err
	}
	stats, err := s.cfg.Client.QueueStats(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"queues": jobjson.QueueList(settings, stats)})
	return nil
}

func (s *Server) getQueue(w http.ResponseWriter, r *http.Request) error {
	return s.queueCall(w, r, nil, nil)
}

// pauseQueue pauses the queue, or with ?kind=K only that kind within it.
func (s *Server) pauseQueue(w http.ResponseWriter, r *http.Request) error {
	return s.queueCall(w, r, s.cfg.Client.QueuePause, s.cfg.Client.QueuePauseKind)
}

// resumeQueue resumes the queue, or with ?kind=K only that kind.
func (s *Server) resumeQueue(w http.ResponseWriter, r *http.Request) error {
	return s.queueCall(w, r, s.cfg.Client.QueueResume, s.cfg.Client.QueueResumeKind)
}

// queueCall runs change (if any) on the queue the path names, or
// changeKind on the kind its kind query parameter names, and answers with
// the queue's settings after it. A queue the store does not know
// (Client.QueueKnown) is a 404, so that a typo neither pauses a phantom
// queue nor reads as one with default settings; create=true stores the
// change all the same, for a queue whose workers are yet to come.
func (s *Server) queueCall(w http.ResponseWriter, r *http.Request, change func(context.Context, string) error,
	changeKind func(context.Context, string, string) error) error {
	name := r.PathValue("name")
	if err := validate.Queue(name); err != nil {
		return err
	}
	query := r.URL.Query()
	var taken []string
	if changeKind != nil {
		taken = append(taken, "kind")
	}
	if change != nil {
		taken = append(taken, "create")
	}
	for k := range query {
		if !slices.Contains(taken, k) {
			if len(taken) == 0 {
				return badRequest("query parameter %q: none are taken", k)
			}
			return badRequest("query parameter %q: unknown (use %s)", k, strings.Join(taken, ", "))
		}
	}
	create, err := queryBool(query, "create")
	if err != nil {
		return err
	}
	if !create {
		known, err := s.cfg.Client.QueueKnown(r.Context(), name)
		if err != nil {
			return err
		}
		if !known {
			msg := fmt.Sprintf("queue %q not found: it has no jobs, no stored settings and no worker works it", name)
			if change != nil {
				msg += "; pass create=true to store its settings anyway"
			}
			return &apiError{status: http.StatusNotFound, msg: msg}
		}
	}
	switch {
	case query.Has("kind"):
		if err := changeKind(r.Context(), name, query.Get("kind")); err != nil {
			return err
		}
	case change != nil:
		if err := change(r.Context(), name); err != nil {
			return err
		}
	}
	q, err := s.cfg.Client.QueueGet(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, jobjson.FromQueue(q))
	return nil
}

func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// claimed remembers the attempts of a claim and measures it.
func (s *Server) claimed(p drover.ClaimParams, jobs []*drovertype.JobRow, took time.Duration) {
	now := time.Now()
	attempts := make([]attemptInfo, len(jobs))
	runAts := make([]time.Time, len(jobs))
	for i, j := range jobs {
		a := attemptInfo{id: j.ID, attempt: j.Attempt, token: j.LeaseToken, queue: j.Queue, kind: j.Kind, started: now, expires: now.Add(p.Lease)}
		if j.AttemptedAt != nil {
			a.started = *j.AttemptedAt
		}
		if j.LeaseExpiresAt != nil {
			a.expires = *j.LeaseExpiresAt
		}
		if s.cfg.TracerProvider != nil {
			a.metadata = j.Metadata
		}
		attempts[i], runAts[i] = a, j.RunAt
	}
	s.inflight.claimed(p.Owner, attempts)
	s.metrics.observeClaim(attempts, runAts, took)
}

// finished counts the accepted results by outcome and forgets their
// attempts.
func (s *Server) finished(results []drover.AttemptResult, rep *drover.FinishReport, took time.Duration) {
	now := time.Now()
	s.metrics.finishSize.Observe(float64(len(results)))
	s.metrics.finishSeconds.Observe(took.Seconds())
	s.metrics.rejected.Add(float64(len(rep.Rejected)))
	accepted := make(map[int64]bool, len(rep.Accepted))
	for _, id := range rep.Accepted {
		accepted[id] = true
	}
	// A refused result recorded as a failed attempt ended its attempt too.
	failed := make(map[int64]bool, len(rep.Refused))
	for _, f := range rep.Refused {
		failed[f.ID] = f.Recorded
	}
	for _, r := range results {
		// Only an accepted result ends the attempt: a rejected one may be
		// a forgery naming the attempt of a worker that still runs it
		// (a stale one's entry is replaced by the next claim, or expires).
		if failed[r.ID] {
			r.Outcome, r.Error = drover.AttemptFailed, "the store refused the result"
		} else if !accepted[r.ID] {
			continue
		}
		a, known := s.inflight.finished(r.ID, r.Attempt)
		s.metrics.observeResult(r.Outcome, a, known, now)
		if tp := s.cfg.TracerProvider; tp != nil && known {
			// The run happened in the worker; its span covers claim to
			// result, as the server saw it.
			_, span := jobtrace.Start(context.Background(), tp, jobtrace.Job{ID: r.ID, Kind: a.kind, Queue: a.queue,
				Attempt: r.Attempt, Metadata: a.metadata}, a.started)
			var err error
			if r.Outcome == drover.AttemptFailed {
				err = errors.New(cmp.Or(r.Error, "failed without a message"))
			}
			jobtrace.End(span, string(r.Outcome), err, now)
		}
	}
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	promhttp.HandlerFor(s.metrics, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}

// millis converts a request's milliseconds to a Duration, saturating
// instead of wrapping: a value past what a Duration holds (about 292
// years) must fail the range check it is given to, not wrap around into a
// small, valid-looking duration.
func millis(ms int64) time.Duration {
	const limit = math.MaxInt64 / int64(time.Millisecond)
	switch {
	case ms > limit:
		return math.MaxInt64
	case ms < -limit:
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}
