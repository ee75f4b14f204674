package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/jobjson"
)

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz answers 200 only when the store answers, its schema is current and
// the server's loops run, so that a load balancer sends no traffic to a
// server that would fail it.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	checks := map[string]string{"database": "ok", "schema": "ok", "loops": "ok"}
	ready := true
	version, latest, err := drover.MigrationStatus(ctx, s.cfg.Driver)
	switch {
	case err != nil:
		s.cfg.Logger.Warn("readiness: store check failed", "error", err)
		checks["database"], checks["schema"] = "unreachable", "unknown"
		ready = false
	case version < latest:
		checks["schema"] = fmt.Sprintf("at version %d of %d: run drover migrate", version, latest)
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
	RunAt       *time.Time      `json:"run_at"`
	MaxAttempts int             `json:"max_attempts"`
	Tags        []string        `json:"tags"`
	Metadata    json.RawMessage `json:"metadata"`
	TimeoutMS   int64           `json:"timeout_ms"`
}

func (s *Server) enqueue(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Jobs []enqueueJob `json:"jobs"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	if len(req.Jobs) == 0 {
		return badRequest("jobs: empty, give at least one job")
	}
	if len(req.Jobs) > s.cfg.MaxBatch {
		return &apiError{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("jobs: %d is over the limit of %d per request", len(req.Jobs), s.cfg.MaxBatch)}
	}
	params := make([]drover.InsertManyParams, len(req.Jobs))
	for i, j := range req.Jobs {
		if len(j.Args) == 0 {
			return badRequest("jobs[%d].args: required (use {} for none)", i)
		}
		if j.TimeoutMS < 0 {
			return badRequest("jobs[%d].timeout_ms %d: must not be negative", i, j.TimeoutMS)
		}
		opts := &drover.InsertOpts{Queue: j.Queue, Priority: j.Priority, MaxAttempts: j.MaxAttempts,
			Tags: j.Tags, Metadata: j.Metadata, Timeout: time.Duration(j.TimeoutMS) * time.Millisecond}
		if j.RunAt != nil {
			opts.RunAt = *j.RunAt
		}
		params[i] = drover.InsertManyParams{Args: drover.RawArgs{KindName: j.Kind, JSON: j.Args}, Opts: opts}
	}
	ctx := r.Context()
	if s.cfg.TracerProvider != nil {
		// The caller's trace context, if it sent one, becomes the jobs'.
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	ids, err := s.cfg.Client.InsertMany(ctx, params)
	if err != nil {
		return err
	}
	for _, j := range req.Jobs {
		queue := j.Queue
		if queue == "" {
			queue = drover.DefaultQueue
		}
		s.metrics.inserted.WithLabelValues(queue, j.Kind).Inc()
	}
	writeJSON(w, http.StatusCreated, map[string]any{"ids": ids})
	return nil
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for key := range q {
		switch key {
		case "state", "queue", "kind", "after", "limit":
		default:
			return badRequest("query parameter %q: unknown (use state, queue, kind, after, limit)", key)
		}
	}
	p := drover.JobListParams{Queue: q.Get("queue"), Kind: q.Get("kind"), Limit: 100}
	for _, v := range q["state"] {
		for _, st := range strings.Split(v, ",") {
			p.States = append(p.States, drover.JobState(st))
		}
	}
	var err error
	if v := q.Get("after"); v != "" {
		if p.After, err = strconv.ParseInt(v, 10, 64); err != nil || p.After < 0 {
			return badRequest("after %q: must be a job id (a non-negative integer)", v)
		}
	}
	if v := q.Get("limit"); v != "" {
		if p.Limit, err = strconv.Atoi(v); err != nil || p.Limit < 1 {
			return badRequest("limit %q: must be a positive integer", v)
		}
	}
	jobs, err := s.cfg.Client.JobList(r.Context(), p)
	if err != nil {
		return err
	}
	resp := map[string]any{"jobs": jobjson.FromAll(jobs), "next_after": nil}
	if len(jobs) == p.Limit {
		resp["next_after"] = jobs[len(jobs)-1].ID
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func pathID(r *http.Request) (int64, error) {
	v := r.PathValue("id")
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 1 {
		return 0, badRequest("job id %q: must be a positive integer", v)
	}
	return id, nil
}

// byID serves the endpoints that act on one job.
func (s *Server) byID(w http.ResponseWriter, r *http.Request, call func(context.Context, int64) (*drover.JobRow, error)) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	job, err := call(r.Context(), id)
	if err != nil {
		return err
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

// claim claims up to max jobs for a worker, waiting up to wait_ms for some
// to arrive when none is claimable. A worker that dies after the claim
// loses nothing: the jobs come back when their leases expire.
func (s *Server) claim(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Queue   string `json:"queue"`
		Worker  string `json:"worker"`
		Max     int    `json:"max"`
		LeaseMS int64  `json:"lease_ms"`
		WaitMS  int64  `json:"wait_ms"`
	}
	req.Max, req.LeaseMS = 1, drover.LeaseDurationDefault.Milliseconds()
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Worker == "" {
		return badRequest("worker: required, an ID of the worker process (it becomes the jobs' lease owner)")
	}
	// Checked before waiting, so that no wake-up channel is made for a
	// name that can never be a queue.
	if err := drover.ValidateQueue(req.Queue); err != nil {
		return err
	}
	wait := time.Duration(req.WaitMS) * time.Millisecond
	if req.WaitMS < 0 || wait > s.cfg.MaxWait {
		return badRequest("wait_ms %d: must be between 0 and %d", req.WaitMS, s.cfg.MaxWait.Milliseconds())
	}
	p := drover.ClaimParams{Queue: req.Queue, Max: req.Max, Owner: req.Worker, Lease: time.Duration(req.LeaseMS) * time.Millisecond}
	ctx := r.Context()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	poll := s.cfg.Driver.PollInterval()
	for {
		// Take the wake-up channel before claiming, so that jobs
		// inserted between the claim and the wait end the wait.
		woken := s.waiter.wait(req.Queue)
		start := time.Now()
		jobs, err := s.cfg.Client.Claim(ctx, p)
		if err != nil {
			return err
		}
		s.claimed(p, jobs, time.Since(start))
		if len(jobs) > 0 || wait == 0 {
			writeJSON(w, http.StatusOK, map[string]any{"jobs": jobjson.FromAll(jobs)})
			return nil
		}
		select {
		case <-woken:
		case <-time.After(poll):
		case <-deadline.C:
			wait = 0 // one last claim, then answer
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *Server) finish(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Results []struct {
			ID          int64                 `json:"id"`
			Attempt     int                   `json:"attempt"`
			Outcome     drover.AttemptOutcome `json:"outcome"`
			MaxAttempts int                   `json:"max_attempts"`
			Error       string                `json:"error"`
			Trace       string                `json:"trace"`
			RetryAt     *time.Time            `json:"retry_at"`
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
		results[i] = drover.AttemptResult{ID: x.ID, Attempt: x.Attempt, MaxAttempts: x.MaxAttempts,
			Outcome: x.Outcome, Error: x.Error, Trace: x.Trace}
		if x.RetryAt != nil {
			results[i].RetryAt = *x.RetryAt
		}
	}
	start := time.Now()
	rep, err := s.cfg.Client.Finish(r.Context(), results)
	if err != nil {
		return err
	}
	s.finished(results, rep, time.Since(start))
	writeJSON(w, http.StatusOK, map[string]any{"accepted": nonNil(rep.Accepted), "rejected": nonNil(rep.Rejected)})
	return nil
}

func (s *Server) heartbeat(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		LeaseMS  int64 `json:"lease_ms"`
		Attempts []struct {
			ID      int64 `json:"id"`
			Attempt int   `json:"attempt"`
		} `json:"attempts"`
	}
	req.LeaseMS = drover.LeaseDurationDefault.Milliseconds()
	if err := decode(r, &req); err != nil {
		return err
	}
	if len(req.Attempts) > s.cfg.MaxBatch {
		return &apiError{status: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("attempts: %d is over the limit of %d per request", len(req.Attempts), s.cfg.MaxBatch)}
	}
	refs := make([]drover.AttemptRef, len(req.Attempts))
	for i, a := range req.Attempts {
		refs[i] = drover.AttemptRef{ID: a.ID, Attempt: a.Attempt}
	}
	lease := time.Duration(req.LeaseMS) * time.Millisecond
	rep, err := s.cfg.Client.ExtendLeases(r.Context(), refs, lease)
	if err != nil {
		return err
	}
	ids := make([]int64, len(refs))
	for i, a := range refs {
		ids[i] = a.ID
	}
	now := time.Now()
	s.inflight.extended(ids, rep.Lost, now.Add(lease), now)
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
		if err := drover.ValidateQueue(queue); err != nil {
			return err
		}
	}
	counts, err := s.cfg.Client.JobCountByState(r.Context(), queue)
	if err != nil {
		return err
	}
	out := make(map[string]int64, len(jobStates))
	for _, st := range jobStates {
		out[st] = counts[drover.JobState(st)]
	}
	writeJSON(w, http.StatusOK, map[string]any{"queue": queue, "counts": out})
	return nil
}

func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// claimed remembers the attempts of a claim and measures it.
func (s *Server) claimed(p drover.ClaimParams, jobs []*drover.JobRow, took time.Duration) {
	now := time.Now()
	attempts := make([]attemptInfo, len(jobs))
	runAts := make([]time.Time, len(jobs))
	for i, j := range jobs {
		a := attemptInfo{id: j.ID, attempt: j.Attempt, queue: j.Queue, kind: j.Kind, started: now, expires: now.Add(p.Lease)}
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
	s.inflight.claimed(p.Owner, p.Queue, attempts, now)
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
	for _, r := range results {
		a, known := s.inflight.finished(r.ID, r.Attempt)
		if !accepted[r.ID] {
			continue
		}
		s.metrics.observeResult(r.Outcome, a, known, now)
		if tp := s.cfg.TracerProvider; tp != nil && known {
			// The run happened in the worker; its span covers claim to
			// result, as the server saw it.
			_, span := drover.StartJobSpan(context.Background(), tp, &drover.JobRow{ID: r.ID, Kind: a.kind, Queue: a.queue,
				Attempt: r.Attempt, Metadata: a.metadata}, a.started)
			var err error
			if r.Outcome == drover.AttemptFailed {
				err = errors.New(cmp.Or(r.Error, "failed without a message"))
			}
			drover.EndJobSpan(span, string(r.Outcome), err, now)
		}
	}
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}
