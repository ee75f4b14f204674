package server

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/validate"
)

// Topics over HTTP (docs/topics.md): publish, subscriptions, and the
// remote consumer's receive (a long poll), ack/nack, extend and release,
// which go through drover.Client.Receive, AckBatches, ExtendBatches and
// ReleaseBatches, fenced by the receipt's lease token like a Go consumer's
// ack. A receipt is authenticated (an HMAC under a key the store keeps)
// and must name the subscription of the URL, so that a token reaches no
// other topic through it and nothing is read for a forged one. A token
// restricted to queues may use a topic when it may use the topic's retry
// queue (drover.RetryQueue): the queue its failed messages become jobs of.

// maxRetentionMS bounds a topic's retention_ms (about a hundred years).
const maxRetentionMS = 100 * 365 * 24 * 3600 * 1000

// topicPath reads and checks the {topic} of the path, and the token's
// right to it.
func topicPath(r *http.Request) (string, error) {
	topic := r.PathValue("topic")
	if err := validate.Topic(topic); err != nil {
		return "", err
	}
	return topic, checkQueue(r, drover.RetryQueue(topic))
}

type topicJSON struct {
	Name          string    `json:"name"`
	Lanes         int       `json:"lanes"`
	RetentionMS   int64     `json:"retention_ms"`
	CreatedAt     time.Time `json:"created_at"`
	Subscriptions []string  `json:"subscriptions"`
}

func toTopicJSON(t *drover.Topic) topicJSON {
	subs := t.Subscriptions
	if subs == nil {
		subs = []string{}
	}
	return topicJSON{Name: t.Name, Lanes: t.Lanes, RetentionMS: t.Retention.Milliseconds(), CreatedAt: t.CreatedAt, Subscriptions: subs}
}

