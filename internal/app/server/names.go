package server

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover"
)

// names are the queues and kinds the dashboard's filters and forms
// suggest (a datalist under each input), read at most every namesFor:
// queues from the last sample and the stored settings, kinds from the last
// minutes of the stored history and the periodic jobs.
type names struct {
	mu            sync.Mutex
	at            time.Time
	queues, kinds []string
}

// namesFor is how long the names read are suggested before they are read
// again: a new queue or kind shows within a minute.
const namesFor = 30 * time.Second

// namesSince is how far back the history is read for kinds: the series a
// minute sample holds are those of the kinds with jobs, or that finished,
// in that minute.
const namesSince = 15 * time.Minute

// knownNames returns the queues and kinds to suggest, sorted. A read that
// fails suggests what was read before: a suggestion is never worth an
// error page.
func (s *Server) knownNames(ctx context.Context) (queues, kinds []string) {
	s.names.mu.Lock()
	defer s.names.mu.Unlock()
	n := s.names
	now := time.Now()
	if now.Sub(n.at) < namesFor {
		return n.queues, n.kinds
	}
	qs, ks := map[string]bool{}, map[string]bool{}
	p, _ := s.history.latest()
	for _, q := range p.Queues {
		qs[q.Queue] = true
	}
	for _, f := range p.Finished {
		qs[f.Queue] = true
	}
	if settings, err := s.cfg.Client.QueueList(ctx); err == nil {
		for _, q := range settings {
			qs[q.Queue] = true
		}
	}
	if h, err := s.cfg.Client.StatsHistory(ctx, drover.StatsHistoryParams{From: now.Add(-namesSince), Queue: drover.StatsEach, Kind: drover.StatsEach}); err == nil {
		for _, x := range h.Samples {
			qs[x.Queue], ks[x.Kind] = true, true
		}
	}
	if ps, err := s.cfg.Client.PeriodicJobs().List(ctx); err == nil {
		for _, x := range ps {
			ks[x.Kind] = true
			if x.Queue != "" {
				qs[x.Queue] = true
			}
		}
	}
	n.at = now
	n.queues, n.kinds = slices.Sorted(maps.Keys(qs)), slices.Sorted(maps.Keys(ks))
	return n.queues, n.kinds
}
