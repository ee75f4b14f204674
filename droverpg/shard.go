package droverpg

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverdriver/sqlstmt"
)

// A store as one shard of a fleet (droverdriver.ShardExecutor, migration
// 025).

var (
	shardGet     = def(stmt[struct{}]{name: "ShardGet", cols: 4, args: sqlstmt.NoArgs})
	shardLastIDs = def(stmt[struct{}]{name: "ShardLastIDs", cols: 2, args: sqlstmt.NoArgs})
	shardAttach  = def(stmt[shardAttachParams]{name: "ShardAttach", cols: 1,
		args: func(p *shardAttachParams) []any { return []any{p.Fleet, p.Index, p.KeyShards, p.Base} }})
	shardSetDraining = def(stmt[bool]{name: "ShardSetDraining", args: sqlstmt.OneArg[bool]})
)

type shardAttachParams struct {
	Fleet     string
	Index     int
	KeyShards int
	Base      int64
}

var _ droverdriver.ShardExecutor = (*executor)(nil)

func (e *executor) ShardGet(ctx context.Context) (*droverdriver.ShardRecord, error) {
	return e.shardGet(ctx, e.db)
}

func (e *executor) shardGet(ctx context.Context, db dbtx) (*droverdriver.ShardRecord, error) {
	var r droverdriver.ShardRecord
	err := shardGet.queryRow(ctx, db, e.q, struct{}{}).Scan(&r.Fleet, &r.Index, &r.KeyShards, &r.Draining)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, e.wrap("read shard record", err)
	}
	return &r, nil
}

// ShardAttach locks the record table before it reads the record, so that
// two processes attaching one database at once record it once.
func (e *executor) ShardAttach(ctx context.Context, p droverdriver.ShardRecord) (*droverdriver.ShardRecord, error) {
	var out *droverdriver.ShardRecord
	err := pgx.BeginFunc(ctx, e.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "LOCK TABLE "+pgx.Identifier{e.schema, "fleet_shard"}.Sanitize()+" IN EXCLUSIVE MODE"); err != nil {
			return e.wrap("lock shard record", err)
		}
		rec, err := e.shardGet(ctx, tx)
		if err != nil || rec != nil {
			out = rec
			return err
		}
		base := droverdriver.ShardBase(p.Index)
		var jobs, batches *int64
		if err := shardLastIDs.queryRow(ctx, tx, e.q, struct{}{}).Scan(&jobs, &batches); err != nil {
			return e.wrap("read last IDs", err)
		}
		for _, last := range []struct {
			what string
			id   *int64
		}{{"job", jobs}, {"batch", batches}} {
			if last.id != nil && (*last.id < base || droverdriver.ShardOf(*last.id) != p.Index) {
				return fmt.Errorf("%w: schema %q drew %s ID %d, outside shard %d's range [%d, %d): attach an empty database as a new shard",
					droverdriver.ErrShardIDs, e.schema, last.what, *last.id, p.Index, base, droverdriver.ShardBase(p.Index+1))
			}
		}
		rows, err := shardAttach.query(ctx, tx, e.q, shardAttachParams{p.Fleet, p.Index, p.KeyShards, base})
		if err == nil {
			rows.Close()
			err = rows.Err()
		}
		if err != nil {
			return e.wrap("record shard", err)
		}
		r := p
		r.Draining = false
		out = &r
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (e *executor) ShardSetDraining(ctx context.Context, draining bool) error {
	_, err := shardSetDraining.exec(ctx, e.db, e.q, draining)
	return e.wrap("set shard draining", err)
}
