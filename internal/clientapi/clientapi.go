// Package clientapi declares, once, what drover serve and the CLI call of a
// *drover.Client. The Client is generic in its store's transaction type
// (pgx.Tx, *sql.Tx), which the server and the CLI do not know until they
// open a store URL (internal/app/storeurl); they hold it as this interface,
// which every *drover.Client[TTx] implements (clientapi_test.go checks both
// bundled stores), instead of each restating the methods it calls.
package clientapi

import (
	"context"
	"time"

	"github.com/droverhq/drover"
	"github.com/droverhq/drover/drovertype"
)

// Client is a *drover.Client of any transaction type, as the server and the
// CLI use it: inserts and reads for the API, the dashboard and the CLI's
// commands, the figures the sampler and metrics read, queues, routing,
// topics and periodic jobs, the Remote that serves remote workers' calls
// (claim, heartbeat, finish, release, and their parents' results), the
// Store it works (readiness, outages, notifications, the records of bulk
// tasks: nothing around the client reads the driver), and Start and Stop
// for drover serve, which runs the store's maintenance.
type Client interface {
	InsertMany(ctx context.Context, jobs []drover.InsertManyParams) ([]int64, error)
	InsertBatch(ctx context.Context, jobs []drover.InsertManyParams, opts *drover.BatchOpts) (*drover.InsertedBatch, error)
	InsertWorkflow(ctx context.Context, w *drover.Workflow) ([]int64, error)
	BatchGet(ctx context.Context, id int64) (*drovertype.Batch, error)
	JobGet(ctx context.Context, id int64) (*drovertype.JobRow, error)
	JobList(ctx context.Context, p drover.JobListParams) ([]*drovertype.JobRow, error)
	JobSearch(ctx context.Context, p drover.JobListParams) (*drover.JobPage, error)
	JobCount(ctx context.Context, p drover.JobListParams) (drover.JobCount, error)
	JobStateCounts(ctx context.Context, p drover.JobListParams) (map[drovertype.JobState]drover.JobCount, error)
	JobDependants(ctx context.Context, id int64) ([]drovertype.JobResult, error)
	WorkflowGraph(ctx context.Context, id int64) (*drover.WorkflowGraph, error)
	BatchList(ctx context.Context, before int64, limit int) ([]*drovertype.Batch, error)
	BatchResultsAfter(ctx context.Context, batchID, after int64, limit int) ([]drovertype.JobResult, error)
	JobResult(ctx context.Context, id int64) (*drovertype.JobResult, error)
	JobParentResults(ctx context.Context, id int64) ([]drovertype.JobResult, error)
	JobCancel(ctx context.Context, id int64) (*drovertype.JobRow, error)
	JobRetry(ctx context.Context, id int64) (*drovertype.JobRow, error)
	JobDiscard(ctx context.Context, id int64) (*drovertype.JobRow, error)
	JobBulk(ctx context.Context, action drover.BulkAction, filter drover.JobListParams, progress func(drover.BulkProgress)) (drover.BulkProgress, error)
	JobBulkByID(ctx context.Context, action drover.BulkAction, ids []int64, progress func(drover.BulkProgress)) (drover.BulkProgress, error)
	JobCountByState(ctx context.Context, queue string) (map[drovertype.JobState]int64, error)
	QueueStats(ctx context.Context) ([]drovertype.QueueStats, error)
	FinishedStats(ctx context.Context, since, until time.Time) ([]drovertype.FinishedStats, error)
	Stats() drover.Stats
	QueuePause(ctx context.Context, name string) error
	QueueResume(ctx context.Context, name string) error
	QueuePauseKind(ctx context.Context, queue, kind string) error
	QueueResumeKind(ctx context.Context, queue, kind string) error
	QueueGet(ctx context.Context, name string) (*drovertype.QueueSettings, error)
	QueueKnown(ctx context.Context, name string) (bool, error)
	QueueList(ctx context.Context) ([]*drovertype.QueueSettings, error)
	QueueSetLimits(ctx context.Context, name string, l drover.QueueLimits) (*drovertype.QueueSettings, error)
	QueueHeadOf(ctx context.Context, name string) (*drovertype.QueueHead, error)
	StatsHistory(ctx context.Context, p drover.StatsHistoryParams) (*drover.StatsHistory, error)
	TopicLagHistory(ctx context.Context, topic string, from, to time.Time, maxPoints int) (*drover.TopicLagHistory, error)
	Remote() *drover.Remote
	Store() *drover.Store
	PeriodicJobs() *drover.PeriodicJobSet
	Workers(ctx context.Context) ([]*drovertype.WorkerInfo, error)
	Unroutable(ctx context.Context) ([]*drover.UnroutableJobs, error)
	QueueSetStrictOrder(ctx context.Context, name string, maxRunning int) (*drovertype.QueueSettings, error)
	CreateTopic(ctx context.Context, name string, opts *drover.TopicOpts) (*drover.Topic, error)
	Topic(ctx context.Context, name string) (*drover.Topic, error)
	DeleteTopic(ctx context.Context, name string) (bool, error)
	Topics(ctx context.Context) ([]*drover.Topic, error)
	Publish(ctx context.Context, topic string, msgs ...drover.Message) ([]int64, error)
	PublishMany(ctx context.Context, msgs []drover.Message) ([]int64, error)
	CreateSubscription(ctx context.Context, topic, name string, opts *drover.SubscriptionOpts) (bool, error)
	DeleteSubscription(ctx context.Context, topic, name string) (bool, error)
	SubscriptionLag(ctx context.Context, topic string) ([]drovertype.SubscriptionLag, error)
	SubscriptionLags(ctx context.Context, topics ...string) ([]drovertype.SubscriptionLag, error)
	TopicPublishers(ctx context.Context) ([]drovertype.OpenPublisher, error)
	Receive(ctx context.Context, p drover.ReceiveParams) ([]*drover.ReceivedBatch, error)
	AckBatches(ctx context.Context, topic, sub string, acks []drover.BatchAck) ([]bool, error)
	ExtendBatches(ctx context.Context, topic, sub string, receipts []string, lease time.Duration) ([]bool, error)
	ReleaseBatches(ctx context.Context, topic, sub string, receipts []string) ([]bool, error)
	SubscriptionLanes(ctx context.Context, topic, sub string) ([]drover.SubscriptionLane, error)
	ReleaseLane(ctx context.Context, topic, sub string, lane int) (bool, error)
	RewindSubscription(ctx context.Context, topic, sub string, opts drover.RewindOpts) (*drover.SubscriptionRewind, error)
	PeekTopic(ctx context.Context, topic string, limit int, cursor string) (*drover.TopicPeek, error)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}
