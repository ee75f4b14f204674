package droversqlite

import (
	"context"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

func TestZZStarve(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	a := open(t, path)
	migrate(t, a)
	b := open(t, path)
	if _, err := a.TopicCreate(ctx, droverdriver.TopicParams{Name: "t", Lanes: 4, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	msgs := make([]droverdriver.PublishParams, 500)
	for i := range msgs {
		msgs[i] = droverdriver.PublishParams{Topic: "t", Lane: i % 4, Payload: make([]byte, 200)}
	}
	var stop atomic.Bool
	var pubs atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			if _, err := a.TopicPublish(ctx, msgs); err != nil {
				t.Error(err)
				return
			}
			pubs.Add(1)
		}
	}()
	var lat []time.Duration
	for range 40 {
		start := time.Now()
		if _, err := b.TopicPublish(ctx, msgs[:1]); err != nil {
			t.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	stop.Store(true)
	<-done
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("a published %d; b latencies p50 %v p90 %v max %v", pubs.Load(), lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1])
}
