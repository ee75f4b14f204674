package droverpg

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverdriver/sqlstmt"
)

// The bulk tasks of drover serve (droverdriver.BulkTaskExecutor).

var (
	bulkTaskInsert = def(stmt[bulkTaskInsertParams]{name: "BulkTaskInsert", cols: 1,
		args: func(p *bulkTaskInsertParams) []any {
			return []any{p.Action, p.Queue, p.Kind, p.State, p.Selected, p.Status, p.Now, p.Keep}
		}})
	bulkTaskUpdate = def(stmt[droverdriver.BulkTaskUpdateParams]{name: "BulkTaskUpdate",
		args: func(p *droverdriver.BulkTaskUpdateParams) []any {
			return []any{p.ID, p.Status, p.Matched, p.Changed, p.Error, p.Now}
		}})
	bulkTaskGet = def(stmt[int64]{name: "BulkTaskGet", cols: 12, args: sqlstmt.OneArg[int64]})
)

type bulkTaskInsertParams struct {
	Action, Queue, Kind, State string
	Selected                   int
	Status                     string
	Now                        time.Time
	Keep                       int
}

func (e *executor) BulkTaskInsert(ctx context.Context, t *droverdriver.BulkTaskRow, keep int) (int64, error) {
	var id int64
	err := bulkTaskInsert.queryRow(ctx, e.db, e.q, bulkTaskInsertParams{t.Action, t.Queue, t.Kind, t.State, t.Selected, t.Status,
		t.StartedAt, keep}).Scan(&id)
	return id, e.wrap("store bulk task", err)
}

func (e *executor) BulkTaskUpdate(ctx context.Context, p droverdriver.BulkTaskUpdateParams) error {
	_, err := bulkTaskUpdate.exec(ctx, e.db, e.q, p)
	return e.wrap("update bulk task", err)
}

func (e *executor) BulkTaskGet(ctx context.Context, id int64) (*droverdriver.BulkTaskRow, error) {
	var t droverdriver.BulkTaskRow
	err := bulkTaskGet.queryRow(ctx, e.db, e.q, id).Scan(&t.ID, &t.Action, &t.Queue, &t.Kind, &t.State, &t.Selected, &t.Status,
		&t.Matched, &t.Changed, &t.Error, &t.StartedAt, &t.UpdatedAt)
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, e.wrap("read bulk task", err)
	}
	return &t, nil
}
