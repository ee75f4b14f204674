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
	// each lane published after those this one read. It is opaque.
	Cursor string
}

// PeekTopic reads messages of topic without consuming them: with an empty
// cursor, the newest limit messages of the topic; with the Cursor of an
// earlier peek, up to limit messages of each lane published since, oldest
// first. Nothing records the read: subscriptions keep their positions and
// no lane is leased. A message is readable once its publish has committed
// (and, on PostgreSQL, a sequencing pass has given it its position, which
// PeekTopic runs first), as for subscriptions.
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
	positions := make([]droverdriver.Position, lanes)
	var rows []*droverdriver.MessageRow
	if cursor == "" {
		if rows, err = te.TopicTail(ctx, topic, lanes, limit); err != nil {
			return nil, err
		}
	} else {
		if positions, err = parsePeekCursor(cursor, lanes); err != nil {
			return nil, err
		}
		p := droverdriver.TopicReadParams{Sequence: true}
		for lane, pos := range positions {
			p.Topics, p.Lanes, p.Cursors = append(p.Topics, topic), append(p.Lanes, lane), append(p.Cursors, pos)
			p.Tos, p.Limits = append(p.Tos, droverdriver.PositionMax), append(p.Limits, limit)
		}
		if rows, err = te.TopicRead(ctx, p); err != nil {
			return nil, err
		}
	}
	out := &TopicPeek{Messages: make([]*PeekedMessage, len(rows))}
	for i, m := range rows {
		// Rows come in (lane, position) order: a lane's last is where it
		// goes on from.
		positions[m.Lane] = m.Position()
		out.Messages[i] = &PeekedMessage{ID: m.ID, Lane: m.Lane, Key: m.Key, Payload: m.Payload, Metadata: m.Metadata,
			PublishedAt: m.PublishedAt}
	}
	slices.SortFunc(out.Messages, func(a, b *PeekedMessage) int { return cmp.Compare(a.ID, b.ID) })
	if cursor == "" && len(out.Messages) > limit {
		out.Messages = out.Messages[len(out.Messages)-limit:]
	}
	out.Cursor = formatPeekCursor(positions)
	return out, nil
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
