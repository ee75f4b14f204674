package droverdriver

import (
	"context"
	"errors"
)

// ShardExecutor is implemented by a store that can be one shard of a
// fleet (droverfleet): several databases that together make one Drover
// store. A fleet tells which shard holds a job from the job's ID alone,
// so each shard draws its IDs from a range of its own (ShardBase), and
// every shard records its place in the fleet, so that a fleet opened with
// its databases in another order, or with a database of another fleet,
// is refused instead of routing jobs to the wrong shard. Like
// TopicExecutor it is separate from Executor: a store that cannot be a
// shard still satisfies the job contract.
type ShardExecutor interface {
	// ShardGet returns the shard's record, or nil when the store was
	// never attached to a fleet.
	ShardGet(ctx context.Context) (*ShardRecord, error)

	// ShardAttach records the store as shard p.Index of fleet p.Fleet and
	// moves its job and batch IDs into the shard's range (ShardBase), in
	// one transaction. A store recorded already is left as it is and its
	// record returned: the caller compares it with what it expected. A
	// store whose IDs were drawn below the range (a database that held
	// jobs before it became a shard other than the first) is refused
	// with an error wrapping ErrShardIDs: its jobs would route to another
	// shard.
	ShardAttach(ctx context.Context, p ShardRecord) (*ShardRecord, error)

	// ShardSetDraining sets the shard's drain flag: a draining shard
	// takes no new placements, while its jobs run to the end.
	ShardSetDraining(ctx context.Context, draining bool) error
}

// ShardRecord is what a shard stores of its place in a fleet.
type ShardRecord struct {
	// Fleet names the fleet, the same on every shard of it.
	Fleet string
	// Index is the shard's place in the fleet, from 0: its IDs start at
	// ShardBase(Index).
	Index int
	// KeyShards is how many shards ordering keys and unique keys are
	// spread over (the first KeyShards shards). Shards added later take
	// every other kind of job at once; keys stay where they are, so that
	// a key's jobs keep their order (docs/scaling.md, "Past one
	// PostgreSQL").
	KeyShards int
	// Draining says the shard takes no new placements.
	Draining bool
}

// ShardBits is how many low bits of a job ID number the job within its
// shard: shard i's IDs start at i << ShardBits, so that ShardOf finds a
// job's shard without asking any. 2^48 IDs a shard is more than a store
// inserting a million jobs a second uses in eight years; up to 32 shards
// keep every ID below 2^53, which JavaScript numbers hold exactly.
const ShardBits = 48

// MaxShards is the most shards a fleet may have (see ShardBits).
const MaxShards = 32

// ShardBase is the first ID of shard i's range (1 for shard 0, whose IDs
// are a lone store's).
func ShardBase(i int) int64 { return max(1, int64(i)<<ShardBits) }

// ShardOf returns the shard that drew id.
func ShardOf(id int64) int { return int(id >> ShardBits) }

// ErrShardIDs is returned by ShardAttach for a store whose IDs lie outside
// the range of the shard it would become.
var ErrShardIDs = errors.New("store holds IDs outside the shard's range")