// createTopic answers 201 with the topic it stored, 200 with the stored
// topic when one of that name exists with the options the request gives
// (an option left out matches any), and 409 when it exists with others:
// a topic's lanes and retention are fixed at creation.
func (s *Server) createTopic(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Name  string `json:"name"`
		Lanes *int   `json:"lanes"`
		// RetentionMS: 0 is the default, -1 keeps messages until every
		// subscription has passed them.
		RetentionMS int64 `json:"retention_ms"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	opts := &drover.TopicOpts{Retention: millis(req.RetentionMS)}
	if req.Lanes != nil {
		if *req.Lanes < 1 || *req.Lanes > drover.MaxTopicLanes {
			return badRequest("lanes %d: must be between 1 and %d", *req.Lanes, drover.MaxTopicLanes)
		}
		opts.Lanes = *req.Lanes
	}
	if req.RetentionMS < -1 || req.RetentionMS > maxRetentionMS {
		return badRequest("retention_ms %d: must be -1 (until every subscription passed), 0 (the default) or up to %d", req.RetentionMS, int64(maxRetentionMS))
	}
	if err := validate.Topic(req.Name); err != nil {
		return err
	}
	if err := checkQueue(r, drover.RetryQueue(req.Name)); err != nil {
		return err
	}
	t, err := s.cfg.Client.CreateTopic(r.Context(), req.Name, opts)
	if errors.Is(err, drover.ErrTopicExists) {
		return &apiError{status: http.StatusConflict, msg: err.Error()}
	}
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !t.Created {
		// The existing topic, read with its subscriptions.
		if t, err = s.cfg.Client.Topic(r.Context(), req.Name); err != nil {
			return err
		}
		status = http.StatusOK
	}
	writeJSON(w, status, toTopicJSON(t))
	return nil
}

// getTopic answers a topic with its options and subscriptions.
func (s *Server) getTopic(w http.ResponseWriter, r *http.Request) error {
	topic, err := topicPath(r)
	if err != nil {
		return err
	}
	t, err := s.cfg.Client.Topic(r.Context(), topic)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toTopicJSON(t))
	return nil
}

// deleteTopic removes a topic with its subscriptions, their lanes and its
// messages (Client.DeleteTopic).
func (s *Server) deleteTopic(w http.ResponseWriter, r *http.Request) error {
	topic, err := topicPath(r)
	if err != nil {
		return err
	}
	deleted, err := s.cfg.Client.DeleteTopic(r.Context(), topic)
	if err != nil {
		return err
	}
	if !deleted {
		return &apiError{status: http.StatusNotFound, msg: fmt.Sprintf("topic %s not found", topic)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true})
	return nil
}

func (s *Server) listTopics(w http.ResponseWriter, r *http.Request) error {
	topics, err := s.cfg.Client.Topics(r.Context())
	if err != nil {
		return err
	}
	out := []topicJSON{}
	tok := requestToken(r)
	for _, t := range topics {
		if tok == nil || tok.AllowsQueue(drover.RetryQueue(t.Name)) {
			out = append(out, toTopicJSON(t))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"topics": out})
	return nil
}

// messagesJSON is the body of a publish: POST /v1/topics/{topic}/publish
// names the topic in its path, POST /v1/messages in each message.
type messagesJSON struct {
	Messages []struct {
		Topic string `json:"topic"`
		Key   string `json:"key"`
		// Payload is any JSON value, stored as its text; PayloadBase64
		// carries bytes that are not JSON.
		Payload       json.RawMessage `json:"payload"`
		PayloadBase64 []byte          `json:"payload_base64"`
		Metadata      json.RawMessage `json:"metadata"`
	} `json:"messages"`
}

// decodeMessages reads a publish's messages. With withTopic each names its
// topic, which the token must be allowed to use; without, none may.
func (s *Server) decodeMessages(r *http.Request, withTopic bool) ([]drover.Message, error) {
	var req messagesJSON
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if len(req.Messages) == 0 || len(req.Messages) > s.cfg.MaxBatch {
		return nil, badRequest("messages: between 1 and %d", s.cfg.MaxBatch)
	}
	msgs := make([]drover.Message, len(req.Messages))
	checked := map[string]bool{}
	for i, m := range req.Messages {
		if len(m.Payload) > 0 && m.PayloadBase64 != nil {
			return nil, badRequest("message %d: payload and payload_base64 exclude each other", i+1)
		}
		switch {
		case !withTopic && m.Topic != "":
			return nil, badRequest("message %d: topic: the path names the topic", i+1)
		case withTopic && !checked[m.Topic]:
			if err := validate.Topic(m.Topic); err != nil {
				return nil, badRequest("message %d: %v", i+1, err)
			}
			if err := checkQueue(r, drover.RetryQueue(m.Topic)); err != nil {
				return nil, err
			}
			checked[m.Topic] = true
		}
		// A payload sent as JSON is delivered as JSON, so it gets the text
		// checks of a job's args: a consumer in another language must be
		// able to decode it. Its size, and metadata, the library checks.
		if len(m.Payload) > 0 {
			if err := validate.JSONText("payload", m.Payload); err != nil {
				return nil, fmt.Errorf("message %d of %d: %w", i+1, len(req.Messages), err)
			}
		}
		msgs[i] = drover.Message{Topic: m.Topic, Key: m.Key, Payload: m.Payload, Metadata: m.Metadata}
		if m.PayloadBase64 != nil {
			msgs[i].Payload = m.PayloadBase64
		}
	}
	return msgs, nil
}

func (s *Server) publish(w http.ResponseWriter, r *http.Request) error {
	topic, err := topicPath(r)
	if err != nil {
		return err
	}
	msgs, err := s.decodeMessages(r, false)
	if err != nil {
		return err
	}
	ids, err := s.cfg.Client.Publish(r.Context(), topic, msgs...)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ids": ids})
	return nil
}

// publishMany publishes messages of several topics, each naming its own,
// in one statement.
func (s *Server) publishMany(w http.ResponseWriter, r *http.Request) error {
	msgs, err := s.decodeMessages(r, true)
	if err != nil {
		return err
	}
	ids, err := s.cfg.Client.PublishMany(r.Context(), msgs)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ids": ids})
	return nil
}

func (s *Server) topicLag(w http.ResponseWriter, r *http.Request) error {
	topic, err := topicPath(r)
	if err != nil {
		return err
	}
	lag, err := s.cfg.Client.SubscriptionLag(r.Context(), topic)
	if err != nil {
		return err
	}
	type lagJSON struct {
		Subscription  string     `json:"subscription"`
		Pending       int64      `json:"pending"`
		OldestPending *time.Time `json:"oldest_pending,omitempty"`
		Dropped       int64      `json:"dropped"`
	}
	out := make([]lagJSON, len(lag))
	for i, l := range lag {
		out[i] = lagJSON{Subscription: l.Subscription, Pending: l.Pending, Dropped: l.Dropped}
		out[i].OldestPending = l.OldestPending
	}
	writeJSON(w, http.StatusOK, map[string]any{"subscriptions": out})
	return nil
}

func (s *Server) createSubscription(w http.ResponseWriter, r *http.Request) error {
	topic, err := topicPath(r)
	if err != nil {
		return err
	}
	var req struct {
		Name         string `json:"name"`
		FromEarliest bool   `json:"from_earliest"`
		MaxAttempts  int    `json:"max_attempts"`
	}
	req.MaxAttempts = drover.SubscriptionMaxAttemptsDefault
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.MaxAttempts == 0 {
		return badRequest("max_attempts 0: must be between 2 and 1000000")
	}
	created, err := s.cfg.Client.CreateSubscription(r.Context(), topic, req.Name,
		&drover.SubscriptionOpts{FromEarliest: req.FromEarliest, MaxAttempts: req.MaxAttempts})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"created": created})
	return nil
}

func (s *Server) deleteSubscription(w http.ResponseWriter, r *http.Request) error {
	topic, err := topicPath(r)
	if err != nil {
		return err
	}
	deleted, err := s.cfg.Client.DeleteSubscription(r.Context(), topic, r.PathValue("name"))
	if err != nil {
		return err
	}
	if !deleted {
		return &apiError{status: http.StatusNotFound, msg: "subscription not found"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true})
	return nil
}

// appendBatches appends a receive's answer, {"batches":[…]}, each batch
// with its receipt, dropped count and messages (appendDelivery), written
// field by field rather than by encoding/json's reflection
// over a copy of every message: a receive hands out thousands of messages,
// and their encoding was most of drover serve's CPU per delivery once the
// store's read was cheap. A payload or metadata that is JSON is the stored
// text itself, checked, never decoded and encoded again.
func appendBatches(b []byte, batches []*drover.ReceivedBatch) ([]byte, error) {
	size := 16
	for _, bt := range batches {
		size += len(bt.Receipt) + 48
		for _, d := range bt.Deliveries {
			size += 4*len(d.Payload)/3 + len(d.Metadata) + len(d.Key) + 96
		}
	}
	b = slices.Grow(b, size)
	b = append(b, `{"batches":[`...)
	for i, bt := range batches {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"receipt":`...)
		b = appendJSONString(b, bt.Receipt)
		b = append(b, `,"dropped":`...)
		b = strconv.AppendInt(b, bt.Dropped, 10)
		b = append(b, `,"messages":[`...)
		for j, d := range bt.Deliveries {
			if j > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendDelivery(b, d); err != nil {
				return nil, fmt.Errorf("message %d: %w", d.ID, err)
			}
		}
		b = append(b, "]}"...)
	}
	return append(b, "]}\n"...), nil
}

