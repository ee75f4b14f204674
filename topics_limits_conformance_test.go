package drover_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverfleet"
	"github.com/droverhq/drover/droverpg"
	"github.com/droverhq/drover/droversqlite"
)

// publishInTx publishes msgs on topic with PublishTx, in a transaction of
// the store's own type that it commits when the publish succeeded and
// rolls back otherwise, and returns the publish's error.
func publishInTx(t *testing.T, d droverdriver.Driver, c topicClient, topic string, msgs ...drover.Message) error {
	t.Helper()
	ctx := context.Background()
	switch d := d.(type) {
	case *droverpg.Driver, *droverfleet.Driver[pgx.Tx]:
		// A fleet's shards share one pool in tests: its transaction is
		// one on any shard.
		tx, err := pgPool(d).Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if _, err := c.(*drover.Client[pgx.Tx]).PublishTx(ctx, tx, topic, msgs...); err != nil {
			return err
		}
		return tx.Commit(ctx)
	case *droversqlite.Driver:
		tx, err := d.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := c.(*drover.Client[*sql.Tx]).PublishTx(ctx, tx, topic, msgs...); err != nil {
			return err
		}
		return tx.Commit()
	}
	t.Fatalf("no publishInTx for %T", d)
	return nil
}

// TestTopicPublishRefusesOversizeAndBadText publishes, through Publish,
// PublishTx and PublishMany, a good message beside one whose payload is
// over MaxMessagePayloadBytes, whose metadata is over MaxMetadataBytes,
// or whose metadata holds text a store cannot hold (invalid UTF-8, \u0000,
// a lone surrogate): each call is refused with an input error naming the
// message and the field, and nothing of it is stored. Before, payloads had
// no bound at all, and such metadata failed PostgreSQL's statement (a
// store error, not the caller's) and was stored raw on SQLite. A payload
// of exactly the limit, binary and not UTF-8, is stored and delivered.
func TestTopicPublishRefusesOversizeAndBadText(t *testing.T) {
	forEachStore(t, func(t *testing.T, s store) {
		ctx := context.Background()
		d, c := topicSetup(t, s, 1, "reader")
		good := drover.Message{Payload: []byte("fine"), Metadata: []byte(`{"a":"b"}`)}
		cases := []struct {
			name string
			bad  drover.Message
			want string
		}{
			{"payload over the limit", drover.Message{Payload: make([]byte, drover.MaxMessagePayloadBytes+1)},
				"payload: 1048577 bytes is over the limit of 1048576"},
			{"metadata over the limit", drover.Message{Metadata: []byte(`{"a":"` + strings.Repeat("x", drover.MaxMetadataBytes) + `"}`)},
				"metadata: 65544 bytes is over the limit of 65536"},
			{"metadata with invalid UTF-8", drover.Message{Metadata: []byte("{\"a\":\"\xff\"}")},
				"metadata: invalid UTF-8 at byte 6"},
			{"metadata with NUL", drover.Message{Metadata: []byte(`{"a":"x\u0000"}`)},
				`metadata: contains \u0000 at byte 7`},
			{"metadata with a lone surrogate", drover.Message{Metadata: []byte(`{"a":"\ud800"}`)},
				`metadata: unpaired surrogate escape \ud800 at byte 6`},
		}
		publishers := []struct {
			name    string
			publish func(msgs ...drover.Message) error
		}{
			{"Publish", func(msgs ...drover.Message) error { _, err := c.Publish(ctx, "chat", msgs...); return err }},
			{"PublishTx", func(msgs ...drover.Message) error { return publishInTx(t, d, c, "chat", msgs...) }},
			{"PublishMany", func(msgs ...drover.Message) error {
				for i := range msgs {
					msgs[i].Topic = "chat"
				}
				_, err := c.PublishMany(ctx, msgs)
				return err
			}},
		}
		for _, p := range publishers {
			for _, tc := range cases {
				err := p.publish(good, tc.bad)
				if !errors.Is(err, drover.ErrInvalid) || !strings.HasPrefix(err.Error(), "message 2 of 2: ") || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s of %s: %v; want an input error naming message 2 of 2 and saying %q", p.name, tc.name, err, tc.want)
				}
			}
		}
		if got := drain(t, d, "reader"); len(got) != 0 {
			t.Fatalf("refused publishes stored %v", got)
		}

		// The limit itself is allowed, whatever the bytes.
		big := make([]byte, drover.MaxMessagePayloadBytes)
		for i := range big {
			big[i] = byte(i)
		}
		ids, err := c.Publish(ctx, "chat", drover.Message{Payload: big})
		if err != nil {
			t.Fatalf("a payload of exactly the limit: %v", err)
		}
		rows := drainN(t, d, "chat", "reader", 1)
		if len(rows) != 1 || rows[0] != ids[0] {
			t.Fatalf("read %v, want the message %d of the limit's size", rows, ids[0])
		}
	})
}
