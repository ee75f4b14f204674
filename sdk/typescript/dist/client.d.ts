import { type Batch, type BatchPage, type BulkAction, type BulkTask, type Message, type Queue, type ReceivedBatch, type SubscriptionLag, type SubscriptionLane, type SubscriptionRewind, type Topic, type UnroutableJobs, type WorkerInfo, type WorkflowGraph, type InsertOptions, type InsertedBatch, type Job, type JobPage, type JobResult, type JobSpec, type JobState, type Metadata, type PeriodicJob, type PeriodicOptions, type ResultPage } from "./types.js";
export interface ClientOptions {
    /** Milliseconds before a request is abandoned; default 30 s. */
    timeoutMs?: number;
}
/**
 * The filter of a job search: a job matches when every option given holds.
 * Each `…Since`/`…Until` pair bounds a time of the job, `[since, until)`:
 * created, scheduled (`run_at`), last attempted and finished; a bound on a
 * time the job has not set (never attempted, not finished) excludes it.
 */
export interface JobFilter {
    /** One state, or any of several. */
    state?: JobState | JobState[];
    queue?: string;
    kind?: string;
    /** Jobs that carry every one of these tags. */
    tags?: string[];
    /**
     * A JSON object the job's args must contain, as PostgreSQL's `jsonb @>`
     * defines it on both stores: the keys given with those values, others
     * allowed; nested objects alike; an array matches an array holding at
     * least its elements; numbers by value.
     */
    args?: Record<string, unknown>;
    /** A JSON object the job's metadata must contain, as for `args`. */
    metadata?: Metadata;
    createdSince?: Date;
    createdUntil?: Date;
    scheduledSince?: Date;
    scheduledUntil?: Date;
    attemptedSince?: Date;
    attemptedUntil?: Date;
    finishedSince?: Date;
    finishedUntil?: Date;
    /** "asc" (the default): oldest (lowest id) first; "desc": newest first. */
    order?: "asc" | "desc";
}
export interface ListJobsOptions extends JobFilter {
    /** Also answer how many jobs match the filter (JobPage.count). */
    count?: boolean;
    /** The cursor: the `nextAfter` of the previous page, in the same order. */
    after?: number;
    /** At most 1,000; default 100. */
    limit?: number;
}
/**
 * A client of one `drover serve`.
 *
 * Inserting needs a token with the `enqueue` scope; cancel, retry, discard
 * and stats need `admin`. Methods throw a {@link DroverError} subclass; the
 * client never retries an insert on its own (a ConnectionError leaves it
 * unknown whether the job was stored; use `uniqueKey` to make a retry safe).
 */
