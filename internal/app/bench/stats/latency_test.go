package stats

import (
	"encoding/json"
	"math"
	"sync"
	"testing"
	"time"
)

// within reports whether got is within rel (a fraction) of want; HDR
// histograms with 3 significant digits promise 0.1 %, and the tests allow a
// little more for the percentile rank rounding.
func within(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)
}

func TestLatencyPercentiles(t *testing.T) {
	uniform := func(l *Latency) {
		for ms := 1; ms <= 1000; ms++ {
			l.Record(time.Duration(ms) * time.Millisecond)
		}
	}
	tests := []struct {
		name   string
		record func(*Latency)
		want   Percentiles
	}{
		{
			name:   "uniform 1..1000 ms",
			record: uniform,
			want:   Percentiles{P50: 500, P95: 950, P99: 990, Max: 1000, Count: 1000},
		},
		{
			name: "constant 2 ms",
			record: func(l *Latency) {
				for range 100 {
					l.Record(2 * time.Millisecond)
				}
			},
			want: Percentiles{P50: 2, P95: 2, P99: 2, Max: 2, Count: 100},
		},
		{
			name: "sub-microsecond clamps to 1 µs",
			record: func(l *Latency) {
				l.Record(0)
				l.Record(-time.Second)
				l.Record(300 * time.Nanosecond)
			},
			want: Percentiles{P50: 0.001, P95: 0.001, P99: 0.001, Max: 0.001, Count: 3},
		},
		{
			name: "beyond 10 minutes clamps to the maximum",
			record: func(l *Latency) {
				l.Record(time.Hour)
			},
			want: Percentiles{P50: 600000, P95: 600000, P99: 600000, Max: 600000, Count: 1},
		},
		{
			name:   "empty",
			record: func(*Latency) {},
			want:   Percentiles{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l Latency // the zero value must be usable
			tt.record(&l)
			got := l.Snapshot()
			if got.Count != tt.want.Count {
				t.Fatalf("Count = %d, want %d", got.Count, tt.want.Count)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{
				{"P50", got.P50, tt.want.P50},
				{"P95", got.P95, tt.want.P95},
				{"P99", got.P99, tt.want.P99},
				{"Max", got.Max, tt.want.Max},
			} {
				if !within(f.got, f.want, 0.002) {
					t.Errorf("%s = %v, want %v ± 0.2%%", f.name, f.got, f.want)
				}
			}
		})
	}
}

func TestLatencyMerge(t *testing.T) {
	tests := []struct {
		name      string
		a, b      []time.Duration
		wantCount int64
		wantMax   float64
		wantP50   float64
	}{
		{
			name:      "disjoint ranges",
			a:         []time.Duration{time.Millisecond, 2 * time.Millisecond},
			b:         []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond},
			wantCount: 5,
			wantMax:   300,
			wantP50:   100,
		},
		{
			name:      "empty other",
			a:         []time.Duration{5 * time.Millisecond},
			wantCount: 1,
			wantMax:   5,
			wantP50:   5,
		},
		{
			name:      "empty receiver",
			b:         []time.Duration{7 * time.Millisecond},
			wantCount: 1,
			wantMax:   7,
			wantP50:   7,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := NewLatency(), &Latency{}
			for _, d := range tt.a {
				a.Record(d)
			}
			for _, d := range tt.b {
				b.Record(d)
			}
			a.Merge(b)
			got := a.Snapshot()
			if got.Count != tt.wantCount {
				t.Errorf("Count = %d, want %d", got.Count, tt.wantCount)
			}
			if !within(got.Max, tt.wantMax, 0.002) {
				t.Errorf("Max = %v, want %v", got.Max, tt.wantMax)
			}
			if !within(got.P50, tt.wantP50, 0.002) {
				t.Errorf("P50 = %v, want %v", got.P50, tt.wantP50)
			}
			if bc := b.Snapshot().Count; bc != int64(len(tt.b)) {
				t.Errorf("Merge changed its argument: count %d, want %d", bc, len(tt.b))
			}
		})
	}
}

func TestLatencyMergeNilAndSelf(t *testing.T) {
	l := NewLatency()
	l.Record(time.Millisecond)
	l.Merge(nil)
	l.Merge(l)
	if got := l.Snapshot().Count; got != 2 {
		t.Fatalf("Count after self-merge = %d, want 2", got)
	}
}

func TestLatencyConcurrent(t *testing.T) {
	const workers, each = 8, 1000
	var total Latency
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := NewLatency()
			for i := range each {
				d := time.Duration(i+1) * time.Microsecond
				total.Record(d)
				local.Record(d)
			}
			// Cross merges must neither deadlock nor race.
			if w%2 == 0 {
				local.Merge(&total)
			}
			_ = total.Snapshot()
		}()
	}
	wg.Wait()
	if got := total.Snapshot().Count; got != workers*each {
		t.Fatalf("Count = %d, want %d", got, workers*each)
	}
}

func TestPercentilesJSON(t *testing.T) {
	b, err := json.Marshal(Percentiles{P50: 1, P95: 2, P99: 3, Max: 4, Count: 5})
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"p50":1,"p95":2,"p99":3,"max":4,"count":5}`
	if string(b) != want {
		t.Fatalf("JSON = %s, want %s", b, want)
	}
}
