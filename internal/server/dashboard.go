package server

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
)

// The dashboard is server-rendered HTML with one small script for the live
// charts; every asset is embedded in the binary, so it works with no
// network beyond the server. No page counts the whole jobs table: the
// queue figures come from the sampler, and job lists are keyset pages.

//go:embed ui
var uiFiles embed.FS

// pages are the parsed templates.
type pages struct {
	login, overview, jobs, job, batch, topics, workers, errorPage *template.Template
	workflow, batches, periodic, lanes                            *template.Template
}

var funcs = template.FuncMap{
	"join": func(s []string) string {
		if len(s) == 0 {
			return "-"
		}
		return strings.Join(s, ", ")
	},
	"ms": func(d time.Duration) string {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
	},
	"rate":       func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	"thousands":  thousands,
	"timeFields": func() []string { return []string{"created", "scheduled", "attempted", "finished"} },
	"stateNames": func() []string { return jobStates },
	// waitsFor lists the IDs the step id waits for in g.
	"waitsFor": func(g *drover.WorkflowGraph, id int64) string {
		var ps []string
		for _, e := range g.Edges {
			if e.Child == id {
				ps = append(ps, strconv.FormatInt(e.Parent, 10))
			}
		}
		if len(ps) == 0 {
			return "-"
		}
		return strings.Join(ps, ", ")
	},
	"until": func(t, now time.Time) string {
		d := t.Sub(now).Round(time.Second)
		if d < 0 {
			return (-d).String() + " ago"
		}
		return "in " + d.String()
	},
	"age": func(t *time.Time, now time.Time) string {
		if t == nil {
			return "-"
		}
		return max(now.Sub(*t), 0).Round(time.Second).String()
	},
	"timePtr": func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Format("2006-01-02 15:04:05.000")
	},
	"pretty": func(raw json.RawMessage) string {
		var b bytes.Buffer
		if len(raw) == 0 || json.Indent(&b, raw, "", "  ") != nil {
			return string(raw)
		}
		return b.String()
	},
	"can": jobCan,
	"labels": func(m map[string]string) string {
		if len(m) == 0 {
			return "-"
		}
		keys := slices.Sorted(maps.Keys(m))
		for i, k := range keys {
			keys[i] = k + "=" + m[k]
		}
		return strings.Join(keys, ", ")
	},
	"lastError": func(j *drover.JobRow) string {
		if len(j.Errors) == 0 {
			return "-"
		}
		msg := j.Errors[len(j.Errors)-1].Error
		if r := []rune(msg); len(r) > 80 {
			msg = string(r[:79]) + "…"
		}
		return msg
	},
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func newPages() *pages {
	parse := func(name string) *template.Template {
		return template.Must(template.New(name).Funcs(funcs).ParseFS(uiFiles, "ui/layout.html", "ui/"+name))
	}
	return &pages{
		login:     template.Must(template.New("login.html").ParseFS(uiFiles, "ui/login.html")),
		overview:  parse("overview.html"),
		jobs:      parse("jobs.html"),
		job:       parse("job.html"),
		batch:     parse("batch.html"),
		topics:    parse("topics.html"),
		lanes:     parse("lanes.html"),
		workflow:  parse("workflow.html"),
		batches:   parse("batches.html"),
		periodic:  parse("periodic.html"),
		workers:   parse("workers.html"),
		errorPage: parse("error.html"),
	}
}

// page is what every page template gets.
type page struct {
	Title   string
	Flash   string
	Message string
	// Refresh reloads the page every second, while a bulk task it follows
	// runs.
	Refresh bool
}

// render writes a page, or a plain error if the template fails (a bug,
// since templates are parsed at start).
func render(w http.ResponseWriter, status int, t *template.Template, data any) error {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	_, err := w.Write(b.Bytes())
	return err
}

