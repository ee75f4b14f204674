package server

import (
	"net/http"
	"sort"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// The dashboard's "running now" page (Sidekiq's Busy): the jobs running at
// this moment, on which worker and for how long, with a summary per
// worker.

// runningPageSize bounds the running jobs the page lists: a keyset page of
// the hot table's running rows, newest first.
const runningPageSize = 200

// runningWorker is a worker's line of the summary: how many of the listed
// jobs it runs and since when the longest of them has run.
type runningWorker struct {
	Worker  string
	Jobs    int
	Longest time.Duration
}

func (s *Server) runningPage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	p := drover.JobListParams{States: []drovertype.JobState{drovertype.JobStateRunning}, Queue: q.Get("queue"), NewestFirst: true}
	jobs, sc, err := s.jobRows(r.Context(), p, runningPageSize)
	if err != nil {
		return err
	}
	now := time.Now()
	// The longest running first: the ones an operator looks for.
	sort.SliceStable(jobs, func(i, j int) bool { return started(jobs[i]).Before(started(jobs[j])) })
	byWorker := map[string]*runningWorker{}
	var workers []*runningWorker
	for _, j := range jobs {
		rw := byWorker[j.LeaseOwner]
		if rw == nil {
			rw = &runningWorker{Worker: j.LeaseOwner}
			byWorker[j.LeaseOwner] = rw
			workers = append(workers, rw)
		}
		rw.Jobs++
		rw.Longest = max(rw.Longest, now.Sub(started(j)))
	}
	sort.SliceStable(workers, func(i, j int) bool { return workers[i].Jobs > workers[j].Jobs })
	return render(w, http.StatusOK, s.pages.running, struct {
		page
		Jobs    []jobRow
		Workers []*runningWorker
		Queue   string
		Now     time.Time
		// More says the page lists only the newest runningPageSize
		// running jobs, or stopped at its scan bound.
		More bool
	}{s.page("Running now", ""), jobs, workers, p.Queue, now, sc.cursor != 0})
}

// started is when a running job's attempt started.
func started(j jobRow) time.Time {
	if j.AttemptedAt == nil {
		return j.RunAt
	}
	return *j.AttemptedAt
}
