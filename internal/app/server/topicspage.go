package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
	"github.com/droverhq/drover/drovertype"
	"github.com/droverhq/drover/internal/validate"
)

// The dashboard's topics page. Like the queues overview, its figures come
// from the sampler (sampleTopics), not from the page view: a view reads
// only the small topics table, so that a page left open does not add a
// lag statement per topic and refresh.

// topicSample is one reading of every subscription's lag, with this
// server's publish and delivery counters at the time: two consecutive
// samples give the rates.
type topicSample struct {
	At                   time.Time
	Lags                 []drovertype.SubscriptionLag
	Published, Delivered int64
	// Publishers are the open transactions that published messages.
	Publishers []drovertype.OpenPublisher
}

// topicSamples keeps the last two samples.
type topicSamples struct {
	mu        sync.Mutex
	prev, cur topicSample
}

func (s *topicSamples) add(p topicSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prev, s.cur = s.cur, p
}

func (s *topicSamples) latest() (prev, cur topicSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prev, s.cur
}

// topicRates are the rates between two samples; zero before the second.
type topicRates struct {
	// Published and Delivered are per second through this server (its
	// publish endpoint and its remote consumers' acks, the Go client's
	// counters): other processes publishing or consuming directly do not
	// count here, and their effect shows in the lag.
	Published, Delivered float64
	Seconds              float64
}

// subscriptionRow is one subscription's line of the topics page.
type subscriptionRow struct {
	drovertype.SubscriptionLag
	// Sampled is false for a subscription the last sample did not have
	// (created since): the page shows no figures for it yet.
	Sampled bool
	// LagPerSecond is how fast the lag grew (negative: shrank) since the
	// previous sample; Trend is false before the second sample or for a
	// subscription the previous one did not have.
	LagPerSecond float64
	Trend        bool
}

// topicRow is a topic with its subscriptions' figures.
type topicRow struct {
	*drover.Topic
	Subscriptions []subscriptionRow
	// RetryQueue is the queue of the jobs its failed messages become.
	RetryQueue string
}

