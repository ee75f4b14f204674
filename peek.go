package drover

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// Peeking at a topic: its messages read without a subscription, so that an
// operator sees what a topic holds (`drover topics peek`) without moving
// any consumer's position or holding any lane.

// MaxTopicPeek bounds the messages of each lane one PeekTopic reads.
const MaxTopicPeek = 1000

// peekMaxBytes bounds the payload and metadata bytes of one PeekTopic's
// messages (the first message whatever its size), as a receive's are
// bounded: a limit of 1,000 messages a lane of 1 MiB payloads would
// otherwise hand a reader gigabytes in one answer.
const peekMaxBytes = 4 << 20

// PeekedMessage is a message of a topic as PeekTopic shows it.
type PeekedMessage struct {
	ID          int64
	Lane        int
	Key         string
	Payload     []byte
	Metadata    []byte
	PublishedAt time.Time
}

// TopicPeek is one read of PeekTopic.
type TopicPeek struct {
	// Messages are in ID (publish) order.
	Messages []*PeekedMessage
	// Cursor is where the next PeekTopic goes on from: the messages of
	// each lane published after those this one read. It is opaque, and
	// empty on a page of older messages.
	Cursor string
	// Older is where PeekTopic goes back from: the messages published
	// before those this one showed, a page at a time, each message on one
	// page only. It is opaque, and empty when no older message is left.
	Older string
}

// olderMark starts a TopicPeek.Older cursor, telling it from a Cursor.
const olderMark = "<"

// PeekTopic reads messages of topic without consuming them: with an empty
// cursor, the newest limit messages of the topic; with the Cursor of an
// earlier peek, up to limit messages of each lane published since, oldest
// first; with its Older, the limit messages published before those it
// showed. Nothing records the read: subscriptions keep their positions and
// no lane is leased. A message is readable once its publish has committed
// (and, on PostgreSQL, a sequencing pass has given it its position, which
// PeekTopic runs first), as for subscriptions. Pages go by each lane's
// position (keyset pagination), never by an offset: a page costs one
// bounded backward range of each lane however far back it is. One answer
// holds at most 4 MiB of payloads and metadata (the first message whatever
// its size); the cursors go on from what it showed.
func (c *Client[TTx]) PeekTopic(ctx context.Context, topic string, limit int, cursor string) (*TopicPeek, error) {
	if limit < 1 || limit > MaxTopicPeek {
		return nil, invalidf("limit %d: must be between 1 and %d", limit, MaxTopicPeek)
	}
	te, err := c.topicExec(c.exec)
	if err != nil {
		return nil, err
	}
	lanes, err := c.lanesOf(ctx, topic)
	if errors.Is(err, ErrTopicNotFound) {
		return nil, fmt.Errorf("%w: %q", ErrTopicNotFound, topic)
	}
	if err != nil {
		return nil, err
	}
	older, isOlder := strings.CutPrefix(cursor, olderMark)
	if cursor != "" && !isOlder {
		positions, err := parsePeekCursor(cursor, lanes)
		if err != nil {
			return nil, err
		}
		p := droverdriver.TopicReadParams{Sequence: true, MaxBytes: peekMaxBytes}
		for lane, pos := range positions {
			p.Topics, p.Lanes, p.Cursors = append(p.Topics, topic), append(p.Lanes, lane), append(p.Cursors, pos)
			p.Tos, p.Limits = append(p.Tos, droverdriver.PositionMax), append(p.Limits, limit)
		}
		rows, err := te.TopicRead(ctx, p)
		if err != nil {
			return nil, err
		}
		out := &TopicPeek{Messages: peeked(rows)}
		for _, m := range rows {
			// Rows come in (lane, position) order: a lane's last is where
			// it goes on from.
			positions[m.Lane] = m.Position()
		}
		out.Cursor = formatPeekCursor(positions)
		return out, nil
	}
	before := slices.Repeat([]droverdriver.Position{droverdriver.PositionMax}, lanes)
	if isOlder {
		if before, err = parsePeekCursor(older, lanes); err != nil {
			return nil, err
		}
	}
	rows, err := te.TopicTail(ctx, topic, before, limit)
	if err != nil {
		return nil, err
	}
	page := newestOf(rows, lanes, limit, peekMaxBytes)
	out := &TopicPeek{Messages: peeked(page)}
	newest := make([]droverdriver.Position, lanes)
	for _, m := range rows {
		newest[m.Lane] = m.Position()
	}
	if !isOlder {
		out.Cursor = formatPeekCursor(newest)
	}
	// Each lane goes back from the oldest message the page showed of it.
	// A lane the page showed none of goes back from where this page did:
	// on the newest page, from just past the newest message it read, so
	// that messages published since never show as older ones. A lane
	// whose read the page showed whole, short of the limit, is done.
	read, shown := make([]int, lanes), make([]int, lanes)
	for _, m := range rows {
		read[m.Lane]++
	}
	for _, m := range page {
		if shown[m.Lane] == 0 || m.Position().Less(before[m.Lane]) {
			before[m.Lane] = m.Position()
		}
		shown[m.Lane]++
	}
	left := false
	for lane := range lanes {
		switch {
		case read[lane] < limit && shown[lane] == read[lane]:
			before[lane] = droverdriver.Position{}
		case shown[lane] == 0 && !isOlder:
			// No message can sort between a position and the one of the
			// next ID: a later pass's messages have a higher xid.
			before[lane] = droverdriver.Position{Xid: newest[lane].Xid, ID: newest[lane].ID + 1}
		}
		left = left || before[lane] != droverdriver.Position{}
	}
	if left {
		out.Older = olderMark + formatPeekCursor(before)
	}
	return out, nil
}

