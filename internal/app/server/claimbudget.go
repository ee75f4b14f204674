package server

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/droverhq/drover"
)

// A claim is bounded in bytes as well as in jobs: its answer holds at most
// Config.MaxPageBytes of JSON (one job always, however large, so that a
// worker makes progress). The claim takes jobs in chunks, each sized so
// that it fits what is left of the budget at the size the queue's jobs
// recently had, and stops at the budget: the jobs of the last chunk that
// do not fit are released at once (their attempts undone, as if never
// claimed), so that no job stays leased to a worker that never received
// it. The server so holds one chunk of rows and the answer, not a claim's
// thousand jobs of up to 1 MiB of args each.

// Bounds of the claim's chunks.
const (
	// claimGuessBytes is the size assumed for a job of a queue no claim
	// of this server has read yet: a first chunk of 128 jobs at the
	// default budget.
	claimGuessBytes = 64 << 10
	// claimMinBytes is the least size assumed for a job: its JSON without
	// args is about this much.
	claimMinBytes = 256
	// claimSizesKept bounds the queues whose job sizes are remembered;
	// past it the memory starts over.
	claimSizesKept = 10_000
)

// claimSizes remembers, per queue, how large a claimed job's JSON
// recently was: the largest of the last claim, or half the previous
// figure when that was larger, so that a queue whose jobs shrink gets
// larger chunks within a few claims, and one whose jobs grow gets smaller
// ones at once.
type claimSizes struct {
	mu    sync.Mutex
	sizes map[string]int
}

func newClaimSizes() *claimSizes { return &claimSizes{sizes: map[string]int{}} }

// chunk returns how many jobs to claim from queue, at most left, so that
// they fit room bytes at the queue's recent job size: 0 when not one
// does.
func (c *claimSizes) chunk(queue string, left, room int) int {
	c.mu.Lock()
	size, ok := c.sizes[queue]
	c.mu.Unlock()
	if !ok {
		size = claimGuessBytes
	}
	return min(max(room/size, 0), left)
}

// observe records the largest job of a claim from queue.
func (c *claimSizes) observe(queue string, largest int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sizes) >= claimSizesKept {
		clear(c.sizes)
	}
	prev, ok := c.sizes[queue]
	if !ok {
		prev = claimGuessBytes
	}
	c.sizes[queue] = max(largest, prev/2, claimMinBytes)
}

// claimWithin claims up to p.Max jobs within the byte budget and returns
// the answer's JSON, in the full form or the compact one (compact.go),
// and how many jobs it holds. The budget is counted in the full form's
// bytes, which the compact form never exceeds by more than its empty
// "shared".
// Once a chunk has been handed out, a later chunk's failure ends the claim
// with what it has: the jobs already taken must reach the worker rather
// than wait out their leases.
func (s *Server) claimWithin(ctx context.Context, p drover.ClaimParams, compact bool) ([]byte, int, error) {
	const head, tail = `{"jobs":[`, "]}\n"
	budget := s.cfg.MaxPageBytes - len(`"shared":{},`)
	var enc claimJSON
	used := len(head) + len(tail) // the full form's bytes so far
	for left := p.Max; left > 0; {
		chunk := p
		chunk.Max = s.claimSizes.chunk(p.Queue, left, budget-used)
		if chunk.Max == 0 {
			if len(enc.jobs) > 0 {
				break // the budget is spent: a job claimed now would be released
			}
			chunk.Max = 1 // one job always goes in
		}
		start := time.Now()
		jobs, err := s.remote.Claim(ctx, chunk)
		took := time.Since(start)
		if err == nil && len(jobs) == 0 {
			s.claimed(chunk, jobs, took) // an empty claim is measured too
			break
		}
		var out []claimedJob
		if err == nil {
			out, err = s.claimedJSON(ctx, jobs) // releases the jobs when it fails
		}
		if err != nil {
			if len(enc.jobs) > 0 {
				s.cfg.Logger.Warn("claim: a further chunk failed; answering the jobs already claimed", "error", err)
				break
			}
			return nil, 0, err
		}
		taken, largest := 0, 0
		for i := range out {
			if err := enc.add(&out[i]); err != nil {
				return nil, 0, err // a claimed job that cannot be encoded is a bug
			}
			n := len(enc.jobs)
			size := enc.size(n - 1)
			largest = max(largest, size)
			if n > 1 && used+1+size > budget {
				enc.drop(n - 1)
				break
			}
			if n > 1 {
				used++
			}
			used += size
			taken++
		}
		s.claimSizes.observe(p.Queue, largest)
		s.claimed(chunk, jobs[:taken], took)
		if taken < len(jobs) {
			s.releaseClaimed(jobs[taken:])
			break
		}
		if len(jobs) < chunk.Max || s.draining() {
			break // the queue has no more now, or the server stops
		}
		left -= len(jobs)
	}
	if compact {
		return enc.compact(), len(enc.jobs), nil
	}
	return enc.full(), len(enc.jobs), nil
}

// draining reports whether Drain was called.
func (s *Server) draining() bool {
	select {
	case <-s.stopping:
		return true
	default:
		return false
	}
}

// writeRaw answers JSON already encoded, with writeJSON's headers.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