// htmlRoutes are the dashboard's pages and actions, all admin only.
func (s *Server) htmlRoutes() map[string]func(w http.ResponseWriter, r *http.Request) error {
	return map[string]func(w http.ResponseWriter, r *http.Request) error{
		"GET /{$}":                           s.overviewPage,
		"GET /ui/jobs":                       s.jobsPage,
		"GET /ui/topics":                     s.topicsPage,
		"GET /ui/topics/{topic}/{name}":      s.lanesPage,
		"GET /ui/workers":                    s.workersPage,
		"GET /ui/jobs/find":                  findByID("job", "/ui/jobs"),
		"GET /ui/jobs/{id}":                  s.jobPage,
		"GET /ui/batches/find":               findByID("batch", "/ui/batches"),
		"GET /ui/batches/{id}":               s.batchPage,
		"GET /ui/batches":                    s.batchesPage,
		"GET /ui/jobs/{id}/workflow":         s.workflowPage,
		"GET /ui/periodic":                   s.periodicPage,
		"POST /ui/periodic/{name}/pause":     s.periodicAction("pause"),
		"POST /ui/periodic/{name}/resume":    s.periodicAction("resume"),
		"POST /ui/periodic/{name}/trigger":   s.periodicAction("trigger"),
		"POST /ui/jobs/{id}/retry":           s.jobAction(s.cfg.Client.JobRetry, "retry"),
		"POST /ui/jobs/{id}/cancel":          s.jobAction(s.cfg.Client.JobCancel, "cancel"),
		"POST /ui/jobs/{id}/discard":         s.jobAction(s.cfg.Client.JobDiscard, "discard"),
		"POST /ui/bulk":                      s.bulk,
		"POST /ui/queues/{name}/pause":       s.queueAction(s.cfg.Client.QueuePause, "pause"),
		"POST /ui/queues/{name}/resume":      s.queueAction(s.cfg.Client.QueueResume, "resume"),
		"POST /ui/queues/{name}/pause-kind":  s.kindAction(s.cfg.Client.QueuePauseKind, "pause-kind"),
		"POST /ui/queues/{name}/resume-kind": s.kindAction(s.cfg.Client.QueueResumeKind, "resume-kind"),
		"GET /ui/history.json":               s.historyJSON,
	}
}

// htmlEndpoint renders a handler's error as an error page rather than
// JSON, since a person reads it.
func (s *Server) htmlEndpoint(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.Context().Value(tokenKey{}).(*Token)
		if !tok.Allows(ScopeAdmin) {
			_ = render(w, http.StatusForbidden, s.pages.errorPage, page{Title: "Forbidden",
				Message: fmt.Sprintf("token %q lacks the scope for the dashboard (needs admin)", tok.Name)})
			return
		}
		if r.Method == http.MethodPost && !sameOrigin(r) {
			_ = render(w, http.StatusForbidden, s.pages.errorPage, page{Title: "Forbidden",
				Message: "cross-site request refused: the Origin header does not match this server"})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		if err := h(w, r); err != nil {
			status, msg := s.classify(w, r, err)
			_ = render(w, status, s.pages.errorPage, page{Title: http.StatusText(status), Message: msg})
		}
	})
}

// sameOrigin refuses cross-site form posts that ride on the session
// cookie. Requests with a bearer header cannot be forged by another site,
// so only cookie sessions are checked.
func sameOrigin(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		origin = r.Header.Get("Referer")
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) error {
	return render(w, http.StatusOK, s.pages.login, "")
}

// login checks a token typed into the form and starts a session for it.
// The cookie holds only the session's random ID, HttpOnly and
// SameSite=Strict, so that scripts cannot read it and other sites cannot
// send it; the token stays on the server, so a stolen cookie dies with
// its session (logout, expiry, or the token's revocation) and never
// reveals the token.
func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	secret := strings.TrimSpace(r.PostFormValue("token"))
	tok, err := s.auth.Load().lookup(secret)
	if err == nil && !tok.Allows(ScopeAdmin) {
		err = fmt.Errorf("token %q lacks the admin scope the dashboard needs", tok.Name)
	}
	if err != nil {
		return render(w, http.StatusUnauthorized, s.pages.login, err.Error())
	}
	id, err := s.sessions.create(tok.Hash, time.Now())
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true,
		MaxAge: int(s.cfg.SessionTTL.Seconds()), SameSite: http.SameSiteStrictMode, Secure: s.secureCookie(r)})
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return nil
}