// peeked is rows as PeekTopic shows them, in ID order.
func peeked(rows []*droverdriver.MessageRow) []*PeekedMessage {
	out := make([]*PeekedMessage, len(rows))
	for i, m := range rows {
		out[i] = &PeekedMessage{ID: m.ID, Lane: m.Lane, Key: m.Key, Payload: m.Payload, Metadata: m.Metadata, PublishedAt: m.PublishedAt}
	}
	slices.SortFunc(out, func(a, b *PeekedMessage) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// newestOf takes the newest limit of rows, TopicTail's newest messages of
// each lane in (lane, position) order, newest ID first among the lanes'
// newest left, and so each lane's newest in its own order: on PostgreSQL
// a lane's order (commit order) and its IDs can differ, and a page that
// took a lane's messages by ID alone could leave one between two it
// showed, which the next older page, going back from the oldest shown,
// would never show. The page stops before the message that would take its
// payload and metadata past maxBytes (the first one whatever its size):
// what it leaves of a lane is older than what it showed of it, so the
// next older page shows it.
func newestOf(rows []*droverdriver.MessageRow, lanes, limit int, maxBytes int64) []*droverdriver.MessageRow {
	byLane := make([][]*droverdriver.MessageRow, lanes)
	for _, m := range rows {
		byLane[m.Lane] = append(byLane[m.Lane], m)
	}
	var out []*droverdriver.MessageRow
	var bytes int64
	for len(out) < limit {
		pick := -1
		for lane, ms := range byLane {
			if len(ms) > 0 && (pick < 0 || ms[len(ms)-1].ID > byLane[pick][len(byLane[pick])-1].ID) {
				pick = lane
			}
		}
		if pick < 0 {
			break
		}
		ms := byLane[pick]
		m := ms[len(ms)-1]
		if bytes += m.Bytes(); len(out) > 0 && bytes > maxBytes {
			break
		}
		out, byLane[pick] = append(out, m), ms[:len(ms)-1]
	}
	return out
}

// formatPeekCursor writes one xid.id position per lane, in lane order.
func formatPeekCursor(positions []droverdriver.Position) string {
	parts := make([]string, len(positions))
	for i, p := range positions {
		parts[i] = strconv.FormatInt(p.Xid, 10) + "." + strconv.FormatInt(p.ID, 10)
	}
	return strings.Join(parts, ",")
}

// parsePeekCursor reads formatPeekCursor's positions of a topic of lanes
// lanes.
func parsePeekCursor(cursor string, lanes int) ([]droverdriver.Position, error) {
	parts := strings.Split(cursor, ",")
	if len(parts) != lanes {
		return nil, invalidf("cursor %.40q: not a cursor of a topic of %d lanes", cursor, lanes)
	}
	out := make([]droverdriver.Position, lanes)
	for i, part := range parts {
		x, id, ok := strings.Cut(part, ".")
		var errX, errID error
		out[i].Xid, errX = strconv.ParseInt(x, 10, 64)
		out[i].ID, errID = strconv.ParseInt(id, 10, 64)
		if !ok || errX != nil || errID != nil || out[i].Xid < 0 || out[i].ID < 0 {
			return nil, invalidf("cursor %.40q: not a cursor of PeekTopic", cursor)
		}
	}
	return out, nil
}
