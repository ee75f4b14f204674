package server

import (
	"testing"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// TestTopicRows: rates come from two samples' counters, a subscription's
// lag trend from its two readings, and a subscription the last sample
// missed is listed unsampled.
func TestTopicRows(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lag := func(topic, sub string, pending int64) drovertype.SubscriptionLag {
		return drovertype.SubscriptionLag{Topic: topic, Subscription: sub, Pending: pending}
	}
	topics := []*drover.Topic{{Name: "b", Subscriptions: []string{"y", "x"}}, {Name: "a"}}
	for _, tc := range []struct {
		name          string
		prev, cur     topicSample
		wantPublished float64
		wantDelivered float64
		// want is topic/subscription: sampled, pending, trend, lag per second.
		want map[string][4]any
	}{
		{name: "no sample", want: map[string][4]any{"b/x": {false, int64(0), false, 0.0}, "b/y": {false, int64(0), false, 0.0}}},
		{name: "one sample",
			cur:  topicSample{At: t0, Lags: []drovertype.SubscriptionLag{lag("b", "x", 7)}, Published: 10},
			want: map[string][4]any{"b/x": {true, int64(7), false, 0.0}, "b/y": {false, int64(0), false, 0.0}}},
		{name: "two samples",
			prev:          topicSample{At: t0, Lags: []drovertype.SubscriptionLag{lag("b", "x", 10), lag("b", "y", 0)}, Published: 100, Delivered: 50},
			cur:           topicSample{At: t0.Add(2 * time.Second), Lags: []drovertype.SubscriptionLag{lag("b", "x", 4), lag("b", "y", 8)}, Published: 120, Delivered: 90},
			wantPublished: 10, wantDelivered: 20,
			want: map[string][4]any{"b/x": {true, int64(4), true, -3.0}, "b/y": {true, int64(8), true, 4.0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, rates := topicRows(topics, tc.prev, tc.cur)
			if rates.Published != tc.wantPublished || rates.Delivered != tc.wantDelivered {
				t.Errorf("rates %+v, want published %v delivered %v", rates, tc.wantPublished, tc.wantDelivered)
			}
			if len(rows) != 2 || rows[0].Name != "a" || len(rows[0].Subscriptions) != 0 || rows[1].Name != "b" {
				t.Fatalf("rows %+v, want a then b", rows)
			}
			if s := rows[1].Subscriptions; len(s) != 2 || s[0].Subscription != "x" || s[1].Subscription != "y" {
				t.Fatalf("subscriptions of b %+v, want x then y", s)
			}
			for _, s := range rows[1].Subscriptions {
				got := [4]any{s.Sampled, s.Pending, s.Trend, s.LagPerSecond}
				if got != tc.want["b/"+s.Subscription] {
					t.Errorf("b/%s = %v, want %v", s.Subscription, got, tc.want["b/"+s.Subscription])
				}
			}
		})
	}
}
