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
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/validate"
)

// The dashboard is server-rendered HTML with small scripts: live.js
// fetches the page again every few seconds and swaps in its live regions
// (queues, workers, topics, job lists, counts), app.js draws the charts;
// no framework, and every asset is embedded in the binary, so it works
// with no network beyond the server. No page counts the whole jobs table:
// the queue figures come from the sampler, the charts from the stored
// history, job lists are keyset pages and their counts are bounded.

//go:embed ui
var uiFiles embed.FS

// pages are the parsed templates.
type pages struct {
	login, overview, jobs, job, batch, topics, workers, errorPage *template.Template
	workflow, batches, periodic, queue, running, topic, lanes     *template.Template
	shards                                                        *template.Template
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
	"rate": func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
	// deref reads an optional figure its caller checked is there.
	"deref": func(v *float64) float64 { return *v },
	// clock writes a time of a table's row briefly: the time of day for
	// today's, the date too for others'.
	"clock": func(t time.Time, now time.Time) string {
		if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
			return t.Format("15:04:05")
		}
		return t.Format("01-02 15:04")
	},
	// csv writes a list as a form's comma-separated field takes it.
	"csv":        func(s []string) string { return strings.Join(s, ",") },
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
	// ran is how long a job ran (its last attempt, to its finish) or has
	// been running, "-" for a job not started.
	"ran":      ranFor,
	"duration": func(d time.Duration) string { return roundDuration(d).String() },
	"count":    countText,
	"stateURL": func(f jobsForm, state string) string {
		v := url.Values{}
		for k, vs := range f.Values {
			if k != "state" && k != "after" && k != "task" && strings.Join(vs, "") != "" {
				v[k] = vs
			}
		}
		if state != "" {
			v.Set("state", state)
		}
		return "/ui/jobs?" + v.Encode()
	},
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
	"lastError": func(j *drovertype.JobRow) string {
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

// argsPreviewRunes bounds the args a row of the jobs table shows.
const argsPreviewRunes = 60

// roundDuration rounds d to what a person reads: milliseconds under a
// second, then seconds.
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// ranFor is how long job's last attempt ran to its finish, or has run
// until now; "-" for a job not started, or finished without running.
func ranFor(j *drovertype.JobRow, now time.Time) string {
	if j.AttemptedAt == nil {
		return "-"
	}
	switch {
	case j.State == drovertype.JobStateRunning:
		return roundDuration(now.Sub(*j.AttemptedAt)).String()
	case j.FinalizedAt != nil && !j.FinalizedAt.Before(*j.AttemptedAt):
		return roundDuration(j.FinalizedAt.Sub(*j.AttemptedAt)).String()
	}
	return "-"
}

// countText writes a count as the state tabs and confirmations show it:
// exact, or "~" and the estimate.
func countText(c drover.JobCount) string {
	if c.Exact {
		return thousands(c.Count)
	}
	return "~" + thousands(c.Count)
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
		return template.Must(template.New(name).Funcs(funcs).ParseFS(uiFiles, "ui/layout.html", "ui/parts.html", "ui/"+name))
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
		queue:     parse("queue.html"),
		running:   parse("running.html"),
		topic:     parse("topic.html"),
		workers:   parse("workers.html"),
		shards:    parse("shards.html"),
		errorPage: parse("error.html"),
	}
}

// page is what every page template gets.
type page struct {
	Title   string
	Flash   string
	Message string
	// LiveMS is how often live.js fetches the page again to swap in its
	// live regions, in milliseconds; 0 (error pages) leaves the page as
	// it is.
	LiveMS int64
	// Fleet shows the shards page in the menu: the store is a fleet.
	Fleet bool
}