// secureCookie reports whether the browser reaches this server over
// HTTPS: the server serves TLS itself, or the operator said a proxy in
// front does (Config.SecureCookies).
func (s *Server) secureCookie(r *http.Request) bool {
	return r.TLS != nil || s.cfg.SecureCookies
}

// logout ends the session on the server, not only in the browser, so that
// a copy of the cookie taken before is worthless after. Like every
// dashboard post it must come from the dashboard's own origin: another
// site must not be able to log a person out either.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	if !sameOrigin(r) {
		return render(w, http.StatusForbidden, s.pages.errorPage, page{Title: "Forbidden",
			Message: "cross-site request refused: the Origin header does not match this server"})
	}
	if c, err := r.Cookie(sessionCookie); err == nil && c.Value != "" {
		s.sessions.end(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: s.secureCookie(r)})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
	return nil
}

func (s *Server) static() http.Handler {
	sub, _ := fs.Sub(uiFiles, "ui")
	files := http.FileServerFS(sub)
	return http.StripPrefix("/ui/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, ".css") && !strings.HasSuffix(r.URL.Path, ".js") {
			writeError(w, http.StatusNotFound, "no such asset: "+r.URL.Path)
			return
		}
		files.ServeHTTP(w, r)
	}))
}

// queueRow is one line of the overview: a queue's waiting and running
// jobs, and its throughput and latency over the last sample's window.
type queueRow struct {
	drover.QueueStats
	PerSecond float64
	Finished  drover.FinishedStats
	// Paused and PausedKinds are the queue's stored settings, read when
	// the page is.
	Paused      bool
	PausedKinds []string
}

// queueRows joins a sample's two lists by queue: a queue that has nothing
// waiting but finished jobs in the window is busy, and is shown too. Queues
// with stored settings are shown whatever their figures, so that a paused
// queue can be resumed from the page.
func queueRows(p Point, settings []*drover.QueueSettings) []queueRow {
	byName := map[string]*queueRow{}
	var rows []*queueRow
	row := func(q string) *queueRow {
		if r, ok := byName[q]; ok {
			return r
		}
		r := &queueRow{QueueStats: drover.QueueStats{Queue: q}}
		byName[q] = r
		rows = append(rows, r)
		return r
	}
	for _, q := range p.Queues {
		row(q.Queue).QueueStats = q
	}
	for _, q := range settings {
		r := row(q.Name)
		r.Paused, r.PausedKinds = q.Paused, q.PausedKinds
	}
	for _, f := range p.Finished {
		r := row(f.Queue)
		r.Finished = f
		if p.Seconds > 0 {
			r.PerSecond = float64(f.Completed) / p.Seconds
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Queue < rows[j].Queue })
	out := make([]queueRow, len(rows))
	for i, r := range rows {
		out[i] = *r
	}
	return out
}

func (s *Server) overviewPage(w http.ResponseWriter, r *http.Request) error {
	p, _ := s.history.latest()
	// One read of the small settings table per page view; the figures
	// come from the sample.
	settings, err := s.cfg.Client.QueueList(r.Context())
	if err != nil {
		return err
	}
	return render(w, http.StatusOK, s.pages.overview, struct {
		page
		Queues     []queueRow
		Sampled    time.Time
		Interval   time.Duration
		IntervalMS int64
		Owners     []drover.LeaseOwner
		Workers    []WorkerInfo
	}{page{Title: "Queues", Flash: queueFlash(r.URL.Query())}, queueRows(p, settings), p.At, s.cfg.SampleInterval, s.cfg.SampleInterval.Milliseconds(), p.Owners,
		s.inflight.workerList()})
}

func (s *Server) historyJSON(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, s.history.snapshot())
	return nil
}

// jobFilter is the filter of the jobs page and of bulk actions.
type jobFilter struct {
	State, Queue, Kind string
}

func (f jobFilter) params() (drover.JobListParams, error) {
	p := drover.JobListParams{Queue: f.Queue, Kind: f.Kind}
	if f.State != "" {
		p.States = []drover.JobState{drover.JobState(f.State)}
	}
	if f.Queue != "" {
		if err := drover.ValidateQueue(f.Queue); err != nil {
			return p, err
		}
	}
	return p, nil
}

