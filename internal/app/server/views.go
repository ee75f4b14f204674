package server

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/jobjson"
)

// The reads behind the dashboard's views of batches and workflows, as API
// endpoints: a page of batches with their progress, and the graph of the
// workflow a job belongs to.

// listBatches answers a page of batches, newest first: a keyset page of
// the batches table (before= the last ID of the previous page).
func (s *Server) listBatches(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for key := range q {
		if key != "before" && key != "limit" {
			return badRequest("query parameter %q: unknown (use before, limit)", key)
		}
	}
	var before int64
	limit := 50
	var err error
	if q.Has("before") {
		v := q.Get("before")
		if before, err = strconv.ParseInt(v, 10, 64); err != nil || before < 0 {
			return badRequest("before %q: must be a batch id (a non-negative integer)", v)
		}
	}
	if q.Has("limit") {
		v := q.Get("limit")
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > 1000 {
			return badRequest("limit %q: must be an integer from 1 to 1000", v)
		}
	}
	if restricted(r) {
		return &apiError{status: http.StatusForbidden, msg: fmt.Sprintf(
			"token %q is restricted to queues, and batches span queues", requestToken(r).Name)}
	}
	batches, err := s.cfg.Client.BatchList(r.Context(), before, limit)
	if err != nil {
		return err
	}
	out := make([]jobjson.Batch, len(batches))
	for i, b := range batches {
		out[i] = jobjson.FromBatch(b)
	}
	resp := map[string]any{"batches": out, "next_before": nil}
	if len(batches) == limit {
		resp["next_before"] = batches[len(batches)-1].ID
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// workflowJSON is the graph of a workflow.
type workflowJSON struct {
	Jobs      []workflowJobJSON `json:"jobs"`
	Edges     []edgeJSON        `json:"edges"`
	Truncated bool              `json:"truncated"`
}

// workflowJobJSON is one job of a workflow's graph. ResultOmitted says its
// result was left out to keep the answer within the byte budget
// (Config.MaxPageBytes); GET /v1/jobs/{id}/result reads it.
type workflowJobJSON struct {
	resultJSON
	ResultOmitted bool `json:"result_omitted,omitempty"`
}

type edgeJSON struct {
	Parent int64 `json:"parent"`
	Child  int64 `json:"child"`
}

// jobWorkflow answers the workflow job id belongs to: its jobs with their
// states and results, and the edges between them.
func (s *Server) jobWorkflow(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	if restricted(r) {
		// A workflow's jobs may lie in any queue.
		return jobNotFound(id)
	}
	g, err := s.cfg.Client.WorkflowGraph(r.Context(), id)
	if err != nil {
		return err
	}
	out := workflowJSON{Jobs: make([]workflowJobJSON, len(g.Jobs)), Edges: make([]edgeJSON, len(g.Edges)), Truncated: g.Truncated}
	budget := &byteBudget{left: s.cfg.MaxPageBytes}
	for i, e := range g.Edges {
		out.Edges[i] = edgeJSON{e.Parent, e.Child}
	}
	budget.take(out.Edges)
	// The graph's shape (every job and edge, at most MaxWorkflowGraph
	// jobs) is always answered; results go in while they fit.
	for i, j := range g.Jobs {
		job := workflowJobJSON{resultJSON: resultFrom(j.ID, string(j.State), j.Kind, nil)}
		budget.take(job)
		out.Jobs[i] = job
	}
	for i, j := range g.Jobs {
		if len(j.Result) == 0 {
			continue
		}
		if !budget.take(json.RawMessage(j.Result)) {
			out.Jobs[i].ResultOmitted = true
			continue
		}
		out.Jobs[i].Result = j.Result
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// workflowPage draws the workflow job id belongs to (graph.go) and lists
// its steps.
func (s *Server) workflowPage(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	g, err := s.cfg.Client.WorkflowGraph(r.Context(), id)
	if err != nil {
		return err
	}
	layout := layoutGraph(g, id)
	counts := map[drovertype.JobState]int{}
	for _, j := range g.Jobs {
		counts[j.State]++
	}
	var summary []string
	for _, st := range drovertype.JobStates() {
		if counts[st] > 0 {
			summary = append(summary, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	return render(w, http.StatusOK, s.pages.workflow, struct {
		page
		ID      int64
		Graph   *drover.WorkflowGraph
		Layout  graphLayout
		SVG     template.HTML
		Summary string
	}{s.page(fmt.Sprintf("Workflow of job %d", id), ""), id, g, layout, layout.svg(), strings.Join(summary, ", ")})
}

// batchesPage lists batches newest first with their progress, a keyset
// page at a time (before=).
func (s *Server) batchesPage(w http.ResponseWriter, r *http.Request) error {
	var before int64
	if v := r.URL.Query().Get("before"); v != "" {
		var err error
		if before, err = strconv.ParseInt(v, 10, 64); err != nil || before < 0 {
			return badRequest("before %q: must be a batch id", v)
		}
	}
	const pageSize = 50
	batches, err := s.cfg.Client.BatchList(r.Context(), before, pageSize)
	if err != nil {
		return err
	}
	type row struct {
		*drovertype.Batch
		Ended int64
	}
	rows := make([]row, len(batches))
	for i, b := range batches {
		rows[i] = row{b, b.Completed + b.Cancelled + b.Discarded}
	}
	var next int64
	if len(batches) == pageSize {
		next = batches[len(batches)-1].ID
	}
	return render(w, http.StatusOK, s.pages.batches, struct {
		page
		Batches []row
		Next    int64
	}{s.page("Batches", ""), rows, next})
}
