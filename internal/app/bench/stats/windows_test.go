package stats

import (
	"encoding/json"
	"math"
	"reflect"
	"sort"
	"testing"
	"time"
)

func TestNewSamplerClampsWindow(t *testing.T) {
	tests := []struct {
		in, want time.Duration
	}{
		{0, DefaultWindow},
		{time.Second, MinWindow},
		{3 * time.Second, 3 * time.Second},
		{time.Minute, MaxWindow},
	}
	for _, tt := range tests {
		if got := NewSampler(time.Time{}, tt.in).WindowLength(); got != tt.want {
			t.Errorf("NewSampler(_, %v).WindowLength() = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// sample is one call to Sampler.Sample (or Flush) at a time offset.
type sample struct {
	at        time.Duration
	c         Counters
	latencies []time.Duration // recorded before this sample
	flush     bool
}

func TestSamplerWindows(t *testing.T) {
	const ms = int64(time.Millisecond)
	tests := []struct {
		name    string
		window  time.Duration
		samples []sample
		want    []Window
	}{
		{
			name:   "two full windows from one-second samples",
			window: 2 * time.Second,
			samples: []sample{
				{at: 1 * time.Second, c: Counters{Jobs: 50}},
				{at: 2 * time.Second, c: Counters{
					Jobs: 100, ClaimNanos: 10 * 4 * ms, ClaimCount: 10,
					CompleteNanos: 20 * ms, CompleteCount: 10,
					HandlerNanos: 100 * ms, HandlerCount: 100, Backlog: 900,
				}},
				{at: 3 * time.Second, c: Counters{Jobs: 200}},
				{at: 4 * time.Second, c: Counters{
					Jobs: 400, ClaimNanos: 40*ms + 20*2*ms, ClaimCount: 30,
					CompleteNanos: 20*ms + 40*ms, CompleteCount: 30,
					HandlerNanos: 100*ms + 600*ms, HandlerCount: 400, Backlog: 600,
				}},
			},
			want: []Window{
				{StartSec: 0, Seconds: 2, Jobs: 100, Rate: 50, ClaimMs: 4, Claims: 10, CompleteMs: 2, HandlerMs: 1, Backlog: 900},
				{StartSec: 2, Seconds: 2, Jobs: 300, Rate: 150, ClaimMs: 2, Claims: 20, CompleteMs: 2, HandlerMs: 2, Backlog: 600},
			},
		},
		{
			name:   "slightly early tick still closes the window",
			window: 5 * time.Second,
			samples: []sample{
				{at: 4990 * time.Millisecond, c: Counters{Jobs: 499}},
			},
			want: []Window{
				{StartSec: 0, Seconds: 4.99, Jobs: 499, Rate: 100},
			},
		},
		{
			name:   "late sample makes a longer window",
			window: 2 * time.Second,
			samples: []sample{
				{at: 1 * time.Second, c: Counters{Jobs: 10}},
				{at: 3 * time.Second, c: Counters{Jobs: 30}},
			},
			want: []Window{
				{StartSec: 0, Seconds: 3, Jobs: 30, Rate: 10},
			},
		},
		{
			name:   "flush closes a partial tail",
			window: 2 * time.Second,
			samples: []sample{
				{at: 2 * time.Second, c: Counters{Jobs: 200, Backlog: 50}},
				{at: 2500 * time.Millisecond, c: Counters{Jobs: 250}, flush: true},
			},
			want: []Window{
				{StartSec: 0, Seconds: 2, Jobs: 200, Rate: 100, Backlog: 50},
				{StartSec: 2, Seconds: 0.5, Jobs: 50, Rate: 100},
			},
		},
		{
			name:   "flush without new jobs adds nothing",
			window: 2 * time.Second,
			samples: []sample{
				{at: 2 * time.Second, c: Counters{Jobs: 200}},
				{at: 3 * time.Second, c: Counters{Jobs: 200}, flush: true},
			},
			want: []Window{
				{StartSec: 0, Seconds: 2, Jobs: 200, Rate: 100},
			},
		},
		{
			name:   "per-window p99 resets each window",
			window: 2 * time.Second,
			samples: []sample{
				{at: 2 * time.Second, c: Counters{Jobs: 2}, latencies: []time.Duration{10 * time.Millisecond, 10 * time.Millisecond}},
				{at: 4 * time.Second, c: Counters{Jobs: 4}, latencies: []time.Duration{3 * time.Millisecond}},
				{at: 6 * time.Second, c: Counters{Jobs: 6}},
			},
			want: []Window{
				{StartSec: 0, Seconds: 2, Jobs: 2, Rate: 1, P99Ms: 10},
				{StartSec: 2, Seconds: 2, Jobs: 2, Rate: 1, P99Ms: 3},
				{StartSec: 4, Seconds: 2, Jobs: 2, Rate: 1, P99Ms: 0},
			},
		},
		{
			name:    "no samples",
			window:  2 * time.Second,
			samples: nil,
			want:    nil,
		},
	}
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSampler(start, tt.window)
			for _, sm := range tt.samples {
				for _, d := range sm.latencies {
					s.RecordLatency(d)
				}
				if sm.flush {
					s.Flush(start.Add(sm.at), sm.c)
				} else {
					s.Sample(start.Add(sm.at), sm.c)
				}
			}
			got := s.Windows()
			if len(got) != len(tt.want) {
				t.Fatalf("got %d windows, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				if !windowsEqual(got[i], tt.want[i]) {
					t.Errorf("window %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestSampleReturnsClosedWindow(t *testing.T) {
	start := time.Unix(0, 0)
	s := NewSampler(start, 2*time.Second)
	if _, ok := s.Sample(start.Add(time.Second), Counters{Jobs: 1}); ok {
		t.Fatal("Sample closed a window after half its length")
	}
	w, ok := s.Sample(start.Add(2*time.Second), Counters{Jobs: 10})
	if !ok || w.Jobs != 10 {
		t.Fatalf("Sample = %+v, %v; want a window of 10 jobs", w, ok)
	}
}

func windowsEqual(a, b Window) bool {
	const eps = 1e-9
	// P99 comes from an HDR histogram, so it is compared with its precision.
	return math.Abs(a.StartSec-b.StartSec) < eps &&
		math.Abs(a.Seconds-b.Seconds) < eps &&
		a.Jobs == b.Jobs &&
		math.Abs(a.Rate-b.Rate) < eps &&
		math.Abs(a.ClaimMs-b.ClaimMs) < eps &&
		a.Claims == b.Claims &&
		math.Abs(a.CompleteMs-b.CompleteMs) < eps &&
		math.Abs(a.HandlerMs-b.HandlerMs) < eps &&
		a.Backlog == b.Backlog &&
		within(a.P99Ms, b.P99Ms, 0.002)
}

func TestWindowJSONKeys(t *testing.T) {
	b, err := json.Marshal(Window{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range m {
		got = append(got, k)
	}
	sort.Strings(got)
	want := []string{"backlog", "claim_ms", "claims", "complete_ms", "handler_ms", "jobs", "p99_ms", "rate", "seconds", "start_sec"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("keys = %v, want %v", got, want)
	}
}