// jobStates are the states in the order of a job's life, for the filter
// of the jobs page and the counts of /v1/stats.
var jobStates = func() []string {
	var out []string
	for _, s := range drover.JobStates() {
		out = append(out, string(s))
	}
	return out
}()

const jobsPageSize = 50

// jobsForm is the jobs page's filter as its form shows it: the query
// jobQuery reads, with times as a datetime-local input takes them (UTC).
type jobsForm struct {
	url.Values
}

// Time returns the value of the time parameter name for a datetime-local
// input, in UTC.
func (f jobsForm) Time(name string) string {
	v := f.Get(name)
	if v == "" {
		return ""
	}
	t, err := parseQueryTime(v)
	if err != nil {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05")
}

// bulkable reports whether the filter uses only what bulk actions take
// (state, queue, kind), so that "every job of this filter" means what
// the page shows.
func (f jobsForm) bulkable() bool {
	for key, v := range f.Values {
		switch key {
		case "state", "queue", "kind", "order", "after", "task":
		default:
			if strings.Join(v, "") != "" {
				return false
			}
		}
	}
	return !strings.Contains(f.Get("state"), ",")
}

// jobsPage searches jobs with the API's filter (jobQuery), newest first
// unless the form asks otherwise, a page of jobsPageSize examining at most
// a scan's worth of IDs, and says how many jobs match (Client.JobCount,
// exact or estimated).
func (s *Server) jobsPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if !q.Has("order") {
		q.Set("order", "desc")
	}
	p, err := jobQuery(q)
	if err != nil {
		return err
	}
	count, err := s.cfg.Client.JobCount(r.Context(), p)
	if err != nil {
		return err
	}
	// The page shows no args or metadata, so the rows it keeps drop
	// them as they are read, a chunk at a time: fifty jobs of 1 MiB
	// args would otherwise be held whole to show their IDs and states.
	var jobs []*drover.JobRow
	sc := newSearchChunks(s.cfg.Client, p, jobsPageSize)
	for !sc.done() {
		chunk, err := sc.next(r.Context())
		if err != nil {
			return err
		}
		for _, j := range chunk {
			j.EncodedArgs, j.Metadata = nil, nil
			jobs = append(jobs, j)
		}
	}
	next := ""
	if sc.cursor != 0 {
		v := queryValues(p)
		v.Set("after", strconv.FormatInt(sc.cursor, 10))
		next = "/ui/jobs?" + v.Encode()
	}
	form := jobsForm{queryValues(p)}
	f := jobFilter{State: q.Get("state"), Queue: p.Queue, Kind: p.Kind}
	flash, running := s.bulkStatus(q)
	return render(w, http.StatusOK, s.pages.jobs, struct {
		page
		Form     jobsForm
		Filter   jobFilter
		Bulkable bool
		States   []string
		Jobs     []*drover.JobRow
		Count    drover.JobCount
		Next     string
		// Short is set when the page ended at its scan bound before it
		// was full: the next page goes on searching.
		Short   bool
		Scanned int64
	}{page{Title: "Jobs", Flash: flash, Refresh: running}, form, f, form.bulkable(), jobStates, jobs, count, next,
		len(jobs) < jobsPageSize && next != "", sc.scanned})
}

// findByID redirects the dashboard's "open by id" forms to the page of the
// job or batch (what) whose ID was typed, under pathPrefix.
func findByID(what, pathPrefix string) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := parseID(what, strings.TrimSpace(r.URL.Query().Get("id")))
		if err != nil {
			return err
		}
		http.Redirect(w, r, fmt.Sprintf("%s/%d", pathPrefix, id), http.StatusSeeOther)
		return nil
	}
}

func (s *Server) jobPage(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	job, err := s.cfg.Client.JobGet(r.Context(), id)
	if err != nil {
		return err
	}
	result, err := s.cfg.Client.JobResult(r.Context(), id)
	if err != nil {
		return err
	}
	parents, err := s.cfg.Client.JobParentResults(r.Context(), id)
	if err != nil {
		return err
	}
	dependants, err := s.cfg.Client.JobDependants(r.Context(), id)
	if err != nil {
		return err
	}
	return render(w, http.StatusOK, s.pages.job, struct {
		page
		Job        *drover.JobRow
		Result     *drover.JobResult
		Parents    []drover.JobResult
		Dependants []drover.JobResult
	}{page{Title: fmt.Sprintf("Job %d", id), Flash: jobFlash(r.URL.Query().Get("done"), job)}, job, result, parents, dependants})
}