// appendDelivery appends a delivered message: its payload once, as JSON
// when it is JSON, else in base64 (an empty payload is "" in base64, never
// null), its metadata unless empty, its key unless "".
func appendDelivery(b []byte, d *drover.Delivery) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, d.ID, 10)
	if d.Key != "" {
		b = append(b, `,"key":`...)
		b = appendJSONString(b, d.Key)
	}
	asJSON, asBase64, meta := payloadJSON(d.Payload, d.Metadata)
	if asJSON != nil {
		b = append(b, `,"payload":`...)
		b = append(b, asJSON...)
	} else {
		b = append(b, `,"payload_base64":"`...)
		b = base64.StdEncoding.AppendEncode(b, *asBase64)
		b = append(b, '"')
	}
	if meta != nil {
		// Stored metadata is a JSON object the library checked when it
		// was published; checked again, so that a store's bad text fails
		// the answer rather than hands out JSON a consumer cannot read.
		if !json.Valid(meta) {
			return nil, errors.New("metadata: stored text is not JSON")
		}
		b = append(b, `,"metadata":`...)
		b = append(b, meta...)
	}
	b = append(b, `,"published_at":"`...)
	// AppendText writes RFC 3339 as encoding/json does, and refuses a year
	// it cannot write, as the claim's encoder relies on too.
	out, err := d.PublishedAt.AppendText(b)
	if err != nil {
		return nil, fmt.Errorf("published_at: %w", err)
	}
	b = append(out, `","attempt":`...)
	b = strconv.AppendInt(b, int64(d.Attempt), 10)
	return append(b, '}'), nil
}

