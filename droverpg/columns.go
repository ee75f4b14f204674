package droverpg

import (
	"strings"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// jobColumns holds the columns every insert statement takes, one array per
// column for unnest: the plain, keyed and flow inserts each add their own
// columns after these.
type jobColumns struct {
	queues, kinds, args, metas, tags []string
	prios                            []int16
	maxAtt                           []int32
	runAts                           []*time.Time
	timeouts                         []int64
}

// columnsOf lays jobs out as columns.
func columnsOf(jobs []droverdriver.InsertParams) jobColumns {
	n := len(jobs)
	c := jobColumns{
		queues: make([]string, n), kinds: make([]string, n), args: make([]string, n),
		metas: make([]string, n), tags: make([]string, n), prios: make([]int16, n),
		maxAtt: make([]int32, n), runAts: make([]*time.Time, n), timeouts: make([]int64, n),
	}
	for i := range jobs {
		j := &jobs[i]
		c.queues[i], c.kinds[i], c.args[i] = j.Queue, j.Kind, string(j.Args)
		c.metas[i] = "{}"
		if len(j.Metadata) > 0 {
			c.metas[i] = string(j.Metadata)
		}
		c.tags[i] = strings.Join(j.Tags, ",")
		c.prios[i], c.maxAtt[i], c.timeouts[i] = int16(j.Priority), int32(j.MaxAttempts), j.Timeout.Milliseconds()
		if !j.RunAt.IsZero() {
			c.runAts[i] = &j.RunAt
		}
	}
	return c
}

// params returns the columns as statement parameters $1–$9, followed by
// extra.
func (c jobColumns) params(extra ...any) []any {
	return append([]any{c.queues, c.kinds, c.args, c.metas, c.tags, c.prios, c.maxAtt, c.runAts, c.timeouts}, extra...)
}

// routeColumns are the route key and routing JSON of jobs (NULL for plain
// ones), as the keyed and flow inserts take them.
type routeColumns struct {
	routes, routings []*string
}

// routesOf lays the jobs' routing out as columns.
func routesOf(jobs []droverdriver.InsertParams) routeColumns {
	c := routeColumns{routes: make([]*string, len(jobs)), routings: make([]*string, len(jobs))}
	for i := range jobs {
		if r := jobs[i].Routing; r != nil {
			key, js := droverdriver.RouteKey(r), string(r.JSON())
			c.routes[i], c.routings[i] = &key, &js
		}
	}
	return c
}

// wake marks the queue of a job that can run now: a routed job wakes every
// listener of its queue, since the next listener in turn may be a worker
// that cannot take it, a plain one counts towards the queue's wake-up.
func wakeFor(s wakeSet, j *droverdriver.InsertParams) {
	if j.Routing != nil {
		s.add([]string{j.Queue})
	} else {
		s.count(j.Queue)
	}
}
