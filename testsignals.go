package drover

import (
	"github.com/droverhq/drover/internal/completer"
	"github.com/droverhq/drover/internal/maintenance"
	"github.com/droverhq/drover/internal/producer"
	"github.com/droverhq/drover/internal/testsignal"
)

// testSignals are the test signals of a client's background services
// (internal/testsignal): the client hands each service it starts its
// part, so a test turns them on once, before Start, and waits on the
// services of every start and every leadership term through them. Off,
// as outside tests, every send is a nil check.
type testSignals struct {
	Completer completer.TestSignals
	// Producer is shared by the producers of every queue.
	Producer producer.TestSignals
	// The leader's loops, each its own.
	Rescuer, Pruner, Promoter, Router, TopicRetainer, History, PublisherWatch maintenance.TestSignals
	// Periodic is the leader's periodic scheduler.
	Periodic schedulerTestSignals
	// Topics is the client's topic consumer.
	Topics consumerTestSignals
}

// Init turns every signal on.
func (s *testSignals) Init() {
	s.Completer.Init()
	s.Producer.Init()
	for _, m := range []*maintenance.TestSignals{&s.Rescuer, &s.Pruner, &s.Promoter, &s.Router, &s.TopicRetainer, &s.History, &s.PublisherWatch} {
		m.Init()
	}
	s.Periodic.Init()
	s.Topics.Init()
}

// schedulerTestSignals are what the periodic scheduler tells a test.
type schedulerTestSignals struct {
	// Inserted is sent after each insert of due periodic jobs (a tick, the
	// catch-up or the start-up runs), inserted or failed, with the number
	// of jobs it held.
	Inserted testsignal.Signal[int]
	// Reloaded is sent after each read of the stored definitions, the
	// first once the Go entries are registered and the start-up inserts
	// done.
	Reloaded testsignal.Signal[struct{}]
}

func (s *schedulerTestSignals) Init() { s.Inserted.Init(); s.Reloaded.Init() }

// consumerTestSignals are what the topic consumer tells a test.
type consumerTestSignals struct {
	// Acked is sent after each ack of finished delivery batches, written
	// or failed, with the number of batches.
	Acked testsignal.Signal[int]
}

func (s *consumerTestSignals) Init() { s.Acked.Init() }
