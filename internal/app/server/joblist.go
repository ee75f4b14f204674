package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/jobjson"
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

// listJobs answers a page of the jobs matching a search, oldest or newest
// first. A page ends at its limit of rows, at the byte budget
// (Config.MaxPageBytes), or once it has examined its scan bound of job
// IDs (drover.JobSearchScanDefault), whichever comes first, with the cursor
// of the next page: a client paging with next_after sees every matching
// job once, however large their args and however rare the matches. The
// page is encoded one job at a time as it is read in chunks from the
// store, so the server never holds more than a chunk of rows and one
// encoded job. With count=true the page also carries how many jobs match
// (drover.Client.JobCount: exact up to 50,000 jobs per table, estimated
// beyond).
func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for key := range q {
		if !slices.Contains(jobQueryKeys, key) && key != "after" && key != "limit" && key != "count" {
			return badRequest("query parameter %q: unknown (use %s, after, limit, count)", key, strings.Join(jobQueryKeys, ", "))
		}
	}
	// The API takes a parameter given empty as given: a time, an order
	// or a count must then have a value (the dashboard's form, which
	// sends every field, reads empty ones as unset).
	for key := range q {
		typed := key == "order" || key == "count" || strings.HasSuffix(key, "_since") || strings.HasSuffix(key, "_until")
		if typed && q.Get(key) == "" {
			return badRequest("%s: given empty; give a value or leave it out", key)
		}
	}
	p, err := jobQuery(q)
	if err != nil {
		return err
	}
	if err := checkListQueue(r, p.Queue); err != nil {
		return err
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
	withCount, err := queryBool(q, "count")
	if err != nil {
		return err
	}
	var count *drover.JobCount
	if withCount {
		n, err := s.cfg.Client.JobCount(r.Context(), p)
		if err != nil {
			return err
		}
		count = &n
	}
	// The first chunk is read before anything is written, so that a bad
	// filter or a failing store still gets its error status.
	sc := newSearchChunks(s.cfg.Client, p, limit)
	jobs, err := sc.next(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	pw := &pageWriter{w: w, budget: s.cfg.MaxPageBytes}
	pw.write([]byte(`{"jobs":[`))
	n, next := 0, int64(0)
	for {
		full := false
		for _, j := range jobs {
			b, err := json.Marshal(jobjson.From(j))
			if err != nil {
				return err // a job that cannot be encoded is a bug; the page is cut short
			}
			// The first job always goes in, so that a page makes
			// progress even when one job is larger than the budget.
			if n > 0 && !pw.fits(len(b)+1+pageTail) {
				full = true
				break
			}
			if n > 0 {
				pw.write([]byte(","))
			}
			pw.write(b)
			n, next = n+1, j.ID
		}
		if full || n == limit {
			break
		}
		if sc.done() {
			next = sc.cursor // where the scan stopped; 0 at the end of the tables
			break
		}
		if jobs, err = sc.next(r.Context()); err != nil {
			// The status is sent; end the page where it got to, and the
			// client's next page meets the failure, if it lasts.
			if r.Context().Err() == nil {
				s.cfg.Logger.Error("listing jobs failed mid-page", "error", err)
			}
			next = sc.cursor
			break
		}
	}
	tail := `],"next_after":null`
	if next > 0 {
		tail = `],"next_after":` + strconv.FormatInt(next, 10)
	}
	if count != nil {
		tail += `,"count":{"value":` + strconv.FormatInt(count.Count, 10) + `,"exact":` + strconv.FormatBool(count.Exact) + `}`
	}
	pw.write([]byte(tail + "}\n"))
	return nil
}

// searchChunks reads one page of a search from the store in chunks of
// jobsChunk, sharing the page's bounds (IDs examined, time) among them:
// each chunk goes on from where the last stopped, with what the bounds
// have left.
type searchChunks struct {
	client  Client
	p       drover.JobListParams
	left    int
	scanned int64
	// until is when the page's time bound (drover.JobSearchTimeDefault)
	// passes.
	until time.Time
	// cursor is where the next chunk starts; 0 once the search has no
	// job left.
	cursor int64
	ended  bool
}

func newSearchChunks(c Client, p drover.JobListParams, limit int) *searchChunks {
	return &searchChunks{client: c, p: p, left: limit, cursor: p.After, until: time.Now().Add(drover.JobSearchTimeDefault)}
}

// done reports whether the page has read all it may: the store has no
// matching job left, or the scan bound is spent.
func (sc *searchChunks) done() bool {
	return sc.ended || sc.left == 0 || sc.scanned >= drover.JobSearchScanDefault || !time.Now().Before(sc.until)
}

func (sc *searchChunks) next(ctx context.Context) ([]*drovertype.JobRow, error) {
	p := sc.p
	p.After = sc.cursor
	p.Limit = min(sc.left, jobsChunk)
	p.Scan = drover.JobSearchScanDefault - sc.scanned
	p.ScanTime = max(time.Until(sc.until), time.Millisecond)
	page, err := sc.client.JobSearch(ctx, p)
	if err != nil {
		return nil, err
	}
	sc.left -= len(page.Jobs)
	sc.scanned += page.Scanned
	sc.cursor = page.Next
	sc.ended = page.Next == 0
	return page.Jobs, nil
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
func (s *Server) walkJobs(ctx context.Context, p drover.JobListParams, fn func(*drovertype.JobRow) error) error {
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

// queryBool reads a boolean query parameter: true or 1, false or 0, false
// when absent.
func queryBool(q url.Values, key string) (bool, error) {
	if !q.Has(key) {
		return false, nil
	}
	switch v := q.Get(key); v {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	default:
		return false, badRequest("%s %q: use true or false", key, v)
	}
}
