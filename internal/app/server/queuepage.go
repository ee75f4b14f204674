package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/validate"
)

// The dashboard's queues: the overview's table of every queue with its
// figures, settings and what a strict queue waits on, and each queue's page
// with its settings, edited there, and its charts by kind.

// queueRow is one line of the overview: a queue's waiting and running
// jobs, its throughput and latency over the last sample's window, its
// stored settings, and, in strict order, what it waits on.
type queueRow struct {
	drovertype.QueueStats
	PerSecond float64
	Finished  drovertype.FinishedStats
	// Settings are the queue's stored settings, read when the page is;
	// the zero value for a queue without any.
	Settings drovertype.QueueSettings
	// Head is what a queue in strict order waits on, said in words
	// (strictNote); empty for other queues and when nothing holds it up.
	Head string
	// HeadJob is the job Head names, 0 for none.
	HeadJob int64
}

// queueRows joins a sample's two lists by queue: a queue that has nothing
// waiting but finished jobs in the window is busy, and is shown too. Queues
// with stored settings are shown whatever their figures, so that a paused
// queue can be resumed from the page.
func queueRows(p Point, settings []*drovertype.QueueSettings) []*queueRow {
	byName := map[string]*queueRow{}
	var rows []*queueRow
	row := func(q string) *queueRow {
		if r, ok := byName[q]; ok {
			return r
		}
		r := &queueRow{QueueStats: drovertype.QueueStats{Queue: q}, Settings: drovertype.QueueSettings{Queue: q}}
		byName[q] = r
		rows = append(rows, r)
		return r
	}
	for _, q := range p.Queues {
		row(q.Queue).QueueStats = q
	}
	for _, q := range settings {
		row(q.Queue).Settings = *q
	}
	for _, f := range p.Finished {
		r := row(f.Queue)
		r.Finished = f
		if p.Seconds > 0 {
			r.PerSecond = float64(f.Completed) / p.Seconds
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Queue < rows[j].Queue })
	return rows
}

// strictHeads reads what each queue in strict order among rows waits on:
// two index reads per strict queue, and none for the others.
func (s *Server) strictHeads(ctx context.Context, rows []*queueRow, now time.Time) error {
	for _, r := range rows {
		if r.Settings.Strict == 0 {
			continue
		}
		h, err := s.cfg.Client.QueueHeadOf(ctx, r.Queue)
		if err != nil {
			return err
		}
		r.Head = strictNote(r.Queue, r.Settings.Strict, h, now)
		if r.Head != "" {
			r.HeadJob = h.Job.ID
		}
	}
	return nil
}

// strictNote says, in an operator's words, what holds up queue, in strict
// order with at most strict jobs running, whose head is h: a failed job
// waiting for its retry at the head ("stuck behind job 27725, retrying in
// 1m21s"), a returned job due to start again, or the running jobs that
// fill its room. Empty when nothing holds it up.
func strictNote(queue string, strict int, h *drovertype.QueueHead, now time.Time) string {
	j := h.Job
	if j == nil {
		return ""
	}
	if h.Returned {
		why := ""
		if n := len(j.Errors); n > 0 {
			why = fmt.Sprintf(" after %q", lastErrorText(j.Errors[n-1].Error))
		}
		if j.RunAt.After(now) {
			return fmt.Sprintf("Queue %s is stuck behind job %d (%s, attempt %d of %d%s), retrying in %s: nothing else of the queue starts until it has run again.",
				queue, j.ID, j.Kind, j.Attempt, j.MaxAttempts, why, roundDuration(j.RunAt.Sub(now)))
		}
		return fmt.Sprintf("Queue %s waits for job %d (%s, attempt %d of %d%s) to start again: nothing else of the queue starts before it.",
			queue, j.ID, j.Kind, j.Attempt, j.MaxAttempts, why)
	}
	if h.Running >= int64(strict) && !j.RunAt.After(now) {
		return fmt.Sprintf("Queue %s runs %d of its %d jobs at once; job %d (%s) starts when one ends.", queue, h.Running, strict, j.ID, j.Kind)
	}
	return ""
}

