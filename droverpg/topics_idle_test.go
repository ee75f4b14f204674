package droverpg_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/maintenance"
	"github.com/droverhq/drover/internal/testkit/pgcluster"
	"github.com/droverhq/drover/internal/testkit/waitfor"
)

// TestTopicIdleTransactionsHoldNothingBack is issue 33's "one idle
// transaction anywhere stops every topic". Transactions that never
// published, left open in another database and in this one, prepared
// transactions forgotten in both, must not hold back delivery nor the
// retention of a generation: before, readers and retention waited for the
// cluster's oldest transaction. A transaction that did publish and stays
// open delays its own messages only, holds back the generation it wrote
// to, and is reported with its session (TopicPublishers, and the leader's
// PublisherWatch). Prepared transactions need max_prepared_transactions,
// hence a cluster of its own.
func TestTopicIdleTransactionsHoldNothingBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cluster, err := pgcluster.Start(ctx, pgcluster.Options{Settings: map[string]string{
		"fsync": "off", "synchronous_commit": "off", "max_prepared_transactions": "8"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	connect := func(url string) *pgx.Conn {
		t.Helper()
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close(ctx) })
		return conn
	}
	exec := func(conn *pgx.Conn, sql ...string) {
		t.Helper()
		for _, s := range sql {
			if _, err := conn.Exec(ctx, s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	exec(connect(cluster.AdminURL()), "CREATE DATABASE other")
	otherURL := strings.Replace(cluster.AdminURL(), "/postgres?", "/other?", 1)

	pool, err := pgxpool.New(ctx, cluster.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	d, err := droverpg.New(pool)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drover.Migrate(ctx, d); err != nil {
		t.Fatal(err)
	}
	client, err := drover.NewClient(d, &drover.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateTopic(ctx, "chat", &drover.TopicOpts{Lanes: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CreateSubscription(ctx, "chat", "reader", &drover.SubscriptionOpts{FromEarliest: true}); err != nil {
		t.Fatal(err)
	}
	publish := func(payload string) int64 {
		t.Helper()
		ids, err := client.Publish(ctx, "chat", drover.Message{Payload: []byte(payload)})
		if err != nil {
			t.Fatal(err)
		}
		return ids[0]
	}

	// The idle: each holds an xid (it wrote) and never publishes.
	exec(connect(otherURL), "BEGIN", "CREATE TABLE app (v int)", "INSERT INTO app VALUES (1)")
	exec(connect(otherURL), "BEGIN", "CREATE TABLE app2 (v int)", "PREPARE TRANSACTION 'other-forgotten'")
	exec(connect(cluster.URL()), "CREATE TABLE app (v int)")
	exec(connect(cluster.URL()), "BEGIN", "INSERT INTO app VALUES (1)")
	exec(connect(cluster.URL()), "BEGIN", "INSERT INTO app VALUES (2)", "PREPARE TRANSACTION 'forgotten'")
	t.Cleanup(func() {
		admin := connect(cluster.URL())
		_, _ = admin.Exec(ctx, "ROLLBACK PREPARED 'forgotten'")
		_, _ = connect(otherURL).Exec(ctx, "ROLLBACK PREPARED 'other-forgotten'")
	})

	// A message published after all of them began is delivered.
	first := publish("after the idle began")
	if got := drainWithin(t, d, 5*time.Second); !slices.Equal(got, []int64{first}) {
		t.Fatalf("read %v with idle transactions open, want [%d]", got, first)
	}
	// A generation sealed after they began settles, and goes once read.
	gens, err := d.Executor().(droverdriver.TopicExecutor).TopicGenerations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sealed := gens[len(gens)-1].Gen
	if err := d.Executor().(droverdriver.TopicExecutor).TopicRotate(ctx, sealed+1); err != nil {
		t.Fatal(err)
	}
	if !settledWithin(t, d, sealed, 5*time.Second) {
		t.Fatalf("generation %d not settled while only transactions that never published were open", sealed)
	}
	retainer := &maintenance.TopicRetainer{Exec: d.Executor().(droverdriver.TopicExecutor), MaxMessages: 1 << 30}
	if dropped, lost, err := retainer.RunOnce(ctx); err != nil || dropped != 1 || lost != 0 {
		t.Fatalf("retention pass: dropped %d, lost %d, %v; want the read generation dropped", dropped, lost, err)
	}
	if open, err := client.TopicPublishers(ctx); err != nil || len(open) != 0 {
		t.Fatalf("open publishers %+v, %v; want none: no open transaction published", open, err)
	}

	// Publishers left open: one idle in its transaction, one prepared,
	// both writing to the current generation, which a rotation seals
	// meanwhile. (The rotation attaches the next generation's partition,
	// which open publishers do not hold up: migration 022.)
	gens, err = d.Executor().(droverdriver.TopicExecutor).TopicGenerations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sealed = gens[len(gens)-1].Gen
	heldConn := connect(cluster.URL())
	exec(heldConn, "SET application_name = 'outbox-relay'")
	heldTx, err := heldConn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held, err := client.PublishTx(ctx, heldTx, "chat", drover.Message{Payload: []byte("held")})
	if err != nil {
		t.Fatal(err)
	}
	// PublishTx notifies consumers, which PREPARE refuses: a prepared
	// transaction that wrote messages inserted them with SQL of its own.
	preparedConn := connect(cluster.URL())
	exec(preparedConn, "BEGIN")
	var prepared int64
	if err := preparedConn.QueryRow(ctx, "INSERT INTO drover.topic_messages (topic, lane, payload) VALUES ('chat', 0, 'prepared') RETURNING id").Scan(&prepared); err != nil {
		t.Fatal(err)
	}
	exec(preparedConn, "PREPARE TRANSACTION 'outbox-1'")
	open, err := client.TopicPublishers(ctx)
	if err != nil || len(open) != 2 {
		t.Fatalf("open publishers %+v, %v; want the held and the prepared one", open, err)
	}
	if p := open[0]; p.PID != int(heldConn.PgConn().PID()) || p.ApplicationName != "outbox-relay" ||
		p.State != "idle in transaction" || time.Since(p.Started) > time.Minute || p.GID != "" {
		t.Fatalf("held publisher reported as %+v", p)
	}
	if p := open[1]; p.PID != 0 || p.State != "prepared" || p.GID != "outbox-1" || p.Started.IsZero() || p.Xid <= open[0].Xid {
		t.Fatalf("prepared publisher reported as %+v", p)
	}
	watch := &maintenance.PublisherWatch{Exec: d.Executor().(droverdriver.TopicExecutor)}
	if stalled, err := watch.RunOnce(ctx, time.Now()); err != nil || len(stalled) != 2 {
		t.Fatalf("the watch's first pass reported %+v, %v; want both", stalled, err)
	}
	if stalled, err := watch.RunOnce(ctx, time.Now()); err != nil || len(stalled) != 0 {
		t.Fatalf("the watch's second pass reported %+v, %v; want none (each once)", stalled, err)
	}

	// They delay their own messages only; the generation they wrote to
	// does not settle while they are open.
	if err := d.Executor().(droverdriver.TopicExecutor).TopicRotate(ctx, sealed+1); err != nil {
		t.Fatal(err)
	}
	later := publish("while they are open")
	if got := drainWithin(t, d, 5*time.Second); !slices.Equal(got, []int64{later}) {
		t.Fatalf("read %v with two publishers open, want the later message %d alone", got, later)
	}
	if settledWithin(t, d, sealed, 200*time.Millisecond) {
		t.Fatalf("generation %d settled while publishers that wrote to it were open", sealed)
	}
	// Each is delivered once it commits, the held one although its ID is
	// lower.
	exec(connect(cluster.URL()), "COMMIT PREPARED 'outbox-1'")
	if got := drainWithin(t, d, 5*time.Second); !slices.Equal(got, []int64{prepared}) {
		t.Fatalf("read %v after the prepared publisher committed, want [%d]", got, prepared)
	}
	if err := heldTx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := drainWithin(t, d, 5*time.Second); !slices.Equal(got, held) {
		t.Fatalf("read %v after the held publisher committed, want %v", got, held)
	}
	if !settledWithin(t, d, sealed, 5*time.Second) {
		t.Fatalf("generation %d not settled once its publishers ended", sealed)
	}
}

// drainWithin reads, through the driver as a consumer does, what subscription
// reader of topic chat has past its cursor, acknowledging it, until a read
// finds something and the next nothing, for at most wait.
func drainWithin(t *testing.T, d *droverpg.Driver, wait time.Duration) []int64 {
	t.Helper()
	ctx := context.Background()
	var out []int64
	waitfor.Within(wait, func() bool {
		token := drovertype.NewLeaseToken()
		leased, err := d.Executor().(droverdriver.TopicExecutor).TopicLease(ctx, droverdriver.TopicLeaseParams{Owner: "t", Token: token, Lease: time.Minute, Max: 1, Now: time.Now(),
			Subscriptions: []droverdriver.SubscriptionRef{{Topic: "chat", Name: "reader"}}, Limits: []int{100}})
		if err != nil {
			t.Fatal(err)
		}
		if len(leased) == 0 {
			return len(out) > 0
		}
		rows, err := d.Executor().(droverdriver.TopicExecutor).TopicRead(ctx, droverdriver.TopicReadParams{Topics: []string{"chat"}, Lanes: []int{leased[0].Lane},
			Cursors: []droverdriver.Position{leased[0].Cursor}, Tos: []droverdriver.Position{leased[0].To}, Limits: []int{leased[0].Limit}})
		if err != nil {
			t.Fatal(err)
		}
		cursor := leased[0].Cursor
		for _, m := range rows {
			out, cursor = append(out, m.ID), m.Position()
		}
		if _, err := d.Executor().(droverdriver.TopicExecutor).TopicAck(ctx, droverdriver.TopicAckParams{Now: time.Now(), Acks: []droverdriver.LaneAck{
			{Topic: "chat", Subscription: "reader", Lane: leased[0].Lane, Token: token, Cursor: cursor, Count: len(rows)}}}); err != nil {
			t.Fatal(err)
		}
		return false
	})
	return out
}

// settledWithin reports whether generation gen is settled within wait.
func settledWithin(t *testing.T, d *droverpg.Driver, gen int64, wait time.Duration) bool {
	t.Helper()
	return waitfor.Within(wait, func() bool {
		gens, err := d.Executor().(droverdriver.TopicExecutor).TopicGenerations(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range gens {
			if g.Gen == gen {
				return g.Settled
			}
		}
		return false
	})
}
