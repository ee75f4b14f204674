package droverfleet_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/internal/testkit/testdb"
)

// TestTransactionsThatMeetOutOfOrder runs fleet transactions that take
// two shards in opposite orders at once, each writing a key's row on
// both. On pools of one connection, one that holds shard 0's connection
// waits for shard 1's while another does the opposite; on larger pools,
// one that holds key A's row on shard 0 waits for key B's on shard 1
// while another does the opposite. Neither cycle is one that a pool or a
// PostgreSQL sees. They must all commit, each job once.
func TestTransactionsThatMeetOutOfOrder(t *testing.T) {
	for _, conns := range []int32{1, 4} {
		t.Run(fmt.Sprintf("pools of %d", conns), func(t *testing.T) {
			t.Parallel()
			meetOutOfOrder(t, conns)
		})
	}
}

func meetOutOfOrder(t *testing.T, conns int32) {
	url := testdb.URL(t)
	var ds []droverdriver.TxDriver[pgx.Tx]
	var pools []*droverpg.Driver
	for range 2 {
		d, err := droverpg.New(testdb.PoolAt(t, url, conns), droverpg.WithSchema(testdb.NewSchema(t)))
		if err != nil {
			t.Fatal(err)
		}
		ds, pools = append(ds, d), append(pools, d)
	}
	f, err := droverfleet.New(context.Background(), ds, droverfleet.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := drover.Migrate(ctx, f); err != nil {
		t.Fatal(err)
	}
	ex := f.Executor()
	// A key lives on one shard: find one key on each.
	keyOn := map[int]string{}
	for i := 0; len(keyOn) < 2; i++ {
		j := job("default")
		j.Key = fmt.Sprintf("probe-%d", i)
		ids, err := ex.JobInsertMany(ctx, []droverdriver.InsertParams{j})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := keyOn[droverdriver.ShardOf(ids[0])]; !ok {
			keyOn[droverdriver.ShardOf(ids[0])] = j.Key
		}
	}
	probes := 0
	for _, d := range pools {
		probes += countJobs(t, ctx, d)
	}
	const writers, rounds = 6, 4
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for w := range writers {
		first, second := keyOn[w%2], keyOn[1-w%2]
		wg.Go(func() {
			for range rounds {
				errs <- ex.Tx(ctx, func(ctx context.Context, tx droverdriver.Executor) error {
					for _, key := range []string{first, second} {
						j := job("default")
						j.Key = key
						if _, err := tx.JobInsertMany(ctx, []droverdriver.InsertParams{j}); err != nil {
							return err
						}
					}
					return nil
				})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	stored := 0
	for _, d := range pools {
		stored += countJobs(t, ctx, d)
	}
	if want := probes + writers*rounds*2; stored != want {
		t.Fatalf("%d jobs stored; want %d", stored, want)
	}
}

func countJobs(t *testing.T, ctx context.Context, d *droverpg.Driver) int {
	t.Helper()
	var n int
	if err := d.Pool().QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{d.Schema(), "jobs"}.Sanitize()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