// payloadJSON is a message's payload as JSON when it is JSON, else in
// base64, and its metadata unless empty. JSON only when it is text: Go's
// json.Valid takes invalid UTF-8 inside strings, which a Go publisher's
// bytes may hold and other languages' decoders refuse.
func payloadJSON(payload, metadata []byte) (asJSON json.RawMessage, asBase64 *[]byte, meta json.RawMessage) {
	if startsJSON(payload) && json.Valid(payload) && utf8.Valid(payload) {
		asJSON = payload
	} else {
		if payload == nil {
			payload = []byte{}
		}
		asBase64 = &payload
	}
	if len(metadata) > 0 && string(metadata) != "{}" {
		meta = metadata
	}
	return asJSON, asBase64, meta
}

// startsJSON reports whether b's first byte past white space may begin a
// JSON value: most bytes that are not JSON fail here, before json.Valid,
// whose error for them costs an allocation per message.
func startsJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', '[', '"', '-', 't', 'f', 'n', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return true
		}
		return false
	}
	return false
}

// peekedJSON is a message a peek read (drover.PeekedMessage), its payload
// once as a delivery's.
type peekedJSON struct {
	ID            int64           `json:"id"`
	Lane          int             `json:"lane"`
	Key           string          `json:"key,omitempty"`
	Payload       json.RawMessage `json:"payload,omitempty"`
	PayloadBase64 *[]byte         `json:"payload_base64,omitempty"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	PublishedAt   time.Time       `json:"published_at"`
}

// maxPeekCursor is the longest peek cursor: a position of each of up to
// drover.MaxTopicLanes lanes, two int64s and their separators, and the
// older mark.
const maxPeekCursor = drover.MaxTopicLanes*(19+1+19+1) + 1

// peekTopic reads a topic's messages without consuming them
// (Client.PeekTopic): the newest, those published after a cursor, or the
// page before an older cursor.
func (s *Server) peekTopic(w http.ResponseWriter, r *http.Request) error {
	topic, err := topicPath(r)
	if err != nil {
		return err
	}
	limit := 20
	if v := r.URL.Query().Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 || limit > drover.MaxTopicPeek {
			return badRequest("limit %.20q: must be between 1 and %d", v, drover.MaxTopicPeek)
		}
	}
	cursor := r.URL.Query().Get("cursor")
	if len(cursor) > maxPeekCursor {
		return badRequest("cursor: %d bytes, longer than a cursor (at most %d)", len(cursor), maxPeekCursor)
	}
	peek, err := s.cfg.Client.PeekTopic(r.Context(), topic, limit, cursor)
	if err != nil {
		return err
	}
	out := make([]peekedJSON, len(peek.Messages))
	for i, m := range peek.Messages {
		out[i] = peekedJSON{ID: m.ID, Lane: m.Lane, Key: m.Key, PublishedAt: m.PublishedAt}
		out[i].Payload, out[i].PayloadBase64, out[i].Metadata = payloadJSON(m.Payload, m.Metadata)
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out, "cursor": peek.Cursor, "older": peek.Older})
	return nil
}

// receive leases batches of a subscription, waiting up to wait_ms for a
// publish to the topic when none is waiting.
func (s *Server) receive(w http.ResponseWriter, r *http.Request) error {
	topic, err := topicPath(r)
	if err != nil {
		return err
	}
	var req struct {
		Worker     string `json:"worker"`
		MaxBatches int    `json:"max_batches"`
		BatchSize  int    `json:"batch_size"`
		LeaseMS    int64  `json:"lease_ms"`
		WaitMS     int64  `json:"wait_ms"`
	}
	req.MaxBatches, req.BatchSize, req.LeaseMS = 1, 100, drover.LeaseDurationDefault.Milliseconds()
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Worker == "" {
		return badRequest("worker: required, an ID of the consumer process (it becomes the lanes' lease owner)")
	}
	if req.MaxBatches < 1 || req.MaxBatches > drover.MaxTopicLanes {
		return badRequest("max_batches %d: must be between 1 and %d", req.MaxBatches, drover.MaxTopicLanes)
	}
	if req.BatchSize < 1 || req.BatchSize > 10_000 {
		return badRequest("batch_size %d: must be between 1 and 10000", req.BatchSize)
	}
	if err := checkLeaseMS(req.LeaseMS); err != nil {
		return err
	}
	wait := millis(req.WaitMS)
	if req.WaitMS < 0 || wait > s.cfg.MaxWait {
		return badRequest("wait_ms %d: must be between 0 and %d", req.WaitMS, s.cfg.MaxWait.Milliseconds())
	}
	s.holdFor(w, wait)
	p := drover.ReceiveParams{Topic: topic, Subscription: r.PathValue("name"), Owner: req.Worker,
		MaxBatches: req.MaxBatches, BatchSize: req.BatchSize, Lease: millis(req.LeaseMS), MaxBytes: s.cfg.MaxReceiveBytes}
	ctx := r.Context()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	poll := s.store.PollInterval()
	for {
		select {
		case <-s.stopping:
			writeJSON(w, http.StatusOK, map[string]any{"batches": []any{}})
			return nil
		default:
		}
		// The wake-up channel is taken before the lease, so that a
		// publish between the two ends the wait.
		woken := s.waiter.wait(droverdriver.TopicWake(topic))
		batches, err := s.cfg.Client.Receive(ctx, p)
		if err != nil {
			return err
		}
		if len(batches) > 0 || wait == 0 {
			body, err := appendBatches(nil, batches)
			if err != nil {
				return fmt.Errorf("cannot encode the answer as JSON: %w", err)
			}
			writeBody(w, http.StatusOK, body)
			return nil
		}
		select {
		case <-woken:
		case <-time.After(poll):
		case <-deadline.C:
			wait = 0 // one last receive, then answer
		case <-s.stopping:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ack acknowledges received batches: failed names messages (by ID, with
// their errors) that become retry jobs. nack fails whole batches.
func (s *Server) ack(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Acks []struct {
			Receipt string            `json:"receipt"`
			Failed  map[string]string `json:"failed"`
		} `json:"acks"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	acks := make([]drover.BatchAck, len(req.Acks))
	for i, a := range req.Acks {
		acks[i].Receipt = a.Receipt
		for id, msg := range a.Failed {
			var n int64
			if err := json.Unmarshal([]byte(id), &n); err != nil || n < 1 {
				return badRequest("ack %d: failed: %q is not a message ID", i+1, id)
			}
			if acks[i].Failed == nil {
				acks[i].Failed = map[int64]string{}
			}
			acks[i].Failed[n] = msg
		}
	}
	return s.writeAcks(w, r, acks)
}

