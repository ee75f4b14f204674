package maintenance

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/droverhq/drover/droverdriver"
)

// topicStore is a store of generations whose clock is not the test's:
// each generation's stamps (CreatedAt, SealedAt) are in the store's time,
// its ages (Age, SealedFor) measured by the store. It records what the
// retainer does; any call it does not implement panics.
type topicStore struct {
	droverdriver.Executor
	droverdriver.TopicExecutor
	gens   []droverdriver.Generation
	topics map[int64][]droverdriver.GenerationTopic
	did    []string
}

func (s *topicStore) TopicGenerations(context.Context) ([]droverdriver.Generation, error) {
	return slices.Clone(s.gens), nil
}

func (s *topicStore) TopicGenerationTopics(_ context.Context, gen int64) ([]droverdriver.GenerationTopic, error) {
	return s.topics[gen], nil
}

func (s *topicStore) Tx(ctx context.Context, fn func(context.Context, droverdriver.Executor) error) error {
	return fn(ctx, s)
}

func (s *topicStore) TopicGenerationLock(context.Context, int64) error { return nil }

func (s *topicStore) TopicDropMark(_ context.Context, gen int64) error {
	s.did = append(s.did, "mark")
	return nil
}

func (s *topicStore) TopicRotate(context.Context, int64) error {
	s.did = append(s.did, "rotate")
	return nil
}

func (s *topicStore) TopicDrop(context.Context, droverdriver.TopicDropParams) (droverdriver.TopicRemoved, error) {
	s.did = append(s.did, "drop")
	return droverdriver.TopicRemoved{Done: true}, nil
}

func (s *topicStore) TopicPurge(_ context.Context, p droverdriver.TopicPurgeParams) (droverdriver.TopicRemoved, error) {
	s.did = append(s.did, "purge "+p.Topic)
	return droverdriver.TopicRemoved{Done: true}, nil
}

// TestTopicRetainerUsesTheStoresClock runs the retainer against stores
// whose clock is hours away from the leader's: retention and rotation are
// decided by the ages the store measured, never by the leader's clock
// against the store's stamps. Before, the leader compared its own
// time.Now with the seal the database stamped: a store ahead of it kept
// messages past retention (and rotated late), one behind dropped them
// early.
func TestTopicRetainerUsesTheStoresClock(t *testing.T) {
	leader := time.Now()
	hour := time.Hour
	sealed := func(at time.Time, sealedFor time.Duration) droverdriver.Generation {
		return droverdriver.Generation{Gen: 0, CreatedAt: at.Add(-time.Minute), SealedAt: &at, Age: sealedFor + time.Minute,
			SealedFor: sealedFor, Settled: true}
	}
	current := func(created time.Time, age time.Duration, used int64) droverdriver.Generation {
		return droverdriver.Generation{Gen: 1, CreatedAt: created, Age: age, LastID: droverdriver.GenerationWidth + used - 1}
	}
	week := droverdriver.GenerationTopic{Topic: "week", Retention: 7 * 24 * hour}
	brief := droverdriver.GenerationTopic{Topic: "brief", Retention: hour}
	tests := []struct {
		name   string
		gens   []droverdriver.Generation
		topics []droverdriver.GenerationTopic
		want   []string
	}{
		// Sealed two hours ago by the store, whose stamp reads an hour
		// ahead of the leader: past a retention of an hour.
		{"store ahead: past retention", []droverdriver.Generation{sealed(leader.Add(hour), 2*hour), current(leader.Add(3*hour), time.Minute, 0)},
			[]droverdriver.GenerationTopic{brief}, []string{"mark", "drop"}},
		// Sealed half an hour ago by the store, whose stamp reads two
		// hours behind the leader: within retention.
		{"store behind: within retention", []droverdriver.Generation{sealed(leader.Add(-2*hour), hour/2), current(leader.Add(-2*hour), time.Minute, 0)},
			[]droverdriver.GenerationTopic{brief}, nil},
		// The same, with a topic that holds the generation: brief's
		// messages leave it alone, by the store's clock.
		{"store ahead: past one topic's retention", []droverdriver.Generation{sealed(leader.Add(hour), 2*hour), current(leader.Add(3*hour), time.Minute, 0)},
			[]droverdriver.GenerationTopic{brief, week}, []string{"purge brief"}},
		{"store behind: within every topic's retention", []droverdriver.Generation{sealed(leader.Add(-2*hour), hour/2), current(leader.Add(-2*hour), time.Minute, 0)},
			[]droverdriver.GenerationTopic{brief, week}, nil},
		// The current generation is ten minutes old by the store, a
		// minute by the leader's reading of its stamp: due a rotation.
		{"store behind: rotation due", []droverdriver.Generation{current(leader.Add(-time.Minute), 10*time.Minute, 5)},
			nil, []string{"rotate"}},
		{"store ahead: rotation not due", []droverdriver.Generation{current(leader.Add(-hour), time.Minute, 5)},
			nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &topicStore{gens: tc.gens, topics: map[int64][]droverdriver.GenerationTopic{0: tc.topics}}
			if _, _, err := (&TopicRetainer{Exec: s}).RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.did, tc.want) {
				t.Fatalf("retainer did %v, want %v", s.did, tc.want)
			}
		})
	}
}
