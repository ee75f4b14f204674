package server

import (
	"context"
	"net/http"
	"time"

	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/app/storeurl"
)

// The shards of a fleet (docs/scaling.md, "Past one PostgreSQL"): the
// sampler probes every shard after reading the queue figures, which the
// fleet splits by shard as it reads them; GET /v1/shards and the
// dashboard's shards page show the last sample, and the metrics carry the
// fleet's figures labelled by shard (droverprom.ShardCollector). A lone
// database has no shards: the endpoint lists none, the page says so, and
// no metric has a shard label.

// shardView is one shard as GET /v1/shards and the shards page show it.
type shardView struct {
	Index int `json:"index"`
	// Address is the shard's URL without its password.
	Address  string `json:"address,omitempty"`
	Fleet    string `json:"fleet,omitempty"`
	Attached bool   `json:"attached"`
	Draining bool   `json:"draining"`
	// KeyShard: keys, unique keys, pinned queues and topics hash over
	// the key shards, so a key shard cannot be emptied.
	KeyShard bool `json:"key_shard"`
	Up       bool `json:"up"`
	// Error is why the shard is down now.
	Error string `json:"error,omitempty"`
	// LastError is the last error that made it unreachable, kept once it
	// answers again.
	LastError   string     `json:"last_error,omitempty"`
	LastErrorAt *time.Time `json:"last_error_at,omitempty"`
	RoundTripMS *float64   `json:"round_trip_ms,omitempty"`
	// Jobs are its waiting and running jobs per state; absent when it did
	// not answer the last sample.
	Jobs *shardJobs `json:"jobs,omitempty"`
	// CompletedPerSec is the rate of its jobs completed in the last
	// sample's window, whichever process ran them; absent as Jobs is.
	CompletedPerSec *float64 `json:"completed_per_sec,omitempty"`
	// ClaimedPerSec is the rate at which this server claimed its jobs
	// (for HTTP workers) since the previous sample; ClaimedJobs and
	// ClaimErrors count them since the server started.
	ClaimedPerSec float64 `json:"claimed_per_sec"`
	ClaimedJobs   uint64  `json:"claimed_jobs"`
	ClaimErrors   uint64  `json:"claim_errors"`
}

// shardJobs are a shard's jobs per state.
type shardJobs struct {
	Available int64 `json:"available"`
	Scheduled int64 `json:"scheduled"`
	Retryable int64 `json:"retryable"`
	Running   int64 `json:"running"`
}

// shardSample is the last probe of the shards, as shown, with the
// health it was made from (whose claim counters the next sample's rates
// start from).
type shardSample = sampled[shardReading]

type shardReading struct {
	views  []shardView
	health []droverfleet.ShardHealth
}

// sampleShards probes every shard of a fleet; a lone store has none.
func (s *Server) sampleShards(ctx context.Context, now time.Time) error {
	if s.fleet == nil {
		return nil
	}
	h, err := s.fleet.Probe(ctx)
	prevAt, prev := s.shardSample.get()
	s.shardSample.set(now, shardReading{views: s.shardViews(h, prev.health, now.Sub(prevAt)), health: h})
	return err
}

// shardViews turns the fleet's health into what is shown; rates are over
// since, from prev's counters.
func (s *Server) shardViews(h, prev []droverfleet.ShardHealth, since time.Duration) []shardView {
	out := make([]shardView, 0, len(h))
	for i, sh := range h {
		v := shardView{Index: sh.Index, Up: sh.Down == nil, ClaimedJobs: sh.ClaimedJobs, ClaimErrors: sh.ClaimErrors}
		raw := ""
		if i < len(s.cfg.ShardURLs) {
			raw = s.cfg.ShardURLs[i]
			v.Address = storeurl.Redact(raw)
		}
		if r := sh.Record; r != nil {
			v.Fleet, v.Attached, v.Draining, v.KeyShard = r.Fleet, true, r.Draining, sh.Index < r.KeyShards
		}
		if sh.Down != nil {
			v.Error = storeurl.RedactIn(sh.Down.Error(), raw)
		}
		if sh.LastError != nil {
			at := sh.LastErrorAt
			v.LastError, v.LastErrorAt = storeurl.RedactIn(sh.LastError.Error(), raw), &at
		}
		if !sh.ProbedAt.IsZero() {
			ms := float64(sh.RoundTrip.Microseconds()) / 1000
			v.RoundTripMS = &ms
		}
		if sh.QueuesRead {
			j := &shardJobs{}
			for _, q := range sh.Queues {
				j.Available += q.Available
				j.Scheduled += q.Scheduled
				j.Retryable += q.Retryable
				j.Running += q.Running
			}
			v.Jobs = j
		}
		if window := sh.FinishedUntil.Sub(sh.FinishedSince); sh.FinishedRead && window > 0 {
			var n int64
			for _, f := range sh.Finished {
				n += f.Completed
			}
			rate := float64(n) / window.Seconds()
			v.CompletedPerSec = &rate
		}
		if i < len(prev) && since > 0 && sh.ClaimedJobs >= prev[i].ClaimedJobs {
			v.ClaimedPerSec = float64(sh.ClaimedJobs-prev[i].ClaimedJobs) / since.Seconds()
		}
		out = append(out, v)
	}
	return out
}

// shards returns the last sample of the shards, or the fleet's health as
// it stands before the first; nil for a lone store.
func (s *Server) shards() (time.Time, []shardView) {
	if s.fleet == nil {
		return time.Time{}, nil
	}
	at, r := s.shardSample.get()
	if at.IsZero() {
		return at, s.shardViews(s.fleet.Health(), nil, 0)
	}
	return at, r.views
}

// listShards answers GET /v1/shards.
func (s *Server) listShards(w http.ResponseWriter, r *http.Request) error {
	if len(r.URL.Query()) > 0 {
		return badRequest("query parameters: none are taken")
	}
	at, views := s.shards()
	body := map[string]any{"fleet": s.fleet != nil, "shards": append([]shardView{}, views...)}
	if !at.IsZero() {
		body["sampled_at"] = at
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

// shardQueues is each shard's part of the queue figures the fleet read
// last (nil for a shard that did not answer), or nil for a lone store.
func (s *Server) shardQueues() [][]drovertype.QueueStats {
	if s.fleet == nil {
		return nil
	}
	h := s.fleet.Health()
	out := make([][]drovertype.QueueStats, len(h))
	for i, sh := range h {
		if sh.QueuesRead {
			out[i] = make([]drovertype.QueueStats, len(sh.Queues))
			for k, q := range sh.Queues {
				out[i][k] = drovertype.QueueStats(q)
			}
		}
	}
	return out
}

// shardsPage is the dashboard's page of the shards.
func (s *Server) shardsPage(w http.ResponseWriter, r *http.Request) error {
	at, views := s.shards()
	return render(w, http.StatusOK, s.pages.shards, struct {
		page
		Shards   []shardView
		Sampled  time.Time
		Interval time.Duration
	}{s.page("Shards", ""), views, at, s.cfg.SampleInterval})
}