export declare class Client {
    #private;
    constructor(url: string, token: string, options?: ClientOptions);
    /** Inserts one job and returns its id (0 when `uniqueKey` skipped it as a duplicate). */
    insert<A = unknown>(kind: string, args?: A, options?: InsertOptions): Promise<number>;
    /** Inserts jobs in one request, all or none; returns their ids in order (0 for a skipped duplicate). */
    insertMany(jobs: JobSpec[]): Promise<number[]>;
    /** Inserts jobs as one batch, all or none, with an optional callback job run once every member ended. */
    insertBatch(jobs: JobSpec[], callback?: JobSpec): Promise<InsertedBatch>;
    /**
     * Inserts a workflow's steps in one request, all or none, and returns the
     * job id of every step by name. Each step waits, as pending, until the
     * steps it comes after (and the stored jobs of its `dependsOn`) have
     * completed; the server stores them through the same path as Go's
     * `Client.InsertWorkflow`.
     */
    insertWorkflow(workflow: Workflow): Promise<Record<string, number>>;
    /** One job, waiting, running or finished, with its last errors. */
    getJob<A = unknown>(id: number): Promise<Job<A>>;
    /**
     * Searches jobs: one keyset page of those that match every filter given,
     * oldest first (`order: "desc"`: newest first), with their count when
     * `count` is true. Pass the page's `nextAfter` as `after` for the next
     * page; a page may come back short, even empty, with a `nextAfter` (the
     * server bounds the jobs one page examines), so page on until it is null,
     * or iterate {@link Client.jobs}.
     */
    listJobs(options?: ListJobsOptions): Promise<JobPage>;
    /**
     * Every job of the search in its order, a page of `limit` (default 500)
     * at a time, following `nextAfter` over short and empty pages:
     * `for await (const job of client.jobs({ queue, tags: ["vip"] }))`.
     */
    jobs(options?: Omit<ListJobsOptions, "after" | "count">): AsyncGenerator<Job, void, undefined>;
    /** A job's state and result (null unless it completed with one). */
    jobResult<R = unknown>(id: number): Promise<JobResult<R>>;
    getBatch(id: number): Promise<Batch>;
    /** One page of a batch's ended members with their results. */
    batchResults(id: number, options?: {
        after?: number;
        limit?: number;
    }): Promise<ResultPage>;
    /** Every ended member of a batch with its result. */
    batchResultsAll(id: number): AsyncGenerator<JobResult, void, undefined>;
    /** Jobs by state (admin scope). */
    stats(queue?: string): Promise<Record<string, number>>;
    /** Cancels a waiting job, or asks the worker running it to stop (its handler's signal aborts). */
    cancel(id: number): Promise<Job>;
    /** Makes a finished or waiting job available now (409 when it cannot be retried). */
    retry(id: number): Promise<Job>;
    discard(id: number): Promise<Job>;
    /** The workflow a job belongs to: its jobs with their states and results (the job asked about first) and the edges between them. */
    workflowGraph(id: number): Promise<WorkflowGraph>;
    /** One page of batches, newest first (`limit` at most 1,000, default 50); pass `nextBefore` as `before` for the next. */
    listBatches(options?: {
        before?: number;
        limit?: number;
    }): Promise<BatchPage>;
    /**
     * Starts `action` on every job of the filter (each of state, queue and
     * kind when given; none: every job) and returns its task; follow it with
     * getBulk or waitBulk.
     */
    bulk(action: BulkAction, filter?: {
        state?: string;
        queue?: string;
        kind?: string;
    }): Promise<BulkTask>;
    /** Starts `action` on the jobs `ids` names (at most 10,000; unknown ids are read and not changed). */
    bulkByIds(action: BulkAction, ids: number[]): Promise<BulkTask>;
    /** A bulk task's progress (the server keeps the last 50 since it started). */
    getBulk(id: number): Promise<BulkTask>;
    /** Reads a bulk task every `pollMs` until it is no longer running and returns it; rejects after `timeoutMs`. */
    waitBulk(id: number, options?: {
        pollMs?: number;
        timeoutMs?: number;
    }): Promise<BulkTask>;
    /** Every queue with stored settings or waiting or running jobs, with its settings. */
    listQueues(): Promise<Queue[]>;
    /**
     * One queue's settings (a queue without any is unpaused and unlimited). A
     * queue the store does not know (no jobs, no stored settings, no worker) is
     * a NotFoundError, here and in the calls that change settings, so that a
     * typo changes nothing.
     */
    getQueue(name: string): Promise<Queue>;
    /**
     * Pauses a queue across the fleet, or with `kind` that kind within it: no
     * worker starts its jobs until resumed (running jobs finish, inserts still
     * succeed). Every process sees it within a second.
     */
    pauseQueue(name: string, options?: {
        kind?: string;
    }): Promise<Queue>;
    /** Resumes a paused queue, or with `kind` a kind paused within it. */
    resumeQueue(name: string, options?: {
        kind?: string;
    }): Promise<Queue>;
    /**
     * Puts a queue in strict order: its jobs start strictly in priority then
     * insert order across the fleet, at most `maxRunning` at once, a failed job
     * keeping its place at the head; 0 takes it out.
     */
    setStrictOrder(name: string, maxRunning?: number): Promise<Queue>;
    /** The worker registry: every Go client and HTTP worker that registered, with its type, labels, queues and liveness. */
    listWorkers(): Promise<WorkerInfo[]>;
    /** The waiting routed jobs no live worker can take, grouped by queue and routing. */
    listUnroutable(): Promise<UnroutableJobs[]>;
    /** Every periodic job, stored or Go-configured, by name, with its next and last run. */
    listPeriodic(): Promise<PeriodicJob[]>;
    getPeriodic(name: string): Promise<PeriodicJob>;
    /**
     * Stores a periodic job: at each tick of `schedule` (a cron expression
     * such as "0 6 * * *", or "@every 1h") the server's leader inserts a
     * job of `kind` with `args`. Throws ConflictError when the name is taken.
     */
    createPeriodic<A = unknown>(name: string, schedule: string, kind: string, args?: A, options?: PeriodicOptions): Promise<PeriodicJob>;
    /** Replaces a stored periodic job's schedule, job and options, keeping whether it is paused (409 for a Go-configured one). */
    updatePeriodic<A = unknown>(name: string, schedule: string, kind: string, args?: A, options?: PeriodicOptions): Promise<PeriodicJob>;
    deletePeriodic(name: string): Promise<void>;
    /** Stops a periodic job from inserting jobs until resumed. */
    pausePeriodic(name: string): Promise<PeriodicJob>;
    /** Lets a paused periodic job insert again from its next tick. */
    resumePeriodic(name: string): Promise<PeriodicJob>;
    /** Inserts one job of a periodic job now, outside its schedule, and returns it. */
    triggerPeriodic(name: string): Promise<Job>;
    /**
     * Stores a topic, or returns the stored one of that name when its options
     * are the same (ConflictError when they are not). `lanes` (default
     * 16, fixed at creation) bounds how many batches of one subscription run at
     * once and how many keys in parallel; `retentionMs` is how long a message
     * is kept for subscriptions that have not read it (default 7 days; -1:
     * until every subscription has passed it).
     */
    createTopic(name: string, options?: {
        lanes?: number;
        retentionMs?: number;
    }): Promise<Topic>;
    /** A topic with its options and subscriptions (NotFoundError when there is none of that name). */
    getTopic(name: string): Promise<Topic>;
    /**
     * Deletes a topic with its subscriptions, their positions and every message
     * of the topic, at once (admin scope); the jobs of its retry queue stay.
     * NotFoundError when there is none.
     */
    deleteTopic(name: string): Promise<void>;
    /** Every topic the token may use, with its subscriptions. */
    listTopics(): Promise<Topic[]>;
    /**
     * Publishes messages to a topic in one request, all or none, and returns
     * their ids in order. Every subscription receives each; messages of one key
     * in publish order.
     */
    publish(topic: string, messages: Message[]): Promise<number[]>;
    /** Publishes messages of several topics, each naming its own (`topic`), in one request, all or none. */
    publishMany(messages: Message[]): Promise<number[]>;
    /**
     * Stores a subscription of a topic; resolves whether it was created (false:
     * it existed). It receives the messages published from now on, or with
     * `fromEarliest` every message the topic keeps; a failed message is
     * delivered at most `maxAttempts` times (default 10, at least 2), its first
     * delivery included, then it is dead (a discarded job of the retry queue).
     */
    createSubscription(topic: string, name: string, options?: {
        fromEarliest?: boolean;
        maxAttempts?: number;
    }): Promise<boolean>;
    /** Removes a subscription and its position (NotFoundError when there is none of that name). */
    deleteSubscription(topic: string, name: string): Promise<void>;
    /** Per subscription of a topic: the messages it has not acknowledged, the oldest's publish time, and how many retention dropped. */
    subscriptionLag(topic: string): Promise<SubscriptionLag[]>;
    /**
     * Leases up to `maxBatches` lanes of a subscription that have messages and
     * returns a batch of each (at most `batchSize` messages, in order), waiting
     * up to `waitMs` for a publish when none is waiting. Acknowledge each batch
     * with ack before `leaseMs` passes, or it is delivered again.
     */
    receive(topic: string, subscription: string, options: {
        worker: string;
        maxBatches?: number;
        batchSize?: number;
        leaseMs?: number;
        waitMs?: number;
        signal?: AbortSignal;
    }): Promise<ReceivedBatch[]>;
    /**
     * Acknowledges received batches: `failed` maps the ids of messages of the
     * batch that failed to their errors (they become retry jobs). Resolves, per
     * receipt, whether it was accepted: false when its lease had ended (the
     * batch is delivered again, its failures not retried).
     */
    ack(topic: string, subscription: string, acks: Array<{
        receipt: string;
        failed?: Record<number, string>;
    }>): Promise<boolean[]>;
    /** Fails every message of the batches `receipts` names with `error` (they become retry jobs). */
    nack(topic: string, subscription: string, receipts: string[], error?: string): Promise<boolean[]>;
    /**
     * Renews the leases of received batches for `leaseMs` from now (at most
     * 300000; default the server's receive default). Resolves, per receipt,
     * whether it was renewed: false when the batch's lease was lost (another
     * consumer may have the lane now: stop handling it). A receipt goes back to
     * the server exactly as receive gave it.
     */
    extendBatches(topic: string, subscription: string, receipts: string[], options?: {
        leaseMs?: number;
    }): Promise<boolean[]>;
    /**
     * Hands received batches back unhandled, to be delivered again at once (a
     * consumer shutting down); their deliveries do not count as attempts.
     * Resolves, per receipt, whether it was released (false: its lease had
     * ended already).
     */
    releaseBatches(topic: string, subscription: string, receipts: string[]): Promise<boolean[]>;
    /** Each lane of a subscription: its position, its lag, and the consumer holding it with its lease's end when one does. */
    subscriptionLanes(topic: string, subscription: string): Promise<SubscriptionLane[]>;
    /**
     * Frees a lane whose holder hangs (admin scope): its batch is delivered
     * again to the next receive, and that delivery counts as an attempt; the
     * holder's extend, ack and release of it are refused. Resolves false when
     * the lane was free already.
     */
    releaseLane(topic: string, subscription: string, lane: number): Promise<boolean>;
    /**
     * Moves a subscription back (admin scope), as a Kafka offset reset or a
     * Pub/Sub seek does: with `{ earliest: true }` every message the topic
     * keeps is delivered again, with `{ since }` (not in the future) each lane
     * delivers again from its first message published at or after it. Give
     * exactly one. Batches out are delivered again and their acks refused;
     * messages retention removed cannot come back (`oldest_pending` says where
     * the subscription starts).
     */
    rewindSubscription(topic: string, subscription: string, to: {
        since: Date;
    } | {
        earliest: true;
    }): Promise<SubscriptionRewind>;
}
export declare function topicPath(topic: string, rest?: string): string;
export declare function subscriptionPath(topic: string, name: string, action?: string): string;
/** A step of a {@link Workflow}. */
export interface Step {
    readonly name: string;
    readonly spec: JobSpec;
    /** Names of the steps this one runs after. */
    readonly after: readonly string[];
    /** Run the step when a job it waits for is cancelled or discarded, instead of cancelling it too. */
    readonly releaseOnParentFailure?: boolean;
}
/**
 * Jobs with dependencies between them, inserted with
 * {@link Client.insertWorkflow}:
 *
 * ```ts
 * const wf = new Workflow();
 * const fetch = wf.add("fetch", { kind: "fetch", args: { url } });
 * const thumb = wf.add("thumb", { kind: "thumbnail" }, [fetch]);
 * wf.add("notify", { kind: "notify" }, [fetch, thumb]);
 * ```
 *
 * A step runs once every step it comes after has completed.
 */
export declare class Workflow {
    readonly steps: Step[];
    add(name: string, spec: JobSpec, after?: ReadonlyArray<string | Step>, options?: {
        releaseOnParentFailure?: boolean;
    }): Step;
}
