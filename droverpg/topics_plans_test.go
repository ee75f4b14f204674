package droverpg

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/droverhq/drover/drovertype"
)

// TestTopicLeasePlan checks that the lease reads each of its CTEs a bounded
// number of times: no subplan that runs once per row of an outer scan
// (correlated, not hashed) reads a CTE. With several consumer processes
// every subscription is contested, and a count of the lanes ranked for a
// subscription, correlated and run for every pair of a lane another
// consumer held and a contested subscription, made the statement cubic in
// the lanes: 30 s a lease at 20 topics of 50 subscriptions and 4 lanes,
// which stalled `drover bench fanout --processes 4` for minutes.
func TestTopicLeasePlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := migrated(t)
	token := drovertype.NewLeaseToken()
	args := []any{[]string{"t", "t"}, []string{"a", "b"}, []int32{100, 100}, "owner", [16]byte(token), 5000.0, 8, 1000.0}
	var raw []byte
	if err := d.Pool().QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+d.exec.q[topicLease.name], args...).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	plan := firstPlan(t, raw)
	// A hashed subplan (NOT IN over contested) runs once, its result
	// probed per row: it is named "hashed SubPlan N" where it is used.
	hashed := map[string]bool{}
	for _, m := range regexp.MustCompile(`hashed (SubPlan \d+)`).FindAllStringSubmatch(string(raw), -1) {
		hashed[m[1]] = true
	}
	walkPlan(plan["Plan"].(map[string]any), func(n map[string]any) {
		name, _ := n["Subplan Name"].(string)
		if n["Parent Relationship"] != "SubPlan" || hashed[name] {
			return
		}
		walkPlan(n, func(inner map[string]any) {
			if inner["Node Type"] == "CTE Scan" {
				out, _ := json.MarshalIndent(plan, "", " ")
				t.Errorf("TopicLease's %s, run per row of an outer scan, reads CTE %v: the lease grows with the product of its lanes:\n%s",
					name, inner["CTE Name"], out)
			}
		})
	})
}

// TestTopicLagPlan checks that the lag statement reads a number of
// messages bounded by its lanes and distinct cursors, not by the backlog:
// a lane of 1,000 messages with three subscriptions at three cursors is
// one probe for the lane's last ordinal and one per cursor (migration
// 029). Counting the messages past the lowest cursor read the whole
// backlog on every call, which `drover serve` and `drover bench fanout`
// sample every 250 ms (2.5 s a statement at 500,000 messages); a count
// per distinct cursor, before that, read it once per cursor (6 s a
// statement with four consumer processes).
func TestTopicLagPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := migrated(t)
	s := pgx.Identifier{d.Schema()}.Sanitize() + "."
	const backlog = 1000
	for _, sql := range []string{
		`INSERT INTO ` + s + `topics (name, lanes, retention_ms) VALUES ('t', 1, 86400000)`,
		`INSERT INTO ` + s + `topic_subscriptions (topic, name, max_attempts) SELECT 't', 's' || i, 5 FROM generate_series(1, 3) AS i`,
		`INSERT INTO ` + s + `topic_messages (topic, lane, xid, ord, payload) SELECT 't', 0, 1, i, '\x00' FROM generate_series(1, ` + strconv.Itoa(backlog) + `) AS i`,
		// Three subscriptions at three cursors of the one lane: before
		// the first message, on the second and on the third.
		`INSERT INTO ` + s + `topic_lanes (topic, subscription, lane, cursor_xid, cursor_id)
			SELECT 't', 's' || i, 0, CASE WHEN i = 1 THEN 0 ELSE 1 END, (SELECT min(id) FROM ` + s + `topic_messages) + i - 1
			FROM generate_series(1, 3) AS i`,
		`ANALYZE ` + s + `topic_messages`,
	} {
		if _, err := d.Pool().Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	var raw []byte
	if err := d.Pool().QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+d.exec.q[topicLag.name], []string(nil)).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	plan := firstPlan(t, raw)
	var read float64
	walkPlan(plan["Plan"].(map[string]any), func(n map[string]any) {
		if rel, _ := n["Relation Name"].(string); strings.HasPrefix(rel, "topic_messages") {
			read += (num(n["Actual Rows"]) + num(n["Rows Removed by Filter"]) + num(n["Rows Removed by Index Recheck"])) * num(n["Actual Loops"])
		}
	})
	// One row for the lane's head, one for each of the three cursors.
	if read > 4 {
		out, _ := json.MarshalIndent(plan, "", " ")
		t.Errorf("TopicLag read %v messages for one lane of %d at three cursors, want at most 4:\n%s", read, backlog, out)
	}
	lags, err := d.exec.TopicLag(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{backlog, backlog - 2, backlog - 3}
	for i, l := range lags {
		if l.Pending != want[i] {
			t.Errorf("lag of %s: %d pending, want %d", l.Subscription, l.Pending, want[i])
		}
	}
}
