package server

import (
	"errors"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/droverdriver"
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
	Lags                 []drover.SubscriptionLag
	Published, Delivered int64
	// Publishers are the open transactions that published messages.
	Publishers []drover.OpenPublisher
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
	drover.SubscriptionLag
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
}

// topicRows joins the stored topics with the last two samples. A
// subscription created after the last sample is listed with no figures
// rather than read here.
func topicRows(topics []*drover.Topic, prev, cur topicSample) ([]topicRow, topicRates) {
	type key struct{ topic, sub string }
	before := map[key]drover.SubscriptionLag{}
	for _, l := range prev.Lags {
		before[key{l.Topic, l.Subscription}] = l
	}
	now := map[key]drover.SubscriptionLag{}
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
		r := topicRow{Topic: t}
		subs := append([]string(nil), t.Subscriptions...)
		sort.Strings(subs)
		for _, name := range subs {
			k := key{t.Name, name}
			sr := subscriptionRow{SubscriptionLag: drover.SubscriptionLag{Subscription: name}}
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
func stalledPublisher(p topicSample, after time.Duration) *drover.OpenPublisher {
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
		Stalled     *drover.OpenPublisher
	}{page{Title: "Topics"}, rows, rates, cur.At, s.cfg.SampleInterval, unsupported, stalledPublisher(cur, s.cfg.PublisherStallAfter)})
}

// lanesPage shows the lanes of one subscription: who holds each, until
// when, its cursor, lag and attempt. It reads them on view (one statement
// over the subscription's lanes), as an operator looks for a stuck
// consumer; drover topics release-lane and the API free a lane.
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
	}{page{Title: topic + "/" + sub}, topic, sub, lanes, time.Now()})
}
