package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/droverhq/drover/droverdriver"
)

// The acknowledgement of topic batches (docs/design/topics.md, "Consumers"
// and "Failures, retries, dead messages"), written once for every consumer
// and store: the lane updates, each fenced by its lease token, and the jobs
// that the failed and dead messages of the accepted acks become, in one
// transaction. A consumer in the process holds the messages it acks; a
// remote consumer's receipt names its batch, which is read again only
// after the fence accepted the ack, and only as far as the batch that was
// handed out.

// TopicRetryKind is the kind of the jobs failed messages become.
const TopicRetryKind = "drover.topic"

// TopicRetryQueue is the queue of the jobs that failed messages of a
// topic's subscriptions become.
func TopicRetryQueue(topic string) string { return "topic:" + topic }

// TopicRetryArgs is a failed message as its retry job holds it.
type TopicRetryArgs struct {
	Topic        string          `json:"topic"`
	Subscription string          `json:"subscription"`
	ID           int64           `json:"id"`
	Key          string          `json:"key,omitempty"`
	Payload      []byte          `json:"payload"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
	PublishedAt  time.Time       `json:"published_at"`
	// Delivered counts the deliveries of the message before it became a
	// job, lease expiries included: the job's attempt n is the message's
	// delivery Delivered + n. Jobs made before it was recorded hold 0,
	// which counts as 1.
	Delivered int `json:"delivered,omitempty"`
}

// AckBatch acknowledges one delivered batch of a lane.
type AckBatch struct {
	Ack droverdriver.LaneAck
	// Attempt is how many times the batch was delivered
	// (LeasedLane.Attempt), MaxAttempts its subscription's bound.
	Attempt, MaxAttempts int
	// Failed names messages of the batch that failed, by ID, with their
	// causes; FailAll fails every message of it with one cause.
	Failed  map[int64]string
	FailAll string
	// Dead, when set, says that the batch's messages are dead without
	// being handed out again: their lane delivered them MaxAttempts times
	// and each lease expired. It is the cause their jobs record.
	Dead string
	// Rows are the batch's messages when the caller holds them. Without
	// them, the failed ones are read again from the store after the fence
	// accepted the ack: those after From up to Ack.Cursor, at most
	// Ack.Count, Bytes of payload and metadata in all.
	Rows  []*droverdriver.MessageRow
	From  droverdriver.Position
	Bytes int64
}

// failing reports whether the batch makes jobs if its ack is accepted.
func (b *AckBatch) failing() bool {
	return len(b.Failed) > 0 || b.FailAll != "" || b.Dead != ""
}

// cause returns why message id failed, and whether it did.
func (b *AckBatch) cause(id int64) (string, bool) {
	switch {
	case b.Dead != "":
		return b.Dead, true
	case b.FailAll != "":
		return b.FailAll, true
	}
	c, ok := b.Failed[id]
	return c, ok
}

// AckParams is one acknowledgement of batches of any lanes.
type AckParams struct {
	Batches []AckBatch
	// Lease is how long kept lanes stay leased from now.
	Lease time.Duration
	Now   time.Time
	// RetryAt is when a failed message's job first runs.
	RetryAt time.Time
	// ReadBytes bounds what one read of batches again holds: they are
	// read in chunks of about this many bytes (at least one batch each),
	// each chunk's jobs inserted before the next is read.
	ReadBytes int64
}

// AckOutcome is what became of one AckBatch.
type AckOutcome struct {
	// Accepted says that the fence let the ack through: the lane moved
	// past the batch and its failed messages became jobs.
	Accepted bool
	// Kept says that the lane stayed leased (LaneAck.Keep granted).
	Kept bool
}

// Ack acknowledges batches and returns their outcomes in order. Acks that
// name one lane twice go in successive statements (LaneRounds), so that a
// stale ack can never take the place of a current one. Without failures it
// is one TopicAck per round, with no transaction; with failures the rounds
// and the jobs of the accepted acks' failed messages commit together, so
// that a failed message becomes a job exactly when its lane moves past
// it: a job that retries it (RetryAt, with the attempts the subscription's
// MaxAttempts leaves after its deliveries), or a dead one, discarded at
// once, when none are left or it is Dead.
func Ack(ctx context.Context, ex droverdriver.Executor, p AckParams) ([]AckOutcome, error) {
	out := make([]AckOutcome, len(p.Batches))
	jobs := false
	for i := range p.Batches {
		jobs = jobs || p.Batches[i].failing()
	}
	run := func(ctx context.Context, ex droverdriver.Executor) error {
		te, ok := ex.(droverdriver.TopicExecutor)
		if !ok {
			return droverdriver.ErrTopicsUnsupported
		}
		clear(out)
		acks := make([]droverdriver.LaneAck, len(p.Batches))
		for i := range p.Batches {
			acks[i] = p.Batches[i].Ack
		}
		for _, round := range LaneRounds(acks) {
			sent := make([]droverdriver.LaneAck, len(round))
			for j, i := range round {
				sent[j] = acks[i]
			}
			acked, err := te.TopicAck(ctx, droverdriver.TopicAckParams{Acks: sent, Lease: p.Lease, Now: p.Now})
			if err != nil {
				return err
			}
			for _, a := range acked {
				out[round[a.Index]] = AckOutcome{Accepted: true, Kept: a.Kept}
			}
		}
		if !jobs {
			return nil
		}
		return failureJobs(ctx, ex, te, p, out)
	}
	var err error
	if jobs {
		err = ex.Tx(ctx, run)
	} else {
		err = run(ctx, ex)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LaneRounds splits lanes into rounds, in order, in each of which every
// lane is named once: a lane's first mention goes in the first round, its
// second in the second, and so on. A statement that updates one lane for
// two of its entries applies one of them (which one, the store does not
// say), so each round is a statement of its own. It returns indexes into
// lanes; in the usual case of distinct lanes, one round of all of them.
func LaneRounds(lanes []droverdriver.LaneAck) [][]int {
	type key struct {
		topic, sub string
		lane       int
	}
	seen := make(map[key]int, len(lanes))
	var rounds [][]int
	for i, a := range lanes {
		k := key{a.Topic, a.Subscription, a.Lane}
		r := seen[k]
		seen[k] = r + 1
		if r == len(rounds) {
			rounds = append(rounds, make([]int, 0, len(lanes)-i))
		}
		rounds[r] = append(rounds[r], i)
	}
	return rounds
}

// LaneUpdate runs run, a statement over lanes that returns the indexes of
// those it updated (TopicExtend, TopicRelease), once per round of distinct
// lanes (LaneRounds), and reports in order which lanes it updated.
func LaneUpdate(lanes []droverdriver.LaneAck, run func([]droverdriver.LaneAck) ([]int, error)) ([]bool, error) {
	out := make([]bool, len(lanes))
	for _, round := range LaneRounds(lanes) {
		sent := make([]droverdriver.LaneAck, len(round))
		for j, i := range round {
			sent[j] = lanes[i]
		}
		done, err := run(sent)
		if err != nil {
			return nil, err
		}
		for _, j := range done {
			out[round[j]] = true
		}
	}
	return out, nil
}

// failureJobs inserts, in ex's transaction, the jobs of the failed
// messages of the accepted batches, reading those the caller does not hold
// in chunks of about p.ReadBytes.
func failureJobs(ctx context.Context, ex droverdriver.Executor, te droverdriver.TopicExecutor, p AckParams, out []AckOutcome) error {
	var jobs []droverdriver.InsertParams
	var dead []int // indexes into jobs
	add := func(b *AckBatch, m *droverdriver.MessageRow) error {
		cause, failed := b.cause(m.ID)
		if !failed {
			return nil
		}
		job, isDead, err := failureJob(b, m, cause, p.RetryAt)
		if err != nil {
			return err
		}
		if isDead {
			dead = append(dead, len(jobs))
		}
		jobs = append(jobs, job)
		return nil
	}
	flush := func() error {
		if len(jobs) == 0 {
			return nil
		}
		ids, err := ex.JobInsertMany(ctx, jobs)
		if err != nil {
			return err
		}
		if len(dead) > 0 {
			discard := make([]int64, len(dead))
			for i, j := range dead {
				discard[i] = ids[j]
			}
			ended, err := ex.JobDiscard(ctx, discard, p.Now)
			if err != nil {
				return err
			}
			if err := Ended(ctx, ex, ended, nil); err != nil {
				return err
			}
		}
		jobs, dead = jobs[:0], dead[:0]
		return nil
	}
	var unread []int // accepted failing batches whose messages the caller does not hold
	for i := range p.Batches {
		b := &p.Batches[i]
		if !out[i].Accepted || !b.failing() {
			continue
		}
		if b.Rows == nil {
			unread = append(unread, i)
			continue
		}
		for _, m := range b.Rows {
			if err := add(b, m); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	for start := 0; start < len(unread); {
		end, size := start, int64(0)
		for end < len(unread) && (end == start || size+p.Batches[unread[end]].Bytes <= p.ReadBytes) {
			size += p.Batches[unread[end]].Bytes
			end++
		}
		chunk := unread[start:end]
		var read droverdriver.TopicReadParams
		for _, i := range chunk {
			b := &p.Batches[i]
			read.Topics = append(read.Topics, b.Ack.Topic)
			read.Lanes = append(read.Lanes, b.Ack.Lane)
			read.Cursors = append(read.Cursors, b.From)
			read.Tos = append(read.Tos, b.Ack.Cursor)
			read.Limits = append(read.Limits, b.Ack.Count)
		}
		rows, err := te.TopicRead(ctx, read)
		if err != nil {
			return err
		}
		for _, m := range rows {
			if err := add(&p.Batches[chunk[m.Range]], m); err != nil {
				return err
			}
		}
		if err := flush(); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// failureJob is the job failed message m of batch b becomes: keyed by the
// message's key within its subscription, so that retries of one key run in
// order among themselves, due at runAt, holding the cause, with the
// attempts the subscription's MaxAttempts leaves after the message's
// deliveries. A message with none left, or dead already, is dead: a job
// without key that the caller discards at once, which an operator's retry
// brings back.
func failureJob(b *AckBatch, m *droverdriver.MessageRow, cause string, runAt time.Time) (droverdriver.InsertParams, bool, error) {
	a := b.Ack
	delivered := max(b.Attempt, 1)
	args, err := json.Marshal(TopicRetryArgs{Topic: a.Topic, Subscription: a.Subscription, ID: m.ID, Key: m.Key,
		Payload: m.Payload, Metadata: json.RawMessage(m.Metadata), PublishedAt: m.PublishedAt, Delivered: delivered})
	if err != nil {
		return droverdriver.InsertParams{}, false, err
	}
	meta := map[string]string{"first_error": truncate(cause, 1024)}
	dead := b.Dead != "" || delivered >= b.MaxAttempts
	if dead {
		meta["dead"] = fmt.Sprintf("delivered %d times, the subscription's max attempts", delivered)
	}
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return droverdriver.InsertParams{}, false, err
	}
	job := droverdriver.InsertParams{Queue: TopicRetryQueue(a.Topic), Kind: TopicRetryKind, Args: args,
		Metadata: metaJSON, MaxAttempts: max(b.MaxAttempts-delivered, 1)}
	if dead {
		return job, true, nil
	}
	job.RunAt = runAt
	if m.Key != "" {
		job.Key, job.KeyLimit = a.Subscription+"/"+m.Key, 1
	}
	return job, false, nil
}

// truncate cuts s to at most n bytes, at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
