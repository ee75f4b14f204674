package droverprom_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverprom"
	"github.com/droverhq/drover/drovertype"
)

// fleetHealth is a fleet's health as droverfleet reports it; the fleet
// itself (PostgreSQL shards, one stopped) is droverfleet's
// TestShardHealth and the server's TestShardsOfAFleet.
type fleetHealth []droverfleet.ShardHealth

func (h fleetHealth) Health() []droverfleet.ShardHealth { return h }

func (h fleetHealth) Probe(context.Context) ([]droverfleet.ShardHealth, error) { return h, nil }

// TestShardCollector: every shard's series carry its index as the shard
// label: a shard that answers is up, with its claims, round trip and jobs
// per state; one that does not is down, with when it last failed, and
// without jobs while it did not answer the queue figures. A client's own
// collector has no shard label.
func TestShardCollector(t *testing.T) {
	t.Parallel()
	failedAt := time.Unix(1_800_000_000, 0)
	h := fleetHealth{
		{ShardStatus: droverfleet.ShardStatus{Index: 0, Record: &droverdriver.ShardRecord{Index: 0, Fleet: "f"}},
			RoundTrip: 2 * time.Millisecond, ProbedAt: time.Now(), Claims: 5, ClaimedJobs: 40, QueuesRead: true,
			Queues: []drovertype.QueueStats{{Queue: "a", Available: 3, Running: 2}, {Queue: "b", Available: 4, Scheduled: 1}}},
		{ShardStatus: droverfleet.ShardStatus{Index: 1, Record: &droverdriver.ShardRecord{Index: 1, Fleet: "f", Draining: true}, Down: errors.New("connection refused")},
			LastError: errors.New("connection refused"), LastErrorAt: failedAt, Claims: 3, ClaimedJobs: 7, ClaimErrors: 1, Unreachable: 2},
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(droverprom.NewShardCollector(h))
	got := (&testBundle{reg: reg}).gather(t)
	want := map[string]float64{
		"drover_shard_up{shard=0}": 1, "drover_shard_up{shard=1}": 0,
		"drover_shard_attached{shard=1}": 1, "drover_shard_draining{shard=0}": 0, "drover_shard_draining{shard=1}": 1,
		"drover_shard_claims_total{shard=0}": 5, "drover_shard_claimed_jobs_total{shard=0}": 40,
		"drover_shard_claimed_jobs_total{shard=1}": 7, "drover_shard_claim_errors_total{shard=1}": 1,
		"drover_shard_unreachable_total{shard=1}":            2,
		"drover_shard_last_error_timestamp_seconds{shard=1}": 1_800_000_000,
		"drover_shard_round_trip_seconds{shard=0}":           0.002,
		"drover_shard_jobs{shard=0,state=available}":         7,
		"drover_shard_jobs{shard=0,state=scheduled}":         1,
		"drover_shard_jobs{shard=0,state=running}":           2,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %t), want %v", k, g, ok, v)
		}
	}
	for _, absent := range []string{"drover_shard_last_error_timestamp_seconds{shard=0}", "drover_shard_round_trip_seconds{shard=1}", "drover_shard_jobs{shard=1,state=available}"} {
		if _, ok := got[absent]; ok {
			t.Errorf("%s is present; want it absent", absent)
		}
	}

	b := setup(t)
	for k := range b.gather(t) {
		if strings.Contains(k, "shard=") {
			t.Errorf("a lone store's collector has a shard label: %s", k)
		}
	}
}