// page returns what every page gets, live at the sampling interval (at
// least a second), when the page's figures change.
func (s *Server) page(title, flash string) page {
	return page{Title: title, Flash: flash, LiveMS: max(s.cfg.SampleInterval, time.Second).Milliseconds(), Fleet: s.fleet != nil}
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
		"GET /ui/shards":                     s.shardsPage,
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

		// The charts (charts.go), what runs now (runningpage.go), a
		// queue's page (queuepage.go), a topic's (topicspage.go), and
		// periodic jobs created, edited and deleted (periodicpage.go).
		"GET /ui/stats.json":              s.statsJSON,
		"GET /ui/lag.json":                s.lagJSON,
		"GET /ui/running":                 s.runningPage,
		"GET /ui/queues/{name}":           s.queuePage,
		"POST /ui/queues/{name}/strict":   s.queueSettingsAction("strict"),
		"POST /ui/queues/{name}/limits":   s.queueSettingsAction("limits"),
		"POST /ui/periodic":               s.periodicCreate,
		"POST /ui/periodic/{name}":        s.periodicUpdate,
		"POST /ui/periodic/{name}/delete": s.periodicAction("delete"),
		"GET /ui/topics/{topic}":          s.topicPage,

		"POST /ui/topics/{topic}/delete":                      s.topicDelete,
		"POST /ui/topics/{topic}/subscriptions/{name}/delete": s.subscriptionDelete,
		"POST /ui/topics/{topic}/subscriptions/{name}/rewind": s.subscriptionRewind,

		"POST /ui/topics/{topic}/subscriptions/{name}/lanes/{lane}/release": s.laneRelease,
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

// jobFilter is the filter of the jobs page and of bulk actions.
type jobFilter struct {
	State, Queue, Kind string
}

func (f jobFilter) params() (drover.JobListParams, error) {
	p := drover.JobListParams{Queue: f.Queue, Kind: f.Kind}
	if f.State != "" {
		p.States = []drovertype.JobState{drovertype.JobState(f.State)}
	}
	if f.Queue != "" {
		if err := validate.Queue(f.Queue); err != nil {
			return p, err
		}
	}
	return p, nil
}

// jobStates are the states in the order of a job's life, for the filter
// of the jobs page and the counts of /v1/stats.
var jobStates = func() []string {
	var out []string
	for _, s := range drovertype.JobStates() {
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

// jobRow is a row of the jobs table: the job without its args and
// metadata, which a page of fifty jobs of 1 MiB args would otherwise hold
// whole, and the start of its args.
type jobRow struct {
	*drovertype.JobRow
	Args string
}

// stateTab is one tab of the jobs page: a state (or "" for all of them)
// with how many jobs of the filter are in it.
type stateTab struct {
	State   string
	Count   drover.JobCount
	Current bool
}

// stateTabs are the jobs page's tabs for counts, the current one the
// state the filter names (or all of them when it names none).
func stateTabs(counts map[drovertype.JobState]drover.JobCount, states []drovertype.JobState) []stateTab {
	all := drover.JobCount{Exact: true}
	tabs := []stateTab{{Current: len(states) == 0}}
	for _, st := range drovertype.JobStates() {
		c := counts[st]
		all.Count += c.Count
		all.Exact = all.Exact && c.Exact
		tabs = append(tabs, stateTab{State: string(st), Count: c, Current: len(states) == 1 && states[0] == st})
	}
	tabs[0].Count = all
	return tabs
}

// sumStates adds the counts of states, all of them when none is named.
func sumStates(counts map[drovertype.JobState]drover.JobCount, states []drovertype.JobState) drover.JobCount {
	if len(states) == 0 {
		states = drovertype.JobStates()
	}
	sum := drover.JobCount{Exact: true}
	for _, st := range states {
		c := counts[st]
		sum.Count += c.Count
		sum.Exact = sum.Exact && c.Exact
	}
	return sum
}

// bulkButton is one button of the jobs page's bulk form, with the
// confirmation that names how many jobs it changes.
type bulkButton struct {
	Action, ID, Label, Confirm string
}

// bulkActions are the bulk form's buttons: each action with the states
// of the jobs it changes (jobCan; a delete takes every job but a running
// one), for its confirmation to count them.
var bulkActions = []struct {
	action, id, label, what string
	states                  []drovertype.JobState
}{
	{"retry", "bulk-retry", "Retry all", "are retried", []drovertype.JobState{drovertype.JobStateCompleted, drovertype.JobStateCancelled,
		drovertype.JobStateDiscarded, drovertype.JobStateScheduled, drovertype.JobStateRetryable}},
	{"cancel", "bulk-cancel", "Cancel all", "are cancelled (a running one is asked to stop)", []drovertype.JobState{drovertype.JobStatePending,
		drovertype.JobStateBlocked, drovertype.JobStateScheduled, drovertype.JobStateAvailable, drovertype.JobStateRetryable, drovertype.JobStateRunning}},
	{"discard", "bulk-discard", "Discard all waiting", "are discarded", []drovertype.JobState{drovertype.JobStateScheduled,
		drovertype.JobStateAvailable, drovertype.JobStateRetryable}},
	{"delete", "bulk-delete", "Delete all not running", "are deleted", []drovertype.JobState{drovertype.JobStatePending, drovertype.JobStateBlocked,
		drovertype.JobStateScheduled, drovertype.JobStateAvailable, drovertype.JobStateRetryable, drovertype.JobStateCompleted,
		drovertype.JobStateCancelled, drovertype.JobStateDiscarded}},
}

// bulkButtons are the buttons of a bulk action on the filter whose
// states are states (all of them for none), each confirming how many jobs
// it changes; unfiltered says the filter is empty, which the confirmation
// says too (every job of the store).
func bulkButtons(counts map[drovertype.JobState]drover.JobCount, states []drovertype.JobState, unfiltered bool) []bulkButton {
	var out []bulkButton
	for _, a := range bulkActions {
		var apply []drovertype.JobState
		for _, st := range a.states {
			if len(states) == 0 || slices.Contains(states, st) {
				apply = append(apply, st)
			}
		}
		n := drover.JobCount{Exact: true}
		if len(apply) > 0 {
			n = sumStates(counts, apply)
		}
		jobs := "jobs match"
		if n.Exact && n.Count == 1 {
			jobs = "job matches"
		}
		scope := "this filter"
		if unfiltered {
			scope = "no filter (every job of the store)"
		}
		confirm := fmt.Sprintf("%s: %s %s %s and %s, on every page. Go ahead?", a.label, countText(n), jobs, scope, a.what)
		if !n.Exact {
			confirm = fmt.Sprintf("%s: about %s jobs (estimated) match %s and %s, on every page. Go ahead?", a.label, thousands(n.Count), scope, a.what)
		}
		out = append(out, bulkButton{Action: a.action, ID: a.id, Label: a.label, Confirm: confirm})
	}
	return out
}

// jobsPage searches jobs with the API's filter (jobQuery), newest first
// unless the form asks otherwise, a page of jobsPageSize examining at most
// a scan's worth of IDs, and counts the filter's jobs in each state
// (Client.JobStateCounts, exact or estimated) for its tabs, its count and
// its bulk buttons' confirmations.
func (s *Server) jobsPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if !q.Has("order") {
		q.Set("order", "desc")
	}
	p, err := jobQuery(q)
	if err != nil {
		return err
	}
	counts, err := s.cfg.Client.JobStateCounts(r.Context(), p)
	if err != nil {
		return err
	}
	jobs, sc, err := s.jobRows(r.Context(), p, jobsPageSize)
	if err != nil {
		return err
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
	pg := s.page("Jobs", flash)
	if running {
		pg.LiveMS = time.Second.Milliseconds()
	}
	queues, kinds := s.knownNames(r.Context())
	return render(w, http.StatusOK, s.pages.jobs, struct {
		page
		Form     jobsForm
		Filter   jobFilter
		Bulkable bool
		Bulk     []bulkButton
		Tabs     []stateTab
		Queues   []string
		Kinds    []string
		Jobs     []jobRow
		Count    drover.JobCount
		Now      time.Time
		Next     string
		// Short is set when the page ended at its scan bound before it
		// was full: the next page goes on searching.
		Short   bool
		Scanned int64
	}{pg, form, f, form.bulkable(), bulkButtons(counts, p.States, f == jobFilter{}), stateTabs(counts, p.States), queues, kinds,
		jobs, sumStates(counts, p.States), time.Now(), next, len(jobs) < jobsPageSize && next != "", sc.scanned})
}

// jobRows reads a page of up to limit jobs matching p for a table, a
// chunk at a time, keeping of each job only the start of its args (the
// rest of its args and its metadata are dropped as they are read), and
// returns the search, whose cursor and scan say where the page ended.
func (s *Server) jobRows(ctx context.Context, p drover.JobListParams, limit int) ([]jobRow, *searchChunks, error) {
	var jobs []jobRow
	sc := newSearchChunks(s.cfg.Client, p, limit)
	for !sc.done() {
		chunk, err := sc.next(ctx)
		if err != nil {
			return nil, nil, err
		}
		for _, j := range chunk {
			preview := argsPreview(j.EncodedArgs)
			j.EncodedArgs, j.Metadata = nil, nil
			jobs = append(jobs, jobRow{j, preview})
		}
	}
	return jobs, sc, nil
}

// argsPreview is the start of a job's args on one line, for the jobs
// table.
func argsPreview(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	if b.Len() > 4*argsPreviewRunes {
		b.Truncate(4 * argsPreviewRunes)
	}
	if r := []rune(b.String()); len(r) > argsPreviewRunes {
		return string(r[:argsPreviewRunes-1]) + "…"
	}
	return b.String()
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
		Job        *drovertype.JobRow
		Result     *drovertype.JobResult
		Parents    []drovertype.JobResult
		Dependants []drovertype.JobResult
	}{s.page(fmt.Sprintf("Job %d", id), jobFlash(r.URL.Query().Get("done"), job)), job, result, parents, dependants})
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
		Batch     *drovertype.Batch
		Ended     int64
		Results   []resultJSON
		NextAfter int64
	}{s.page(fmt.Sprintf("Batch %d", id), ""), b, b.Completed + b.Cancelled + b.Discarded, results, next})
}