// batchPage shows a batch's progress from its counters, never a count
// over its jobs, and one page of its ended members' results.
func (s *Server) batchPage(w http.ResponseWriter, r *http.Request) error {
	id, err := batchPathID(r)
	if err != nil {
		return err
	}
	b, err := s.cfg.Client.BatchGet(r.Context(), id)
	if err != nil {
		return err
	}
	p := droverdriver.BatchResultsParams{BatchID: id, Limit: 100}
	if v := r.URL.Query().Get("after"); v != "" {
		if p.AfterID, err = strconv.ParseInt(v, 10, 64); err != nil || p.AfterID < 0 {
			return badRequest("after %q: must be a job id (a non-negative integer)", v)
		}
	}
	results, next, err := s.batchResultsPage(r.Context(), p)
	if err != nil {
		return err
	}
	return render(w, http.StatusOK, s.pages.batch, struct {
		page
		Batch     *drover.Batch
		Ended     int64
		Results   []resultJSON
		NextAfter int64
	}{page{Title: fmt.Sprintf("Batch %d", id)}, b, b.Completed + b.Cancelled + b.Discarded, results, next})
}

// jobAction applies action (retry, cancel, discard) to one job and shows
// the job's page again, whose banner says what was done. The redirect
// carries the action's name only: the banner's text is the server's, made
// from the job as stored, never text from the URL, which anyone can put
// in a link.
func (s *Server) jobAction(call func(context.Context, int64) (*drover.JobRow, error), action string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := pathID(r)
		if err != nil {
			return err
		}
		if _, err := call(r.Context(), id); err != nil {
			return err
		}
		http.Redirect(w, r, fmt.Sprintf("/ui/jobs/%d?done=%s", id, action), http.StatusSeeOther)
		return nil
	}
}

// queueAction pauses or resumes the queue the path names, then shows the
// overview again, whose banner says what was done (queueFlash).
func (s *Server) queueAction(call func(context.Context, string) error, action string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		name := r.PathValue("name")
		if err := drover.ValidateQueue(name); err != nil {
			return err
		}
		if err := call(r.Context(), name); err != nil {
			return err
		}
		http.Redirect(w, r, "/?done="+action+"&queue="+url.QueryEscape(name), http.StatusSeeOther)
		return nil
	}
}

// kindAction pauses or resumes, within the queue the path names, the kind
// the form names, then shows the overview again with its banner.
func (s *Server) kindAction(call func(context.Context, string, string) error, action string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		name, kind := r.PathValue("name"), r.PostFormValue("kind")
		if err := drover.ValidateQueue(name); err != nil {
			return err
		}
		if err := call(r.Context(), name, kind); err != nil {
			return err
		}
		http.Redirect(w, r, "/?done="+action+"&queue="+url.QueryEscape(name)+"&kind="+url.QueryEscape(kind), http.StatusSeeOther)
		return nil
	}
}

// queueActionDone is the banner after each action on a queue; the kind
// actions' name the kind first.
var queueActionDone = map[string]string{
	"pause":       "paused: its workers start no job until it is resumed",
	"resume":      "resumed",
	"pause-kind":  "paused: no worker starts a job of it until it is resumed; the queue's other kinds run on",
	"resume-kind": "resumed",
}

// queueFlash is the overview's banner after action on the queue q names, or
// none for an action it does not know: the page shows only its own text,
// never text from the URL but a queue or kind name, which are checked.
func queueFlash(q url.Values) string {
	action := q.Get("done")
	done, ok := queueActionDone[action]
	name := q.Get("queue")
	if !ok || drover.ValidateQueue(name) != nil {
		return ""
	}
	if strings.HasSuffix(action, "-kind") {
		kind := q.Get("kind")
		if drover.ValidateKind(kind) != nil {
			return ""
		}
		return fmt.Sprintf("Kind %s of queue %s %s.", kind, name, done)
	}
	return fmt.Sprintf("Queue %s %s.", name, done)
}

