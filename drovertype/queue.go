package drovertype

import "time"

// LeaseOwner is a process that holds running jobs.
type LeaseOwner struct {
	// Owner is the client's ID (Config.ID) or the HTTP worker's name.
	Owner   string
	Running int64
	// LeaseExpiresAt is the latest expiry of its leases; heartbeats push
	// it forward, so a date in the past means the process stopped
	// heartbeating and its jobs are about to be rescued.
	LeaseExpiresAt time.Time
}
