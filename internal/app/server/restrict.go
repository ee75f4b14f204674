package server

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/droverhq/drover"
)

// This file enforces a token's restriction to queues (Token.Queues).
//
// What is checked where:
//   - enqueue and batch inserts: the queue of every job, the callback's
//     included, before anything is stored (403), and that every job it
//     depends on is one the token may see (400, as for a missing job),
//     and that its unique keys are held per queue (403);
//   - claim: the claimed queue (403);
//   - GET /v1/jobs: a restricted token must name one of its queues with
//     queue= (403 otherwise), so that a page never mixes in other queues;
//   - reads of one job (GET /v1/jobs/{id}, …/result): a job of another
//     queue answers 404 exactly as a missing one does, so that a
//     restricted token learns nothing of jobs it may not see, not even
//     that they exist;
//   - batch reads: a batch may span queues and the store keeps no list of
//     a batch's queues, so a restricted token gets 404 for every batch;
//   - the worker registry and the unroutable jobs (routing.go): only the
//     workers that work one of its queues, with their other queues left
//     out, and only the unroutable jobs of its queues.
//
// Finish and heartbeat are not checked: they act only on attempts whose
// lease token the caller presents, and only the claim of an attempt hands
// that token out, so a token can finish or extend only what it claimed,
// which the claim check already kept to its queues. Cancel, retry,
// discard, stats, metrics and the dashboard need admin, and admin tokens
// cannot be restricted (Token.Restrict).

// requestToken returns the token the request was authenticated with.
func requestToken(r *http.Request) *Token {
	tok, _ := r.Context().Value(tokenKey{}).(*Token)
	return tok
}

// restricted reports whether the request's token is limited to queues.
func restricted(r *http.Request) bool {
	tok := requestToken(r)
	return tok != nil && tok.Queues != nil
}

// checkQueue refuses, with 403, a queue the request's token may not use.
// An empty queue is the default queue, as the store reads it.
func checkQueue(r *http.Request, queue string) error {
	queue = cmp.Or(queue, drover.DefaultQueue)
	if tok := requestToken(r); tok != nil && !tok.AllowsQueue(queue) {
		return &apiError{status: http.StatusForbidden, msg: fmt.Sprintf("token %q may not use queue %q", tok.Name, queue)}
	}
	return nil
}

// checkJobs refuses the whole request when any of its jobs is in a queue
// the token may not use, so that nothing of it is stored. A restricted
// token's unique keys must be held per queue (unique_by_queue): a key held
// across queues would let it squat keys other queues' producers need, and
// learn from a skipped insert that another queue holds one. A restricted
// token's jobs may also depend only on jobs it may see: a dependant can
// read its parents' results, and whether an ID can be depended on would
// tell that the job exists. A parent it may not see is answered as a
// missing one (400, as the store answers a missing parent), before the
// store is asked, so that the two read the same.
func (s *Server) checkJobs(r *http.Request, jobs []enqueueJob) error {
	for _, j := range jobs {
		if err := checkQueue(r, j.Queue); err != nil {
			return err
		}
	}
	tok := requestToken(r)
	if tok == nil || tok.Queues == nil {
		return nil
	}
	for _, j := range jobs {
		if j.UniqueKey != "" && !j.UniqueByQueue {
			return &apiError{status: http.StatusForbidden, msg: fmt.Sprintf(
				"token %q is restricted to queues: a unique_key needs unique_by_queue, so that it is held in the job's queue only", tok.Name)}
		}
	}
	seen := map[int64]bool{}
	for _, j := range jobs {
		for _, id := range j.DependsOn {
			if seen[id] {
				continue
			}
			seen[id] = true
			job, err := s.cfg.Client.JobGet(r.Context(), id)
			if errors.Is(err, drover.ErrNotFound) || err == nil && !tok.AllowsQueue(job.Queue) {
				return badRequest("depends_on: job %d not found", id)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// checkListQueue makes a restricted token's job list name one of its
// queues: the store filters by one queue at most, and a page filtered
// after reading could come back empty however many jobs follow.
func checkListQueue(r *http.Request, queue string) error {
	tok := requestToken(r)
	if tok == nil || tok.Queues == nil {
		return nil
	}
	if queue == "" {
		return &apiError{status: http.StatusForbidden, msg: fmt.Sprintf(
			"token %q is restricted to queues: pass queue= naming one of them (%s)", tok.Name, strings.Join(tok.Queues, ", "))}
	}
	return checkQueue(r, queue)
}

// jobNotFound is the error of a job the token may not see, worded as the
// store words a missing job, so that the answer does not tell them apart.
func jobNotFound(id int64) error {
	return fmt.Errorf("job %d: %w", id, drover.ErrNotFound)
}

// batchNotFound is jobNotFound's counterpart for batches, worded as
// Client.BatchGet words a missing batch.
func batchNotFound(id int64) error {
	return &apiError{status: http.StatusNotFound, msg: fmt.Sprintf("batch %d not found", id)}
}