// jobAction applies action (retry, cancel, discard) to one job and shows
// the job's page again, whose banner says what was done. The redirect
// carries the action's name only: the banner's text is the server's, made
// from the job as stored, never text from the URL, which anyone can put
// in a link.
func (s *Server) jobAction(call func(context.Context, int64) (*drovertype.JobRow, error), action string) func(w http.ResponseWriter, r *http.Request) error {
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

// jobActionDone is the banner after each action on one job, completed by
// the job's state as the page reads it.
var jobActionDone = map[string]string{
	"retry":   "retried",
	"cancel":  "cancelled, or its cancel requested if it was running",
	"discard": "discarded if it was waiting",
}

// jobFlash is the banner of a job's page after action, or none for an
// action it does not know.
func jobFlash(action string, job *drovertype.JobRow) string {
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
func jobCan(action string, job *drovertype.JobRow) bool {
	switch action {
	case "retry":
		switch job.State {
		case drovertype.JobStateCompleted, drovertype.JobStateCancelled, drovertype.JobStateDiscarded,
			drovertype.JobStateScheduled, drovertype.JobStateRetryable:
			return true
		}
	case "cancel":
		switch job.State {
		case drovertype.JobStatePending, drovertype.JobStateBlocked, drovertype.JobStateScheduled,
			drovertype.JobStateAvailable, drovertype.JobStateRetryable:
			return true
		case drovertype.JobStateRunning:
			return !job.CancelRequested
		}
	case "discard":
		switch job.State {
		case drovertype.JobStateScheduled, drovertype.JobStateAvailable, drovertype.JobStateRetryable:
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
