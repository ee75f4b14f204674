package server

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/droverhq/drover"
)

// workflowStep is one step of a workflow request: a job, the name other
// steps of the request know it by, and the steps it comes after.
type workflowStep struct {
	enqueueJob
	// Ref names the step for the After of other steps of the request;
	// unique within the request.
	Ref string `json:"ref"`
	// After names steps of the same request (by Ref) that must complete
	// before this one runs; DependsOn names stored jobs the same way.
	After []string `json:"after"`
	// ReleaseOnParentFailure runs the step when a job it waits for is
	// cancelled or discarded, instead of cancelling it too
	// (InsertOpts.ReleaseOnParentFailure).
	ReleaseOnParentFailure bool `json:"release_on_parent_failure"`
}

// maxRefLen bounds a step's ref, which is only an echo of the request.
const maxRefLen = 255

// insertWorkflow stores the steps of a workflow in one transaction through
// Client.InsertWorkflow: all or none, and never a step that could wait on
// a step that was not stored. Steps may be given in any order; they are
// stored in an order where each comes after the steps it names (a cycle
// is refused), and the answer gives the IDs in the order of the request.
func (s *Server) insertWorkflow(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Steps []workflowStep `json:"steps"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	jobs := make([]enqueueJob, len(req.Steps))
	for i, st := range req.Steps {
		jobs[i] = st.enqueueJob
	}
	params, err := s.insertParams("steps", jobs)
	if err != nil {
		return err
	}
	order, err := stepOrder(req.Steps)
	if err != nil {
		return err
	}
	for i, st := range req.Steps {
		if st.ReleaseOnParentFailure {
			params[i].Opts.ReleaseOnParentFailure = true
		}
	}
	if err := s.checkJobs(r, jobs); err != nil {
		return err
	}
	wf := drover.NewWorkflow()
	added := make([]drover.Step, len(req.Steps))
	index := refIndex(req.Steps)
	for _, i := range order {
		after := make([]drover.Step, len(req.Steps[i].After))
		for k, ref := range req.Steps[i].After {
			after[k] = added[index[ref]]
		}
		added[i] = wf.Add(params[i].Args, params[i].Opts, after...)
	}
	stored, err := s.cfg.Client.InsertWorkflow(s.traceContext(r), wf)
	if err != nil {
		return err
	}
	ids := make([]int64, len(req.Steps))
	refs := make(map[string]int64, len(req.Steps))
	for i, st := range req.Steps {
		ids[i] = stored[added[i].Index()]
		if st.Ref != "" {
			refs[st.Ref] = ids[i]
		}
	}
	s.countInserted(jobs)
	writeJSON(w, http.StatusCreated, map[string]any{"ids": ids, "refs": refs})
	return nil
}

func refIndex(steps []workflowStep) map[string]int {
	index := make(map[string]int, len(steps))
	for i, st := range steps {
		if st.Ref != "" {
			index[st.Ref] = i
		}
	}
	return index
}

// stepOrder checks the refs of a workflow request and returns the steps'
// positions in an order where every step comes after the steps it names:
// the request's own order wherever it allows, so that steps without
// dependencies keep it.
func stepOrder(steps []workflowStep) ([]int, error) {
	index := make(map[string]int, len(steps))
	for i, st := range steps {
		if st.Ref == "" {
			continue
		}
		if len(st.Ref) > maxRefLen || strings.ContainsRune(st.Ref, 0) {
			return nil, badRequest("steps[%d].ref: at most %d bytes, without NUL", i, maxRefLen)
		}
		if j, dup := index[st.Ref]; dup {
			return nil, badRequest("steps[%d].ref %q: already names steps[%d]; refs must be unique", i, st.Ref, j)
		}
		index[st.Ref] = i
	}
	waiting := make([]int, len(steps))    // unplaced steps each step names
	children := make([][]int, len(steps)) // the steps naming each step
	for i, st := range steps {
		seen := make(map[int]bool, len(st.After))
		for _, ref := range st.After {
			j, ok := index[ref]
			switch {
			case !ok:
				return nil, badRequest("steps[%d].after: %q names no step of this request (give each step a ref)", i, ref)
			case j == i:
				return nil, badRequest("steps[%d].after: %q is the step itself", i, ref)
			case seen[j]:
				continue
			}
			seen[j] = true
			waiting[i]++
			children[j] = append(children[j], i)
		}
	}
	order := make([]int, 0, len(steps))
	placed := make([]bool, len(steps))
	// Repeated passes in request order keep the request's order among
	// steps that are free to go; a workflow is small (MaxBatch steps), so
	// the quadratic worst case does not matter.
	for len(order) < len(steps) {
		progress := false
		for i := range steps {
			if placed[i] || waiting[i] > 0 {
				continue
			}
			placed[i], progress = true, true
			order = append(order, i)
			for _, c := range children[i] {
				waiting[c]--
			}
		}
		if !progress {
			var cycle []string
			for i, st := range steps {
				if !placed[i] {
					cycle = append(cycle, fmt.Sprintf("steps[%d] (%q)", i, st.Ref))
				}
			}
			return nil, badRequest("steps: %s wait for each other in a cycle", strings.Join(cycle, ", "))
		}
	}
	return order, nil
}
