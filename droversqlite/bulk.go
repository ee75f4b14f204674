package droversqlite

import (
	"context"
	"database/sql"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/droverdriver/sqlstmt"
)

// The bulk tasks of drover serve (droverdriver.BulkTaskExecutor).

var (
	bulkTaskInsert = def(stmt[bulkTaskInsertParams]{name: "BulkTaskInsert", cols: 1,
		args: func(p *bulkTaskInsertParams) []any {
			return []any{p.Action, p.Queue, p.Kind, p.State, p.Selected, p.Status, p.Now}
		}})
	bulkTaskPrune = def(stmt[bulkTaskPruneParams]{name: "BulkTaskPrune",
		args: func(p *bulkTaskPruneParams) []any { return []any{p.Newest, p.Keep} }})
	bulkTaskUpdate = def(stmt[bulkTaskUpdateParams]{name: "BulkTaskUpdate",
		args: func(p *bulkTaskUpdateParams) []any {
			return []any{p.ID, p.Status, p.Matched, p.Changed, p.Error, p.Now}
		}})
	bulkTaskGet = def(stmt[int64]{name: "BulkTaskGet", cols: 12, args: sqlstmt.OneArg[int64]})
)

func init() { readQueries = append(readQueries, bulkTaskGet.name) }

type bulkTaskInsertParams struct {
	Action, Queue, Kind, State string
	Selected                   int
	Status                     string
	Now                        int64
}

type bulkTaskPruneParams struct {
	Newest int64
	Keep   int
}

type bulkTaskUpdateParams struct {
	ID               int64
	Status           string
	Matched, Changed int64
	Error            string
	Now              int64
}

func (e *executor) BulkTaskInsert(ctx context.Context, t *droverdriver.BulkTaskRow, keep int) (int64, error) {
	var id int64
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		err := bulkTaskInsert.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error { return rows.Scan(&id) },
			bulkTaskInsertParams{t.Action, t.Queue, t.Kind, t.State, t.Selected, t.Status, micros(t.StartedAt)})
		if err != nil {
			return err
		}
		_, err = bulkTaskPrune.exec(ctx, e, tx, bulkTaskPruneParams{id, keep})
		return err
	})
	return id, e.wrap("store bulk task", err)
}

func (e *executor) BulkTaskUpdate(ctx context.Context, p droverdriver.BulkTaskUpdateParams) error {
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := bulkTaskUpdate.exec(ctx, e, tx, bulkTaskUpdateParams{p.ID, p.Status, p.Matched, p.Changed, p.Error, micros(p.Now)})
		return err
	})
	return e.wrap("update bulk task", err)
}

func (e *executor) BulkTaskGet(ctx context.Context, id int64) (*droverdriver.BulkTaskRow, error) {
	var out *droverdriver.BulkTaskRow
	err := bulkTaskGet.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var t droverdriver.BulkTaskRow
		var started, updated int64
		if err := rows.Scan(&t.ID, &t.Action, &t.Queue, &t.Kind, &t.State, &t.Selected, &t.Status,
			&t.Matched, &t.Changed, &t.Error, &started, &updated); err != nil {
			return err
		}
		t.StartedAt, t.UpdatedAt = fromMicros(started), fromMicros(updated)
		out = &t
		return nil
	}, id)
	return out, e.wrap("read bulk task", err)
}
