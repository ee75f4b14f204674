package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/internal/jobjson"
)

// maxJobsPage bounds the rows of one page of GET /v1/jobs.
const maxJobsPage = 1000

// jobsChunk is how many jobs a page reads from the store at a time. A job
// holds up to 1 MiB of args (and its metadata and errors), so reading a
// whole page of a thousand at once could hold a gigabyte; a few dozen at
// a time keep a request to tens of megabytes, whatever its limit.
const jobsChunk = 32

// pageTail bounds the bytes that close a page of jobs (the cursor and
// the braces), reserved in the byte budget before a job is added.
const pageTail = 64

// listJobs answers a page of jobs in ID order. A page ends at its limit
// of rows or at the byte budget (Config.MaxPageBytes), whichever comes
// first, with the cursor of the next page: a client paging with
// next_after sees every job once, however large their args. The page is
// encoded one job at a time as it is read in chunks from the store, so
// the server never holds more than a chunk of rows and one encoded job.
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for key := range q {
		switch key {
		case "state", "queue", "kind", "after", "limit":
		default:
			return badRequest("query parameter %q: unknown (use state, queue, kind, after, limit)", key)
		}
	}
	p := drover.JobListParams{Queue: q.Get("queue"), Kind: q.Get("kind")}
	if err := checkListQueue(r, p.Queue); err != nil {
		return err
	}
	for _, v := range q["state"] {
		// An empty value filters nothing, as an empty queue or kind
		// does; an empty state inside a list is an error.
		if v == "" {
			continue
		}
		for _, st := range strings.Split(v, ",") {
			p.States = append(p.States, drover.JobState(st))
		}
	}
	var err error
	if q.Has("after") {
		v := q.Get("after")
		if p.After, err = strconv.ParseInt(v, 10, 64); err != nil || p.After < 0 {
			return badRequest("after %q: must be a job id (a non-negative integer)", v)
		}
	}
	limit := 100
	if q.Has("limit") {
		v := q.Get("limit")
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 {
			return badRequest("limit %q: must be a positive integer", v)
		}
		if limit > maxJobsPage {
			return badRequest("limit %d: must be at most %d (larger pages end early anyway; follow next_after)", limit, maxJobsPage)
		}
	}
	p.Limit = min(limit, jobsChunk)
	// The first chunk is read before anything is written, so that a bad
	// filter or a failing store still gets its error status.
	jobs, err := s.cfg.Client.JobList(r.Context(), p)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	pw := &pageWriter{w: w, budget: s.cfg.MaxPageBytes}
	pw.write([]byte(`{"jobs":[`))
	n, last, more := 0, int64(0), false
	for {
		for _, j := range jobs {
			b, err := json.Marshal(jobjson.From(j))
			if err != nil {
				return err // a job that cannot be encoded is a bug; the page is cut short
			}
			// The first job always goes in, so that a page makes
			// progress even when one job is larger than the budget.
			if n > 0 && !pw.fits(len(b)+1+pageTail) {
				more = true
				break
			}
			if n > 0 {
				pw.write([]byte(","))
			}
			pw.write(b)
			n, last = n+1, j.ID
		}
		if more || n == limit {
			more = true
			break
		}
		if len(jobs) < p.Limit {
			break // the store has no more
		}
		p.After, p.Limit = last, min(limit-n, jobsChunk)
		if jobs, err = s.cfg.Client.JobList(r.Context(), p); err != nil {
			// The status is sent; end the page where it got to, and the
			// client's next page meets the failure, if it lasts.
			if r.Context().Err() == nil {
				s.cfg.Logger.Error("listing jobs failed mid-page", "error", err)
			}
			more = true
			break
		}
	}
	next := "null"
	if more && n > 0 {
		next = strconv.FormatInt(last, 10)
	}
	pw.write([]byte(`],"next_after":` + next + "}\n"))
	return nil
}

// pageWriter writes a streamed page and counts its bytes against the
// budget. A failed write means the client left; later writes are skipped.
type pageWriter struct {
	w       http.ResponseWriter
	budget  int
	written int
	err     error
}

func (p *pageWriter) fits(n int) bool { return p.written+n <= p.budget }

func (p *pageWriter) write(b []byte) {
	if p.err != nil {
		return
	}
	var n int
	n, p.err = p.w.Write(b)
	p.written += n
}

// walkJobs calls fn for every job matching p (p.Limit ignored), reading
// them in chunks of jobsChunk, so that a walk over many jobs with large
// args holds only a chunk of them at a time. It is the dashboard's bulk
// actions' reader.
func (s *Server) walkJobs(ctx context.Context, p drover.JobListParams, fn func(*drover.JobRow) error) error {
	p.Limit = jobsChunk
	for {
		jobs, err := s.cfg.Client.JobList(ctx, p)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			if err := fn(j); err != nil {
				return err
			}
		}
		if len(jobs) < p.Limit {
			return nil
		}
		p.After = jobs[len(jobs)-1].ID
	}
}