// lastErrorText is an error shortened for a line of text.
func lastErrorText(msg string) string {
	if r := []rune(msg); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return msg
}

// topWorkers is how many workers the overview lists; the workers page
// lists them all.
const topWorkers = 10

func (s *Server) overviewPage(w http.ResponseWriter, r *http.Request) error {
	p, _ := s.history.latest()
	// One read of the small settings table per page view; the figures
	// come from the sample.
	settings, err := s.cfg.Client.QueueList(r.Context())
	if err != nil {
		return err
	}
	now := time.Now()
	rows := queueRows(p, settings)
	if err := s.strictHeads(r.Context(), rows, now); err != nil {
		return err
	}
	at, ws := s.workerSample.get()
	// The workers holding the most jobs first, then the most recently
	// seen: the same rows, with the same counts, as the workers page.
	ws = append([]*drovertype.WorkerInfo(nil), ws...)
	sort.SliceStable(ws, func(i, j int) bool {
		if ws[i].JobsHeld != ws[j].JobsHeld {
			return ws[i].JobsHeld > ws[j].JobsHeld
		}
		return ws[i].LastSeen.After(ws[j].LastSeen)
	})
	more := 0
	if len(ws) > topWorkers {
		more, ws = len(ws)-topWorkers, ws[:topWorkers]
	}
	return render(w, http.StatusOK, s.pages.overview, struct {
		page
		Queues         []*queueRow
		Sampled        time.Time
		Interval       time.Duration
		Workers        []*drovertype.WorkerInfo
		MoreWorkers    int
		WorkersSampled time.Time
	}{s.page("Queues", queueFlash(r.URL.Query())), rows, p.At, s.cfg.SampleInterval, ws, more, at})
}

// queuePage shows one queue: its figures from the last sample, what holds
// it up when it is in strict order, its stored settings with the forms that
// change them, and its charts, by kind.
func (s *Server) queuePage(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	st, err := s.cfg.Client.QueueGet(r.Context(), name)
	if err != nil {
		return err
	}
	p, _ := s.history.latest()
	row := &queueRow{QueueStats: drovertype.QueueStats{Queue: name}}
	for _, q := range queueRows(p, nil) {
		if q.Queue == name {
			row = q
		}
	}
	row.Settings = *st
	now := time.Now()
	var head *drovertype.QueueHead
	if head, err = s.cfg.Client.QueueHeadOf(r.Context(), name); err != nil {
		return err
	}
	if st.Strict > 0 {
		row.Head = strictNote(name, st.Strict, head, now)
		if row.Head != "" {
			row.HeadJob = head.Job.ID
		}
	}
	_, kinds := s.knownNames(r.Context())
	return render(w, http.StatusOK, s.pages.queue, struct {
		page
		Q        *queueRow
		Head     *drovertype.QueueHead
		Kinds    []string
		Now      time.Time
		Sampled  time.Time
		Interval time.Duration
	}{s.page("Queue "+name, queueFlash(r.URL.Query())), row, head, kinds, now, p.At, s.cfg.SampleInterval})
}

// queueBack is where an action on a queue shows its banner: the page the
// form was on, the overview unless it says the queue's page. Only these
// two: a form field never names a page to go to.
func queueBack(r *http.Request, name string) string {
	if r.PostFormValue("back") == "queue" {
		return "/ui/queues/" + url.PathEscape(name) + "?"
	}
	return "/?"
}

// queueAction pauses or resumes the queue the path names, then shows the
// page the form was on again, whose banner says what was done
// (queueFlash).
func (s *Server) queueAction(call func(context.Context, string) error, action string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		name := r.PathValue("name")
		if err := validate.Queue(name); err != nil {
			return err
		}
		if err := call(r.Context(), name); err != nil {
			return err
		}
		http.Redirect(w, r, queueBack(r, name)+url.Values{"done": {action}, "queue": {name}}.Encode(), http.StatusSeeOther)
		return nil
	}
}