// topicRows joins the stored topics with the last two samples. A
// subscription created after the last sample is listed with no figures
// rather than read here.
func topicRows(topics []*drover.Topic, prev, cur topicSample) ([]topicRow, topicRates) {
	type key struct{ topic, sub string }
	before := map[key]drovertype.SubscriptionLag{}
	for _, l := range prev.Lags {
		before[key{l.Topic, l.Subscription}] = l
	}
	now := map[key]drovertype.SubscriptionLag{}
	for _, l := range cur.Lags {
		now[key{l.Topic, l.Subscription}] = l
	}
	var rates topicRates
	if !prev.At.IsZero() && cur.At.After(prev.At) {
		rates.Seconds = cur.At.Sub(prev.At).Seconds()
		rates.Published = float64(cur.Published-prev.Published) / rates.Seconds
		rates.Delivered = float64(cur.Delivered-prev.Delivered) / rates.Seconds
	}
	rows := make([]topicRow, 0, len(topics))
	for _, t := range topics {
		r := topicRow{Topic: t, RetryQueue: drover.RetryQueue(t.Name)}
		subs := append([]string(nil), t.Subscriptions...)
		sort.Strings(subs)
		for _, name := range subs {
			k := key{t.Name, name}
			sr := subscriptionRow{SubscriptionLag: drovertype.SubscriptionLag{Subscription: name}}
			if l, ok := now[k]; ok {
				sr.SubscriptionLag, sr.Sampled = l, true
				if b, ok := before[k]; ok && rates.Seconds > 0 {
					sr.LagPerSecond = float64(l.Pending-b.Pending) / rates.Seconds
					sr.Trend = true
				}
			}
			r.Subscriptions = append(r.Subscriptions, sr)
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows, rates
}

// stalledPublisher is the oldest open publisher of sample p that has been
// open for after, the one the page names; nil when there is none.
func stalledPublisher(p topicSample, after time.Duration) *drovertype.OpenPublisher {
	for i, o := range p.Publishers {
		if !o.Started.IsZero() && p.At.Sub(o.Started) >= after {
			return &p.Publishers[i]
		}
	}
	return nil
}

func (s *Server) topicsPage(w http.ResponseWriter, r *http.Request) error {
	prev, cur := s.topicSamples.latest()
	topics, err := s.cfg.Client.Topics(r.Context())
	unsupported := errors.Is(err, droverdriver.ErrTopicsUnsupported)
	if err != nil && !unsupported {
		return err
	}
	rows, rates := topicRows(topics, prev, cur)
	return render(w, http.StatusOK, s.pages.topics, struct {
		page
		Topics      []topicRow
		Rates       topicRates
		Sampled     time.Time
		Interval    time.Duration
		Unsupported bool
		Stalled     *drovertype.OpenPublisher
	}{s.page("Topics", topicFlash(r.URL.Query(), topics)), rows, rates, cur.At, s.cfg.SampleInterval, unsupported, stalledPublisher(cur, s.cfg.PublisherStallAfter)})
}

// topicPeekSize is how many of a topic's newest messages its page shows.
const topicPeekSize = 20

// payloadPreview bounds the characters of a payload or metadata the peek
// shows, so that a large message does not swamp the page.
const payloadPreview = 200

// peekRow is a message as the topic page's peek shows it: its payload and
// metadata as text, clipped.
type peekRow struct {
	*drover.PeekedMessage
	Payload, Metadata string
}

// clipped writes b as text (base64 for bytes that are not text, as
// drover topics peek does), cut to payloadPreview characters with an
// ellipsis saying so.
func clipped(b []byte) string {
	s := string(b)
	if !utf8.Valid(b) || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) {
		s = "base64:" + base64.StdEncoding.EncodeToString(b)
	}
	if utf8.RuneCountInString(s) <= payloadPreview {
		return s
	}
	return string([]rune(s)[:payloadPreview]) + "…"
}

// topicPage shows one topic: its options, its subscriptions' lag from the
// last sample with their actions, the chart of their lag over time, the
// link to its retry queue, and a peek at its messages (Client.PeekTopic,
// which moves no subscription and holds no lane): the newest ones, or with
// after the cursor of an earlier peek, those published since, so that the
// page's "newer" link goes on from what it showed, or with before the
// older cursor of an earlier peek, the page of messages before it (its
// "older" link). The peek is a live region: each refresh of the page reads
// it again (one bounded backward range of each lane), so that it follows
// the topic as drover topics peek --follow does.
func (s *Server) topicPage(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("topic")
	if err := validate.Topic(name); err != nil {
		return err
	}
	topic, err := s.cfg.Client.Topic(r.Context(), name)
	if err != nil {
		return err
	}
	after, before := r.URL.Query().Get("after"), r.URL.Query().Get("before")
	cursor, field := after, "after"
	if before != "" {
		if after != "" || !strings.HasPrefix(before, "<") {
			return badRequest("before %.40q: not an older cursor of a peek (and not with after)", before)
		}
		cursor, field = before, "before"
	}
	peek, err := s.cfg.Client.PeekTopic(r.Context(), name, topicPeekSize, cursor)
	if errors.Is(err, drover.ErrInvalid) {
		return fmt.Errorf("%s: %w", field, err)
	}
	if err != nil {
		return err
	}
	messages := make([]peekRow, len(peek.Messages))
	for i, m := range peek.Messages {
		messages[i] = peekRow{PeekedMessage: m, Payload: clipped(m.Payload)}
		// Metadata is JSON, stored as PostgreSQL's jsonb writes it back
		// (with spaces) or as given: compacted, it reads the same from both.
		meta := bytes.NewBuffer(nil)
		if json.Compact(meta, m.Metadata) != nil {
			meta = bytes.NewBuffer(m.Metadata)
		}
		if meta.Len() > 0 && meta.String() != "{}" {
			messages[i].Metadata = clipped(meta.Bytes())
		}
	}
	prev, cur := s.topicSamples.latest()
	rows, _ := topicRows([]*drover.Topic{topic}, prev, cur)
	return render(w, http.StatusOK, s.pages.topic, struct {
		page
		T        topicRow
		Sampled  time.Time
		Interval time.Duration
		Messages []peekRow
		// After is the cursor the peek went on from ("" for the newest),
		// Cursor the one its "newer" link goes on from; Before the older
		// cursor it went back from, Older the one its "older" link goes
		// back from ("" when no older message is left).
		After, Cursor, Before, Older string
		PeekSize                     int
		Now                          time.Time
	}{s.page("Topic "+name, subscriptionFlash(r.URL.Query(), topic)), rows[0], cur.At, s.cfg.SampleInterval,
		messages, after, peek.Cursor, before, peek.Older, topicPeekSize, time.Now()})
}

// subscriptionDelete deletes the subscription the path names, then shows
// its topic's page with a banner saying so.
func (s *Server) subscriptionDelete(w http.ResponseWriter, r *http.Request) error {
	topic, name := r.PathValue("topic"), r.PathValue("name")
	if err := validate.Topic(topic); err != nil {
		return err
	}
	existed, err := s.cfg.Client.DeleteSubscription(r.Context(), topic, name)
	if err != nil {
		return err
	}
	if !existed {
		return &apiError{status: http.StatusNotFound, msg: fmt.Sprintf("subscription %q of topic %q: not found", name, topic)}
	}
	http.Redirect(w, r, "/ui/topics/"+url.PathEscape(topic)+"?"+url.Values{"done": {"delete"}, "subscription": {name}}.Encode(), http.StatusSeeOther)
	return nil
}

// subscriptionRewind moves the subscription the path names back
// (Client.RewindSubscription): to the earliest message kept (to=earliest),
// or to the messages published since the form's since, an RFC 3339 time or
// a duration ago, as drover topics rewind takes. It then shows the topic's
// page with a banner saying what moved and where the subscription starts.
func (s *Server) subscriptionRewind(w http.ResponseWriter, r *http.Request) error {
	topic, name := r.PathValue("topic"), r.PathValue("name")
	if err := validate.Topic(topic); err != nil {
		return err
	}
	var opts drover.RewindOpts
	switch to := r.PostFormValue("to"); to {
	case "earliest":
	case "since":
		since := strings.TrimSpace(r.PostFormValue("since"))
		var ok bool
		if opts.Since, ok = validate.TimeOrAgo(since, time.Now()); !ok {
			return badRequest("since %.40q: give an RFC 3339 time (2026-01-02T15:04:05Z) or a duration ago (90m)", since)
		}
	default:
		return badRequest("to %.20q: earliest or since", to)
	}
	res, err := s.cfg.Client.RewindSubscription(r.Context(), topic, name, opts)
	if err != nil {
		return err
	}
	q := url.Values{"done": {"rewind"}, "subscription": {name}, "lanes": {strconv.Itoa(res.Lanes)},
		"released": {strconv.Itoa(res.Released)}, "pending": {strconv.FormatInt(res.Pending, 10)}}
	if res.OldestPending != nil {
		q.Set("oldest", res.OldestPending.UTC().Format(time.RFC3339Nano))
	}
	http.Redirect(w, r, "/ui/topics/"+url.PathEscape(topic)+"?"+q.Encode(), http.StatusSeeOther)
	return nil
}

// topicDelete deletes the topic the path names, with its subscriptions
// and messages (Client.DeleteTopic), then shows the topics page with a
// banner saying so.
func (s *Server) topicDelete(w http.ResponseWriter, r *http.Request) error {
	topic := r.PathValue("topic")
	if err := validate.Topic(topic); err != nil {
		return err
	}
	deleted, err := s.cfg.Client.DeleteTopic(r.Context(), topic)
	if err != nil {
		return err
	}
	if !deleted {
		return fmt.Errorf("%w: %q", drover.ErrTopicNotFound, topic)
	}
	http.Redirect(w, r, "/ui/topics?"+url.Values{"done": {"delete"}, "topic": {topic}}.Encode(), http.StatusSeeOther)
	return nil
}

// topicFlash is the topics page's banner after a topic was deleted: the
// server's words and a name that passes the topics' check and is no
// longer stored, never other text from the URL.
func topicFlash(q url.Values, topics []*drover.Topic) string {
	name := q.Get("topic")
	if q.Get("done") != "delete" || validate.Topic(name) != nil ||
		slices.ContainsFunc(topics, func(t *drover.Topic) bool { return t.Name == name }) {
		return ""
	}
	return fmt.Sprintf("Topic %s deleted, with its subscriptions and messages; the jobs of its retry queue stay until they finish.", name)
}

// subscriptionFlash is the topic page's banner after an action on one of
// its subscriptions: the server's words and a subscription name that
// passes the names' check, never other text from the URL.
func subscriptionFlash(q url.Values, topic *drover.Topic) string {
	name := q.Get("subscription")
	if validate.Subscription(name) != nil {
		return ""
	}
	switch q.Get("done") {
	case "delete":
		if slices.Contains(topic.Subscriptions, name) {
			return ""
		}
		return fmt.Sprintf("Subscription %s of topic %s deleted, with its position; the jobs of its retry queue stay until they finish.", name, topic.Name)
	case "rewind":
		lanes, errL := strconv.Atoi(q.Get("lanes"))
		released, errR := strconv.Atoi(q.Get("released"))
		pending, errP := strconv.ParseInt(q.Get("pending"), 10, 64)
		if errL != nil || errR != nil || errP != nil || !slices.Contains(topic.Subscriptions, name) {
			return ""
		}
		from := "nothing is pending"
		if oldest, err := time.Parse(time.RFC3339Nano, q.Get("oldest")); err == nil {
			from = "the oldest was published " + oldest.Format("2006-01-02 15:04:05.000 MST")
		}
		return fmt.Sprintf("Subscription %s rewound: %d lanes moved back, %d batches out released (delivered again, their acks refused); %d messages to deliver, %s.",
			name, lanes, released, pending, from)
	}
	return ""
}

// lanesPage shows the lanes of one subscription: who holds each, until
// when, its cursor, lag and attempt, with a button that releases a held
// lane. It reads them on view (one statement over the subscription's
// lanes), as an operator looks for a stuck consumer, and again at each
// live refresh (live.js swaps the table).
func (s *Server) lanesPage(w http.ResponseWriter, r *http.Request) error {
	topic, sub := r.PathValue("topic"), r.PathValue("name")
	lanes, err := s.cfg.Client.SubscriptionLanes(r.Context(), topic, sub)
	if err != nil {
		return err
	}
	return render(w, http.StatusOK, s.pages.lanes, struct {
		page
		Topic, Subscription string
		Lanes               []drover.SubscriptionLane
		Now                 time.Time
	}{s.page(topic+"/"+sub, laneFlash(r.URL.Query(), sub)), topic, sub, lanes, time.Now()})
}

// laneRelease frees the lane the path names (Client.ReleaseLane: its lease
// ends now, so that another consumer delivers its batch again), then shows
// the subscription's lanes with a banner saying whether it was held.
func (s *Server) laneRelease(w http.ResponseWriter, r *http.Request) error {
	topic, sub := r.PathValue("topic"), r.PathValue("name")
	if err := validate.Topic(topic); err != nil {
		return err
	}
	lane, err := lanePath(r)
	if err != nil {
		return err
	}
	held, err := s.cfg.Client.ReleaseLane(r.Context(), topic, sub, lane)
	if err != nil {
		return err
	}
	q := url.Values{"done": {"release"}, "lane": {strconv.Itoa(lane)}, "held": {strconv.FormatBool(held)}}
	http.Redirect(w, r, "/ui/topics/"+url.PathEscape(topic)+"/"+url.PathEscape(sub)+"?"+q.Encode(), http.StatusSeeOther)
	return nil
}

// laneFlash is the lanes page's banner after a lane was released: the
// server's words and a lane number, never other text from the URL.
func laneFlash(q url.Values, sub string) string {
	lane, err := strconv.Atoi(q.Get("lane"))
	if q.Get("done") != "release" || err != nil || lane < 0 {
		return ""
	}
	if q.Get("held") == "true" {
		return fmt.Sprintf("Lane %d of subscription %s released: the next consumer to ask takes it and delivers its batch again; the old holder's ack is refused.", lane, sub)
	}
	return fmt.Sprintf("Lane %d of subscription %s was not held: nothing to release.", lane, sub)
}
