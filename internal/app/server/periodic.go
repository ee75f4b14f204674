package server

import (
	"encoding/json"
	"net/http"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/app/jobjson"
)

// Periodic (cron) jobs: the definitions stored in the database and the Go
// entries their leader registered (drover.PeriodicJobSet), listed with
// their next and last run, created, changed, deleted, paused, resumed and
// triggered. Reads take a reader's scope and, with a token restricted to
// queues, show only the periodic jobs of those queues; changes take admin.

// periodicJSON is the body of a create or update: a drover.PeriodicDefinition,
// with name taken from the path on an update.
type periodicJSON struct {
	Name        string          `json:"name"`
	Schedule    string          `json:"schedule"`
	Kind        string          `json:"kind"`
	Args        json.RawMessage `json:"args"`
	Queue       string          `json:"queue"`
	Priority    int             `json:"priority"`
	MaxAttempts int             `json:"max_attempts"`
	Tags        []string        `json:"tags"`
}

func (p periodicJSON) definition() (drover.PeriodicDefinition, error) {
	if p.Schedule == "" {
		return drover.PeriodicDefinition{}, badRequest("schedule: required (a cron expression such as \"*/5 * * * *\" or \"@every 1h\")")
	}
	if p.Kind == "" {
		return drover.PeriodicDefinition{}, badRequest("kind: required")
	}
	if len(p.Args) > 0 {
		if k := jsonKind(p.Args); k != "an object" {
			return drover.PeriodicDefinition{}, badRequest("args: must be a JSON object, got %s", k)
		}
	}
	return drover.PeriodicDefinition{Name: p.Name, Schedule: p.Schedule, Kind: p.Kind, Args: p.Args, Queue: p.Queue,
		Priority: p.Priority, MaxAttempts: p.MaxAttempts, Tags: p.Tags}, nil
}

func (s *Server) listPeriodic(w http.ResponseWriter, r *http.Request) error {
	all, err := s.cfg.Client.PeriodicJobs().List(r.Context())
	if err != nil {
		return err
	}
	tok := requestToken(r)
	out := make([]*drover.PeriodicJobStatus, 0, len(all))
	for _, p := range all {
		if tok == nil || tok.AllowsQueue(p.Queue) {
			out = append(out, p)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"periodic_jobs": out})
	return nil
}

func (s *Server) getPeriodic(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	p, err := s.cfg.Client.PeriodicJobs().Get(r.Context(), name)
	if err != nil {
		return err
	}
	if tok := requestToken(r); tok != nil && !tok.AllowsQueue(p.Queue) {
		return &apiError{status: http.StatusNotFound, msg: drover.ErrPeriodicNotFound.Error() + `: "` + name + `"`}
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) createPeriodic(w http.ResponseWriter, r *http.Request) error {
	var req periodicJSON
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Name == "" {
		return badRequest("name: required")
	}
	d, err := req.definition()
	if err != nil {
		return err
	}
	p, err := s.cfg.Client.PeriodicJobs().Create(r.Context(), d)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, p)
	return nil
}

func (s *Server) updatePeriodic(w http.ResponseWriter, r *http.Request) error {
	var req periodicJSON
	if err := decode(r, &req); err != nil {
		return err
	}
	name := r.PathValue("name")
	if req.Name != "" && req.Name != name {
		return badRequest("name: %q differs from the path's %q (a periodic job cannot be renamed)", req.Name, name)
	}
	req.Name = name
	d, err := req.definition()
	if err != nil {
		return err
	}
	p, err := s.cfg.Client.PeriodicJobs().Update(r.Context(), d)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) deletePeriodic(w http.ResponseWriter, r *http.Request) error {
	if err := s.cfg.Client.PeriodicJobs().Delete(r.Context(), r.PathValue("name")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) pausePeriodic(w http.ResponseWriter, r *http.Request) error {
	p, err := s.cfg.Client.PeriodicJobs().Pause(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *Server) resumePeriodic(w http.ResponseWriter, r *http.Request) error {
	p, err := s.cfg.Client.PeriodicJobs().Resume(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// triggerPeriodic inserts one job of the periodic job now and answers it.
func (s *Server) triggerPeriodic(w http.ResponseWriter, r *http.Request) error {
	job, err := s.cfg.Client.PeriodicJobs().Trigger(s.traceContext(r), r.PathValue("name"))
	if err != nil {
		return err
	}
	s.metrics.observeInserted(job.Queue, job.Kind)
	writeJSON(w, http.StatusCreated, jobjson.From(job))
	return nil
}
