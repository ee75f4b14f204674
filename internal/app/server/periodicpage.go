package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/validate"
)

// The dashboard's periodic (cron) jobs: every stored definition and Go
// entry with its schedule, next and last run and a link to the jobs it
// inserted (found by their metadata), paused, resumed or triggered from
// the page; definitions stored through the API (or this page) are also
// created, edited and deleted here, with the API's checks (periodicJSON).

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
	queues, kinds := s.knownNames(r.Context())
	return render(w, http.StatusOK, s.pages.periodic, struct {
		page
		Periodic      []row
		Now           time.Time
		Queues, Kinds []string
	}{s.page("Periodic jobs", periodicFlash(r.URL.Query(), all)), rows, time.Now(), queues, kinds})
}

// periodicForm reads a periodic job's definition from the page's form, as
// the API reads its JSON body (periodicJSON), named name: args is JSON
// text, tags a comma-separated list, and empty numbers take the defaults.
func periodicForm(r *http.Request, name string) (drover.PeriodicDefinition, error) {
	req := periodicJSON{Name: name, Schedule: strings.TrimSpace(r.PostFormValue("schedule")),
		Kind: strings.TrimSpace(r.PostFormValue("kind")), Queue: strings.TrimSpace(r.PostFormValue("queue"))}
	if args := strings.TrimSpace(r.PostFormValue("args")); args != "" {
		if !json.Valid([]byte(args)) {
			return drover.PeriodicDefinition{}, badRequest("args: not JSON: %.60q", args)
		}
		req.Args = json.RawMessage(args)
	}
	var err error
	if req.Priority, err = formInt(r, "priority"); err != nil {
		return drover.PeriodicDefinition{}, err
	}
	if req.MaxAttempts, err = formInt(r, "max_attempts"); err != nil {
		return drover.PeriodicDefinition{}, err
	}
	for _, t := range strings.Split(r.PostFormValue("tags"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			req.Tags = append(req.Tags, t)
		}
	}
	return req.definition()
}

// periodicCreate stores the periodic job the page's form defines, then
// shows the page again with its banner.
func (s *Server) periodicCreate(w http.ResponseWriter, r *http.Request) error {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if name == "" {
		return badRequest("name: required")
	}
	d, err := periodicForm(r, name)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Client.PeriodicJobs().Create(r.Context(), d); err != nil {
		return err
	}
	http.Redirect(w, r, "/ui/periodic?"+url.Values{"done": {"create"}, "name": {name}}.Encode(), http.StatusSeeOther)
	return nil
}

// periodicUpdate replaces the definition of the periodic job the path
// names with the page's form, then shows the page again with its banner.
func (s *Server) periodicUpdate(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	d, err := periodicForm(r, name)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Client.PeriodicJobs().Update(r.Context(), d); err != nil {
		return err
	}
	http.Redirect(w, r, "/ui/periodic?"+url.Values{"done": {"update"}, "name": {name}}.Encode(), http.StatusSeeOther)
	return nil
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
		case "delete":
			err = set.Delete(r.Context(), name)
		case "trigger":
			var job *drovertype.JobRow
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
	// A deleted job is listed no more; its name is shown if it is one a
	// stored periodic job could have (a queue name's characters).
	if q.Get("done") == "delete" && !known && validate.Queue(name) == nil {
		return fmt.Sprintf("Periodic job %s deleted: it inserts no more jobs; those it inserted stay.", name)
	}
	if !known {
		return ""
	}
	switch q.Get("done") {
	case "create":
		return fmt.Sprintf("Periodic job %s created.", name)
	case "update":
		return fmt.Sprintf("Periodic job %s saved.", name)
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
