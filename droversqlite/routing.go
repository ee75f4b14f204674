package droversqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
)

// Routing and the worker registry (droverdriver/routing.go): the claims
// of workers that say what they are, the strict-order claim, and the
// registry they are listed in. See JobClaimRouted, JobClaimStrict and
// JobRouteAbsentFind in queries.sql.

// routedParams are the parameters of JobClaimRouted and JobClaimStrict for
// claim p, kinds its kinds as a JSON array (nil: every kind): a worker
// that said nothing of itself gets no labels, which matches plain jobs
// only.
func routedParams(p droverdriver.ClaimParams, cp claimParams, kinds any) claimRoutedParams {
	rp := claimRoutedParams{claimParams: cp, Kinds: kinds, Except: jsonStrings(p.ExceptKinds)}
	if w := p.Worker; w != nil {
		rp.Labels = w.LabelsJSON()
		if w.Type != "" {
			rp.Type = w.Type
		}
		if w.Name != "" {
			rp.Name = w.Name
		}
	}
	if a := p.After; a != nil {
		rp.Priority, rp.RunAt, rp.ID = a.Priority, micros(a.RunAt), a.ID
	}
	return rp
}

// workerJSON is a worker as WorkerSeen unpacks it.
type workerJSON struct {
	Name   string `json:"name"`
	Plain  bool   `json:"plain"`
	Type   string `json:"type"`
	Labels string `json:"labels"` // a JSON object, as stored
	Queues string `json:"queues"` // a JSON array, as stored
	Owner  string `json:"owner"`
	Source string `json:"source"`
	// Kinds is a JSON array, as stored, or nil for a worker that named
	// none.
	Kinds *string `json:"kinds"`
}

func (e *executor) WorkerSeen(ctx context.Context, workers []drovertype.WorkerRecord) error {
	if len(workers) == 0 {
		return nil
	}
	batch := make([]workerJSON, len(workers))
	for i := range workers {
		w := &workers[i]
		labels, queues := droverdriver.WorkerColumns(w)
		batch[i] = workerJSON{w.Name, w.Plain, w.Type, labels, queues, w.Owner, w.Source, nil}
		if k := droverdriver.KindsJSON(w); k != "" {
			batch[i].Kinds = &k
		}
	}
	b, err := json.Marshal(batch)
	if err != nil {
		return err
	}
	_, err = workerSeen.exec(ctx, e, nil, batchAt{string(b), micros(time.Now())})
	return e.wrap("register workers", err)
}

func (e *executor) WorkerGone(ctx context.Context, name, owner string) error {
	_, err := workerGone.exec(ctx, e, nil, workerOwner{name, owner})
	return e.wrap("unregister worker", err)
}

func (e *executor) WorkerList(ctx context.Context) ([]drovertype.WorkerRecord, error) {
	out := []drovertype.WorkerRecord{}
	err := workerList.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var w drovertype.WorkerRecord
		var labels, queues string
		var kinds sql.NullString
		var started, seen int64
		if err := rows.Scan(&w.Name, &w.Plain, &w.Type, &labels, &queues, &w.Owner, &w.Source, &started, &seen, &kinds); err != nil {
			return err
		}
		if kinds.Valid {
			if err := json.Unmarshal([]byte(kinds.String), &w.Kinds); err != nil {
				return err
			}
		}
		if err := json.Unmarshal([]byte(labels), &w.Labels); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(queues), &w.Queues); err != nil {
			return err
		}
		w.StartedAt, w.LastSeen = fromMicros(started), fromMicros(seen)
		out = append(out, w)
		return nil
	}, struct{}{})
	return out, e.wrap("list workers", err)
}

func (e *executor) WorkerPrune(ctx context.Context, before time.Time) (int, error) {
	res, err := workerPrune.exec(ctx, e, nil, micros(before))
	if err != nil {
		return 0, e.wrap("prune workers", err)
	}
	n, err := res.RowsAffected()
	return int(n), e.wrap("prune workers", err)
}

// routeGroupsMax bounds RouteWaiting: jobs that each aim at other workers
// make a group each, and a report of thousands of them says no more.
const routeGroupsMax = 1000

func (e *executor) RouteWaiting(ctx context.Context) ([]droverdriver.RouteGroup, error) {
	out := []droverdriver.RouteGroup{}
	err := routeWaiting.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		var g droverdriver.RouteGroup
		var routing string
		var oldest int64
		if err := rows.Scan(&g.Queue, &routing, &g.Kind, &g.Jobs, &oldest, &g.Sample); err != nil {
			return err
		}
		r, err := droverdriver.DecodeRouting([]byte(routing))
		if err != nil {
			return err
		}
		g.Routing, g.OldestRunAt = r, fromMicros(oldest)
		out = append(out, g)
		return nil
	}, routeGroupsMax)
	return out, e.wrap("read routed jobs", err)
}