// jobActionDone is the banner after each action on one job, completed by
// the job's state as the page reads it.
var jobActionDone = map[string]string{
	"retry":   "retried",
	"cancel":  "cancelled, or its cancel requested if it was running",
	"discard": "discarded if it was waiting",
}

// jobFlash is the banner of a job's page after action, or none for an
// action it does not know.
func jobFlash(action string, job *drover.JobRow) string {
	done, ok := jobActionDone[action]
	if !ok {
		return ""
	}
	return fmt.Sprintf("Job %d %s: now %s.", job.ID, done, job.State)
}

// bulkStatus is the jobs page's line about the bulk task whose id the URL
// names (?task=N), made from the task as the server holds it, and whether
// it still runs (the page then reloads itself).
func (s *Server) bulkStatus(q url.Values) (string, bool) {
	id, err := strconv.ParseInt(q.Get("task"), 10, 64)
	if err != nil {
		return "", false
	}
	t := s.bulkTasks.get(id)
	if t == nil {
		return "", false
	}
	j := t.json()
	switch j.Status {
	case "running":
		return fmt.Sprintf("%s running: %d jobs read, %d changed so far.", j.Action, j.Matched, j.Changed), true
	case "failed":
		return fmt.Sprintf("%s failed after %d jobs read (%d changed): %s", j.Action, j.Matched, j.Changed, j.Error), false
	case "interrupted":
		return fmt.Sprintf("%s interrupted after %d jobs read (%d changed): %s", j.Action, j.Matched, j.Changed, j.Error), false
	}
	if j.Selected > 0 {
		return fmt.Sprintf("%s done: changed %d of %d selected jobs.", j.Action, j.Changed, j.Selected), false
	}
	return fmt.Sprintf("%s done: changed %d of %d jobs that matched.", j.Action, j.Changed, j.Matched), false
}

// jobCan reports whether action (retry, cancel, discard) would change job,
// so that its page offers only the buttons that do something: the store
// leaves a job as it is otherwise (JobRetry, JobCancel, JobDiscard).
func jobCan(action string, job *drover.JobRow) bool {
	switch action {
	case "retry":
		switch job.State {
		case drover.JobStateCompleted, drover.JobStateCancelled, drover.JobStateDiscarded,
			drover.JobStateScheduled, drover.JobStateRetryable:
			return true
		}
	case "cancel":
		switch job.State {
		case drover.JobStatePending, drover.JobStateBlocked, drover.JobStateScheduled,
			drover.JobStateAvailable, drover.JobStateRetryable:
			return true
		case drover.JobStateRunning:
			return !job.CancelRequested
		}
	case "discard":
		switch job.State {
		case drover.JobStateScheduled, drover.JobStateAvailable, drover.JobStateRetryable:
			return true
		}
	}
	return false
}

// bulk starts retrying, cancelling, discarding or deleting, in the
// background (bulk.go, drover.Client.JobBulk and JobBulkByID), either the
// rows selected on the jobs page (the form's id values) or every job
// matching the page's filter, on every page, not just the one shown; it
// then shows the jobs page with the same filter, which follows the task's
// progress.
func (s *Server) bulk(w http.ResponseWriter, r *http.Request) error {
	f := jobFilter{State: r.PostFormValue("state"), Queue: r.PostFormValue("queue"), Kind: r.PostFormValue("kind")}
	action := drover.BulkAction(r.PostFormValue("action"))
	var t *bulkTask
	var err error
	if r.PostFormValue("selection") != "" {
		ids := make([]int64, 0, len(r.PostForm["id"]))
		for _, v := range r.PostForm["id"] {
			id, err := parseID("job", v)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			return badRequest("no job selected: tick the rows to %s first", action)
		}
		t, err = s.bulkTasks.start(s.cfg.Client, action, jobFilter{}, ids)
	} else {
		t, err = s.bulkTasks.start(s.cfg.Client, action, f, nil)
	}
	if err != nil {
		return err
	}
	v := url.Values{"state": {f.State}, "queue": {f.Queue}, "kind": {f.Kind}, "task": {strconv.FormatInt(t.id, 10)}}
	http.Redirect(w, r, "/ui/jobs?"+v.Encode(), http.StatusSeeOther)
	return nil
}
