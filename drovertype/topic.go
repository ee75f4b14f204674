package drovertype

import "time"

// SubscriptionLag is how far a subscription is behind its topic.
type SubscriptionLag struct {
	Topic        string
	Subscription string
	// Pending counts committed messages past the subscription's cursors
	// (including those a consumer holds).
	Pending int64
	// OldestPending is when the oldest of them was published, nil when
	// none is pending: the earliest publish time of each lane's next
	// message, read by position (commit order), so on PostgreSQL a message
	// behind it whose transaction began earlier and committed later does
	// not count (the lag is read in one index probe per lane and cursor).
	OldestPending *time.Time
	// Dropped counts messages the topic's retention removed before the
	// subscription read them: it lagged past the retention. It only
	// grows.
	Dropped int64
}

// OpenPublisher is an open transaction that has published topic messages
// and not committed yet: its messages are delivered once it commits, in
// commit order, and the retention of the generation it wrote to waits for
// it. Other publishers' messages are not held back.
type OpenPublisher struct {
	// Xid is the store's id of the transaction.
	Xid int64
	// PID is the PostgreSQL server process of its session (ask
	// pg_terminate_backend to end it); 0 for a prepared transaction, which
	// has none (COMMIT or ROLLBACK PREPARED GID).
	PID             int
	ApplicationName string
	// State is the session's (pg_stat_activity.state, such as "idle in
	// transaction"), or "prepared".
	State string
	// Started is when the transaction began, or was prepared; zero when
	// the store does not say.
	Started time.Time
	// GID names a prepared transaction (COMMIT PREPARED 'gid').
	GID string
}