func (s *Server) nack(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Receipts []string `json:"receipts"`
		Error    string   `json:"error"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	acks := make([]drover.BatchAck, len(req.Receipts))
	for i, rc := range req.Receipts {
		acks[i] = drover.BatchAck{Receipt: rc, FailAll: cmp.Or(req.Error, "nacked")}
	}
	return s.writeAcks(w, r, acks)
}

func (s *Server) writeAcks(w http.ResponseWriter, r *http.Request, acks []drover.BatchAck) error {
	topic, sub, err := subscriptionPath(r)
	if err != nil {
		return err
	}
	if len(acks) == 0 || len(acks) > s.cfg.MaxBatch {
		return badRequest("between 1 and %d receipts", s.cfg.MaxBatch)
	}
	accepted, err := s.cfg.Client.AckBatches(r.Context(), topic, sub, acks)
	if err != nil {
		return err
	}
	s.lanesFreed(topic, accepted)
	writeJSON(w, http.StatusOK, map[string]any{"accepted": accepted})
	return nil
}

// lanesFreed ends the long polls of receives of topic waiting in this
// process when an ack or a release freed a lane (some of done true): its
// next batch is theirs now. A consumer sends its next receive while the
// acks of its last batches are on the way, and that receive found the
// lanes still held; the store announces publishes only, so it waited for
// the poll interval (a second on PostgreSQL) before looking again.
func (s *Server) lanesFreed(topic string, done []bool) {
	if slices.Contains(done, true) {
		s.waiter.wake(droverdriver.TopicWake(topic))
	}
}

// subscriptionPath reads and checks the {topic} and {name} of the path,
// and the token's right to the topic.
func subscriptionPath(r *http.Request) (string, string, error) {
	topic, err := topicPath(r)
	if err != nil {
		return "", "", err
	}
	sub := r.PathValue("name")
	if err := validate.Subscription(sub); err != nil {
		return "", "", err
	}
	return topic, sub, nil
}

// checkLeaseMS checks the lease of a receive or an extend.
func checkLeaseMS(ms int64) error {
	if ms < 1000 || ms > drover.MaxReceiveLease.Milliseconds() {
		return badRequest("lease_ms %d: must be between 1000 and %d (extend a batch that takes longer)", ms, drover.MaxReceiveLease.Milliseconds())
	}
	return nil
}

// receiptsJSON is the body of an extend or a release.
type receiptsJSON struct {
	Receipts []string `json:"receipts"`
	LeaseMS  int64    `json:"lease_ms"`
}

// decodeReceipts reads the receipts of an extend or a release.
func (s *Server) decodeReceipts(r *http.Request) (receiptsJSON, error) {
	req := receiptsJSON{LeaseMS: drover.LeaseDurationDefault.Milliseconds()}
	if err := decode(r, &req); err != nil {
		return req, err
	}
	if len(req.Receipts) == 0 || len(req.Receipts) > s.cfg.MaxBatch {
		return req, badRequest("receipts: between 1 and %d", s.cfg.MaxBatch)
	}
	return req, nil
}

// extendBatches extends the leases of received batches: a consumer still
// working on them after a third of their lease extends them, and stops
// working on those answered false (lost to another consumer).
func (s *Server) extendBatches(w http.ResponseWriter, r *http.Request) error {
	return s.onReceipts(w, r, "extended", func(ctx context.Context, topic, sub string, req receiptsJSON) ([]bool, error) {
		if err := checkLeaseMS(req.LeaseMS); err != nil {
			return nil, err
		}
		return s.cfg.Client.ExtendBatches(ctx, topic, sub, req.Receipts, millis(req.LeaseMS))
	})
}

// releaseBatches hands received batches back undelivered (a consumer
// shutting down): not counted as attempts.
func (s *Server) releaseBatches(w http.ResponseWriter, r *http.Request) error {
	return s.onReceipts(w, r, "released", func(ctx context.Context, topic, sub string, req receiptsJSON) ([]bool, error) {
		released, err := s.cfg.Client.ReleaseBatches(ctx, topic, sub, req.Receipts)
		s.lanesFreed(topic, released)
		return released, err
	})
}

// onReceipts answers an extend or a release: run's answer per receipt,
// under key.
func (s *Server) onReceipts(w http.ResponseWriter, r *http.Request, key string,
	run func(ctx context.Context, topic, sub string, req receiptsJSON) ([]bool, error)) error {
	topic, sub, err := subscriptionPath(r)
	if err != nil {
		return err
	}
	req, err := s.decodeReceipts(r)
	if err != nil {
		return err
	}
	out, err := run(r.Context(), topic, sub, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{key: out})
	return nil
}

// laneJSON is one lane of a subscription.
type laneJSON struct {
	Lane           int        `json:"lane"`
	Cursor         int64      `json:"cursor"`
	Lag            int64      `json:"lag"`
	Holder         string     `json:"holder,omitempty"`
	LeaseExpiresAt *time.Time `json:"lease_expires_at,omitempty"`
	Attempt        int        `json:"attempt"`
}

// lanes lists the lanes of a subscription with their holders.
func (s *Server) lanes(w http.ResponseWriter, r *http.Request) error {
	topic, sub, err := subscriptionPath(r)
	if err != nil {
		return err
	}
	lanes, err := s.cfg.Client.SubscriptionLanes(r.Context(), topic, sub)
	if err != nil {
		return err
	}
	out := make([]laneJSON, len(lanes))
	for i, l := range lanes {
		out[i] = laneJSON{Lane: l.Lane, Cursor: l.Cursor, Lag: l.Pending, Holder: l.Holder, LeaseExpiresAt: l.LeaseExpiresAt, Attempt: l.Attempt}
	}
	writeJSON(w, http.StatusOK, map[string]any{"lanes": out})
	return nil
}

// lanePath reads the {lane} of the path: a number, which ReleaseLane
// checks against the topic's lanes.
func lanePath(r *http.Request) (int, error) {
	lane, err := strconv.Atoi(r.PathValue("lane"))
	if err != nil || lane < 0 {
		return 0, badRequest("lane %q: not a lane number", r.PathValue("lane"))
	}
	return lane, nil
}

// releaseLane frees a held lane: its lease ends now, as if it had expired.
func (s *Server) releaseLane(w http.ResponseWriter, r *http.Request) error {
	topic, sub, err := subscriptionPath(r)
	if err != nil {
		return err
	}
	lane, err := lanePath(r)
	if err != nil {
		return err
	}
	released, err := s.cfg.Client.ReleaseLane(r.Context(), topic, sub, lane)
	if err != nil {
		return err
	}
	s.lanesFreed(topic, []bool{released})
	writeJSON(w, http.StatusOK, map[string]any{"released": released})
	return nil
}

// rewindJSON is a rewind's answer (drover.SubscriptionRewind).
type rewindJSON struct {
	Lanes         int        `json:"lanes"`
	Released      int        `json:"released"`
	Pending       int64      `json:"pending"`
	OldestPending *time.Time `json:"oldest_pending"`
}

// rewindSubscription takes a subscription back to the earliest message
// kept or to a publish time. The body names one of them, so that an empty
// body rewinds nothing.
func (s *Server) rewindSubscription(w http.ResponseWriter, r *http.Request) error {
	topic, sub, err := subscriptionPath(r)
	if err != nil {
		return err
	}
	var req struct {
		Earliest bool `json:"earliest"`
		// Since is read here rather than by the decoder, so that a bad
		// one is named.
		Since *string `json:"since"`
	}
	if err := decode(r, &req); err != nil {
		return err
	}
	if req.Earliest == (req.Since != nil) {
		return badRequest("earliest, since: give one (earliest: true, or since: a publish time)")
	}
	var opts drover.RewindOpts
	if req.Since != nil {
		t, err := time.Parse(time.RFC3339Nano, *req.Since)
		if err != nil {
			return badRequest("since %.40q: not an RFC 3339 time", *req.Since)
		}
		opts.Since = t
	}
	res, err := s.cfg.Client.RewindSubscription(r.Context(), topic, sub, opts)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rewindJSON{Lanes: res.Lanes, Released: res.Released, Pending: res.Pending, OldestPending: res.OldestPending})
	return nil
}

// sampleTopics reads every subscription's lag, of every topic in one
// statement, and the open publishers, for the metrics and the dashboard. A
// store without topics has none.
func (s *Server) sampleTopics(ctx context.Context, now time.Time) ([]drovertype.SubscriptionLag, error) {
	out, err := s.cfg.Client.SubscriptionLags(ctx)
	if errors.Is(err, droverdriver.ErrTopicsUnsupported) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	open, err := s.cfg.Client.TopicPublishers(ctx)
	if err != nil {
		return nil, err
	}
	s.metrics.observeLag(out, now)
	s.metrics.observePublishers(open, now)
	st := s.cfg.Client.Stats()
	s.topicSamples.add(topicSample{At: now, Lags: out, Published: st.Published, Delivered: st.Delivered, Publishers: open})
	return out, nil
}
