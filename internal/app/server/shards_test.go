package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	dto "github.com/prometheus/client_model/go"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/app/server"
	"github.com/droverhq/drover/internal/testkit/pgcluster"
	"github.com/droverhq/drover/internal/testkit/testdb"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// shardsJSON is GET /v1/shards.
type shardsJSON struct {
	Fleet  bool `json:"fleet"`
	Shards []struct {
		Index     int    `json:"index"`
		Address   string `json:"address"`
		Attached  bool   `json:"attached"`
		Up        bool   `json:"up"`
		Error     string `json:"error"`
		LastError string `json:"last_error"`
		Jobs      *struct {
			Available int64 `json:"available"`
		} `json:"jobs"`
		ClaimedJobs uint64 `json:"claimed_jobs"`
	} `json:"shards"`
}

func (b *bundle) shards(t *testing.T) shardsJSON {
	t.Helper()
	var s shardsJSON
	b.must(t, http.StatusOK, server.ScopeAdmin, "GET", "/v1/shards", nil).decode(t, &s)
	return s
}

// TestShardsOfAFleet: drover serve on a fleet of two shards, shard 1 a
// server of its own that is stopped. Before, the shards endpoint, the
// metrics and the shards page show both up with their jobs; while shard 1
// is down, all three show it down with its error, while shard 0 keeps
// taking and handing out jobs.
func TestShardsOfAFleet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c1, err := pgcluster.Start(ctx, pgcluster.Options{Settings: map[string]string{"fsync": "off"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c1.Stop() })
	var fleet *droverfleet.Driver[pgx.Tx]
	open := func(t *testing.T) (droverdriver.Driver, testClient) {
		d0, err := droverpg.New(testdb.NewPool(t), droverpg.WithSchema(testdb.NewSchema(t)))
		if err != nil {
			t.Fatal(err)
		}
		d1, err := droverpg.New(testdb.PoolAt(t, c1.URL()+"&connect_timeout=2", 4))
		if err != nil {
			t.Fatal(err)
		}
		f, err := droverfleet.New(ctx, []droverdriver.TxDriver[pgx.Tx]{d0, d1}, droverfleet.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fleet = f
		return f, newClient(t, f, func(cfg *drover.Config) (testClient, error) { return drover.NewClient(f, cfg) })
	}
	b := setup(t, open, func(cfg *server.Config) {
		cfg.Shards = fleet
		cfg.ShardURLs = []string{"postgres://drover:s3cret@shard0.example:5432/drover", c1.URL()}
	})
	for range 4 {
		b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{}})
	}
	var s shardsJSON
	waitfor.Cond(t, "a sample of both shards with two jobs each", func() bool {
		s = b.shards(t)
		return len(s.Shards) == 2 && s.Shards[0].Jobs != nil && s.Shards[0].Jobs.Available == 2 &&
			s.Shards[1].Jobs != nil && s.Shards[1].Jobs.Available == 2
	})
	if !s.Fleet || !s.Shards[0].Up || !s.Shards[1].Up || !s.Shards[0].Attached || s.Shards[0].Address != "postgres://drover:xxxxx@shard0.example:5432/drover" {
		t.Fatalf("shards before the outage: %+v; want a fleet of two attached shards up, shard 0's address without its password", s)
	}
	// The endpoint reads the fleet's health, which the sampler's read of
	// the queues updates before it sets the gauges from it.
	var fams map[string]*dto.MetricFamily
	waitfor.Cond(t, "the metrics' sample of both shards", func() bool {
		fams = b.scrape(t)
		return value(fams, "drover_queue_jobs", map[string]string{"queue": "default", "state": "available", "shard": "1"}) == 2
	})
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"drover_shard_up", map[string]string{"shard": "0"}, 1},
		{"drover_shard_up", map[string]string{"shard": "1"}, 1},
		{"drover_shard_jobs", map[string]string{"shard": "1", "state": "available"}, 2},
		{"drover_queue_jobs", map[string]string{"queue": "default", "state": "available", "shard": "0"}, 2},
		{"drover_queue_jobs", map[string]string{"queue": "default", "state": "available", "shard": "1"}, 2},
	} {
		if got := value(fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v before the outage, want %v", c.name, c.labels, got, c.want)
		}
	}

	if err := c1.StopServer(); err != nil {
		t.Fatal(err)
	}
	// A sample may have read shard 1's figures before it stopped and found
	// it down after: the next one reads none.
	waitfor.Cond(t, "the endpoint to show shard 1 down, its figures unread", func() bool {
		s = b.shards(t)
		return !s.Shards[1].Up && s.Shards[1].Jobs == nil
	})
	if s.Shards[1].Error == "" || s.Shards[1].LastError == "" || !s.Shards[0].Up || s.Shards[0].Jobs == nil {
		t.Fatalf("shards while shard 1 is down: %+v; want shard 1 down with its error and no figures, shard 0 up with its", s)
	}
	waitfor.Cond(t, "the metrics' sample without shard 1's figures", func() bool {
		fams = b.scrape(t)
		return value(fams, "drover_queue_jobs", map[string]string{"queue": "default", "state": "available", "shard": "1"}) == -1
	})
	if up0, up1 := value(fams, "drover_shard_up", map[string]string{"shard": "0"}), value(fams, "drover_shard_up", map[string]string{"shard": "1"}); up0 != 1 || up1 != 0 {
		t.Errorf("drover_shard_up while shard 1 is down: shard 0 %v, shard 1 %v; want 1 and 0", up0, up1)
	}
	if q0, q1 := value(fams, "drover_queue_jobs", map[string]string{"queue": "default", "state": "available", "shard": "0"}),
		value(fams, "drover_queue_jobs", map[string]string{"queue": "default", "state": "available", "shard": "1"}); q0 != 2 || q1 != -1 {
		t.Errorf("drover_queue_jobs of queue default while shard 1 is down: shard 0 %v, shard 1 %v; want 2 and no series", q0, q1)
	}
	page := b.page(t, "/ui/shards")
	row1 := page[strings.Index(page, `data-shard="1"`):]
	row1 = row1[:strings.Index(row1, "</tr>")]
	if !strings.Contains(row1, ">down<") || !strings.Contains(row1, "not read") || strings.Contains(page, "s3cret") {
		t.Fatalf("shards page while shard 1 is down, its row: %s; want it down and its figures not read, no password on the page", row1)
	}
	if !strings.Contains(page, `href="/ui/shards"`) {
		t.Fatal("the menu of a fleet's dashboard has no shards page")
	}

	// Shard 0 keeps working: a new job goes there and is handed out.
	id := b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{}, "queue": "during"})[0]
	if droverdriver.ShardOf(id) != 0 {
		t.Fatalf("job %d inserted while shard 1 is down is on shard %d, want 0", id, droverdriver.ShardOf(id))
	}
	if jobs := b.claim(t, map[string]any{"queue": "during", "worker": "w", "max": 5}); len(jobs) != 1 || jobs[0].ID != id {
		t.Fatalf("claim while shard 1 is down: %+v, want job %d", jobs, id)
	}
	waitfor.Cond(t, "the endpoint to count shard 0's claim", func() bool { return b.shards(t).Shards[0].ClaimedJobs > 0 })
}

// TestShardsOfALoneStore: a lone database has no shards: the endpoint
// lists none, no metric has a shard label, the shards page says so and
// the menu has no link to it.
func TestShardsOfALoneStore(t *testing.T) {
	forEachStore(t, func(t *testing.T, b *bundle) {
		b.enqueue(t, map[string]any{"kind": "k", "args": map[string]any{}})
		if s := b.shards(t); s.Fleet || len(s.Shards) != 0 {
			t.Fatalf("GET /v1/shards of a lone store: %+v, want no fleet and no shards", s)
		}
		waitfor.Cond(t, "a sample of the queue", func() bool {
			return value(b.scrape(t), "drover_queue_jobs", map[string]string{"queue": "default", "state": "available"}) == 1
		})
		for name, f := range b.scrape(t) {
			for _, m := range f.Metric {
				for _, l := range m.Label {
					if l.GetName() == "shard" {
						t.Fatalf("%s has a shard label on a lone store", name)
					}
				}
			}
		}
		page := b.page(t, "/ui/shards")
		if !strings.Contains(page, `data-testid="no-shards"`) || strings.Contains(page, `href="/ui/shards"`) {
			t.Fatalf("shards page of a lone store: want the note that it has no shards and no menu link: %s", page)
		}
	})
}
