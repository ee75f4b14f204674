package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/droverhq/drover"
)

// The dashboard's periodic (cron) jobs: every stored definition and Go
// entry with its schedule, next and last run and a link to the jobs it
// inserted (found by their metadata), paused, resumed or triggered from
// the page.

func (s *Server) periodicPage(w http.ResponseWriter, r *http.Request) error {
	all, err := s.cfg.Client.PeriodicJobs().List(r.Context())
	if err != nil {
		return err
	}
	type row struct {
		*drover.PeriodicJobStatus
		// Jobs is the jobs page searching the jobs this periodic job
		// inserted, newest first.
		Jobs string
	}
	rows := make([]row, len(all))
	for i, p := range all {
		meta := fmt.Sprintf(`{"periodic":%q}`, p.Name)
		rows[i] = row{p, "/ui/jobs?" + url.Values{"metadata": {meta}, "order": {"desc"}}.Encode()}
	}
	return render(w, http.StatusOK, s.pages.periodic, struct {
		page
		Periodic []row
		Now      time.Time
	}{page{Title: "Periodic jobs", Flash: periodicFlash(r.URL.Query(), all)}, rows, time.Now()})
}

// periodicAction pauses, resumes or triggers the periodic job the path
// names, then shows the periodic page again, whose banner says what was
// done (periodicFlash).
func (s *Server) periodicAction(action string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		name := r.PathValue("name")
		set := s.cfg.Client.PeriodicJobs()
		v := url.Values{"done": {action}, "name": {name}}
		var err error
		switch action {
		case "pause":
			_, err = set.Pause(r.Context(), name)
		case "resume":
			_, err = set.Resume(r.Context(), name)
		case "trigger":
			var job *drover.JobRow
			job, err = set.Trigger(context.WithoutCancel(r.Context()), name)
			if err == nil {
				s.metrics.observeInserted(job.Queue, job.Kind)
				v.Set("job", strconv.FormatInt(job.ID, 10))
			}
		}
		if err != nil {
			return err
		}
		http.Redirect(w, r, "/ui/periodic?"+v.Encode(), http.StatusSeeOther)
		return nil
	}
}

// periodicFlash is the banner after an action on a periodic job: made of
// the server's own words, a name that is one of the periodic jobs listed,
// and a job ID parsed as a number, never of other text from the URL.
func periodicFlash(q url.Values, all []*drover.PeriodicJobStatus) string {
	name := q.Get("name")
	known := false
	for _, p := range all {
		known = known || p.Name == name
	}
	if !known {
		return ""
	}
	switch q.Get("done") {
	case "pause":
		return fmt.Sprintf("Periodic job %s paused: it inserts nothing until resumed.", name)
	case "resume":
		return fmt.Sprintf("Periodic job %s resumed.", name)
	case "trigger":
		if id, err := strconv.ParseInt(q.Get("job"), 10, 64); err == nil && id > 0 {
			return fmt.Sprintf("Periodic job %s triggered: job %d inserted.", name, id)
		}
	}
	return ""
}