// kindAction pauses or resumes, within the queue the path names, the kind
// the form names, then shows the page the form was on with its banner.
func (s *Server) kindAction(call func(context.Context, string, string) error, action string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		name, kind := r.PathValue("name"), strings.TrimSpace(r.PostFormValue("kind"))
		if err := validate.Queue(name); err != nil {
			return err
		}
		if err := call(r.Context(), name, kind); err != nil {
			return err
		}
		http.Redirect(w, r, queueBack(r, name)+url.Values{"done": {action}, "queue": {name}, "kind": {kind}}.Encode(), http.StatusSeeOther)
		return nil
	}
}

// queueSettingsAction stores the settings a form of the queue's page
// edits: strict order ("strict": max_running, 0 off) or the cluster-wide
// limits ("limits": global_max_workers, rate_limit, rate_period, each
// empty or 0 for none), then shows the queue's page with its banner. A
// value that is not a number is refused naming its field, and nothing is
// stored.
func (s *Server) queueSettingsAction(action string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		name := r.PathValue("name")
		if err := validate.Queue(name); err != nil {
			return err
		}
		switch action {
		case "strict":
			n, err := formInt(r, "max_running")
			if err != nil {
				return err
			}
			if _, err := s.cfg.Client.QueueSetStrictOrder(r.Context(), name, n); err != nil {
				return err
			}
		case "limits":
			var l drover.QueueLimits
			var err error
			if l.GlobalMaxWorkers, err = formInt(r, "global_max_workers"); err != nil {
				return err
			}
			if l.RateLimit, err = formInt(r, "rate_limit"); err != nil {
				return err
			}
			if v := strings.TrimSpace(r.PostFormValue("rate_period")); v != "" {
				if l.RatePeriod, err = time.ParseDuration(v); err != nil {
					return badRequest("rate_period %q: must be a duration such as 1s, 500ms or 1m", v)
				}
			}
			if l.RateLimit == 0 {
				// A period without a rate means nothing: the form sends
				// one whatever the rate.
				l.RatePeriod = 0
			}
			if _, err := s.cfg.Client.QueueSetLimits(r.Context(), name, l); err != nil {
				return err
			}
		}
		http.Redirect(w, r, "/ui/queues/"+url.PathEscape(name)+"?"+url.Values{"done": {action}, "queue": {name}}.Encode(), http.StatusSeeOther)
		return nil
	}
}

// formInt reads the form field name as a whole number, 0 when empty.
func formInt(r *http.Request, name string) (int, error) {
	v := strings.TrimSpace(r.PostFormValue(name))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, badRequest("%s %q: must be a whole number", name, v)
	}
	return n, nil
}

// queueActionDone is the banner after each action on a queue; the kind
// actions' name the kind first.
var queueActionDone = map[string]string{
	"pause":       "paused: its workers start no job until it is resumed",
	"resume":      "resumed",
	"pause-kind":  "paused: no worker starts a job of it until it is resumed; the queue's other kinds run on",
	"resume-kind": "resumed",
	"strict":      "saved its strict order",
	"limits":      "saved its limits",
}

// queueFlash is the banner after action on the queue q names, or none for
// an action it does not know: the page shows only its own text, never
// text from the URL but a queue or kind name, which are checked.
func queueFlash(q url.Values) string {
	action := q.Get("done")
	done, ok := queueActionDone[action]
	name := q.Get("queue")
	if !ok || validate.Queue(name) != nil {
		return ""
	}
	if strings.HasSuffix(action, "-kind") {
		kind := q.Get("kind")
		if validate.Kind(kind) != nil {
			return ""
		}
		return fmt.Sprintf("Kind %s of queue %s %s.", kind, name, done)
	}
	if action == "strict" || action == "limits" {
		return fmt.Sprintf("Queue %s: %s.", name, done)
	}
	return fmt.Sprintf("Queue %s %s.", name, done)
}