func (e *executor) KindsWaiting(ctx context.Context, queue string, limit int) ([]droverdriver.RouteGroup, error) {
	out := []droverdriver.RouteGroup{}
	err := kindsWaiting.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		g := droverdriver.RouteGroup{Queue: queue}
		var oldest int64
		if err := rows.Scan(&g.Kind, &g.Jobs, &oldest, &g.Sample); err != nil {
			return err
		}
		g.OldestRunAt = fromMicros(oldest)
		out = append(out, g)
		return nil
	}, kindsWaitingParams{queue, limit})
	return out, e.wrap("read waiting kinds", err)
}

// JobRouteAbsent runs JobRouteAbsentFind, then JobRouteFallback and
// JobRouteFailMove with JobRescueDelete on what it found, in one write
// transaction: together they are PostgreSQL's JobRouteAbsent.
func (e *executor) JobRouteAbsent(ctx context.Context, p droverdriver.RouteAbsentParams) ([]droverdriver.FinishedRow, int, error) {
	now := p.Now.UTC().Truncate(time.Microsecond)
	var failed []droverdriver.FinishedRow
	var woken []string
	err := e.writeTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		failed, woken = nil, nil
		var fall, fail []int64
		err := jobRouteAbsentFind.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
			var id int64
			var policy string
			if err := rows.Scan(&id, &policy); err != nil {
				return err
			}
			if drovertype.AbsentPolicy(policy) == drovertype.AbsentFallback {
				fall = append(fall, id)
			} else {
				fail = append(fail, id)
			}
			return nil
		}, limitAt{micros(now), p.Limit})
		if err != nil {
			return err
		}
		if len(fall) > 0 {
			err := jobRouteFallback.query(ctx, e, tx, e.writer, func(rows *sql.Rows) error {
				var q string
				if err := rows.Scan(&q); err != nil {
					return err
				}
				woken = append(woken, q)
				return nil
			}, string(appendIDs(nil, fall)))
			if err != nil {
				return err
			}
		}
		if len(fail) == 0 {
			return nil
		}
		ids := string(appendIDs(nil, fail))
		if failed, err = e.ended(ctx, tx, jobRouteFailMove.bind(routeFailParams{ids, micros(now), now.Format(time.RFC3339Nano)})); err != nil {
			return err
		}
		_, err = jobRescueDelete.exec(ctx, e, tx, ids)
		return err
	})
	if err != nil {
		return nil, 0, e.wrap("apply absent-worker policies", err)
	}
	if len(woken) > 0 {
		e.wake(woken)
	}
	return failed, len(woken), nil
}

// routeArgs are the route key and routing JSON of job j as the insert
// statements bind them, nil for a plain job.
func routeArgs(j *droverdriver.InsertParams) (route, routing any) {
	if r := j.Routing; r != nil {
		return droverdriver.RouteKey(r), string(r.JSON())
	}
	return nil, nil
}

// appendRoutedArgs appends one job's values in JobInsertRoutedRow's
// order: JobInsertRow's, then the route key and the routing.
func appendRoutedArgs(args []any, j *droverdriver.InsertParams, now any) []any {
	route, routing := routeArgs(j)
	return append(appendInsertArgs(args, j, now), route, routing)
}

// special are jobs of an insert's special group with their positions in
// it.
type special struct {
	jobs []droverdriver.InsertParams
	at   []int
}

// splitRouted separates the special jobs with a key or a unique key, which
// take the keyed statements, from those routed only, which take the
// routed multi-row family.
func splitRouted(jobs []droverdriver.InsertParams) (keyed, routed special) {
	for i := range jobs {
		g := &keyed
		if !jobs[i].Keyed() {
			g = &routed
		}
		g.jobs, g.at = append(g.jobs, jobs[i]), append(g.at, i)
	}
	return keyed, routed
}

func (e *executor) QueueHead(ctx context.Context, queue string) (drovertype.QueueHead, error) {
	var h drovertype.QueueHead
	err := queueHead.query(ctx, e, nil, e.reader, func(rows *sql.Rows) error {
		return rows.Scan(&h.ID, &h.Returned, &h.Running)
	}, queue)
	return h, e.wrap("read the head of queue "+queue, err)
}
