package server

import (
	"context"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/jobjson"
)

// claimedJob is a job as a claim answers it: the job, and for a job that
// waits on others the IDs of those jobs and their results, which a Go
// handler reads with Job.ParentResults. Both are left out for jobs that
// depend on none.
type claimedJob struct {
	jobjson.Job
	DependsOn     []int64      `json:"depends_on,omitempty"`
	ParentResults []resultJSON `json:"parent_results,omitempty"`
}

// claimedJSON converts claimed jobs, reading the parents of those that
// have any (JobRow.HasParents) in one statement, so that a claim of plain
// jobs costs nothing more and one of dependants costs one read, however
// many it holds.
//
// When the read fails, the jobs are released (their attempts undone, as
// if never claimed) and the error returned: the worker could not run them
// as a Go worker would, and without the release they would wait out their
// leases.
func (s *Server) claimedJSON(ctx context.Context, jobs []*drovertype.JobRow) ([]claimedJob, error) {
	out := make([]claimedJob, len(jobs))
	for i, j := range jobs {
		out[i].Job = jobjson.From(j)
	}
	parents, err := s.cfg.Client.Remote().ParentResults(ctx, jobs)
	if err != nil {
		s.releaseClaimed(jobs)
		return nil, err
	}
	for i, j := range jobs {
		for _, r := range parents[j.ID] {
			c := &out[i]
			c.DependsOn = append(c.DependsOn, r.ID)
			c.ParentResults = append(c.ParentResults, resultFrom(r.ID, string(r.State), r.Kind, r.Result))
		}
	}
	return out, nil
}

// releaseClaimed gives back jobs a claim took but could not hand out (their
// parents could not be read, or they did not fit the answer's byte
// budget). It runs on a context of its own: the request's may be what
// failed.
func (s *Server) releaseClaimed(jobs []*drovertype.JobRow) {
	refs := make([]drover.AttemptRef, len(jobs))
	for i, j := range jobs {
		refs[i] = drover.AttemptRef{ID: j.ID, Attempt: j.Attempt, LeaseToken: j.LeaseToken}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.remote.Release(ctx, refs); err != nil {
		s.cfg.Logger.Warn("claim: could not release jobs it could not hand out; they return when their leases expire",
			"jobs", len(refs), "error", err)
		return
	}
	for _, r := range refs {
		s.inflight.finished(r.ID, r.Attempt)
	}
}
