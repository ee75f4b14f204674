import type { operations } from "./generated/api.js";
import { Transport } from "./http.js";
import {
  deliveryOf,
  messageToJSON,
  specToJSON,
  type Batch,
  type BatchPage,
  type BulkAction,
  type BulkTask,
  type Message,
  type Queue,
  type ReceivedBatch,
  type SubscriptionLag,
  type SubscriptionLane,
  type SubscriptionRewind,
  type Topic,
  type UnroutableJobs,
  type WorkerInfo,
  type WorkflowGraph,
  type InsertOptions,
  type InsertedBatch,
  type Job,
  type JobPage,
  type JobResult,
  type JobSpec,
  type JobState,
  type Metadata,
  type PeriodicJob,
  type PeriodicOptions,
  type ResultPage,
} from "./types.js";

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

/** The query of GET /v1/jobs, typed by the generated OpenAPI document. */
type ListJobsQuery = NonNullable<operations["listJobs"]["parameters"]["query"]>;
type ListJobsAnswer = operations["listJobs"]["responses"][200]["content"]["application/json"];

/** The time filters by their option and the parameter each one sets. */
const timeBounds = [
  ["createdSince", "created_since"],
  ["createdUntil", "created_until"],
  ["scheduledSince", "scheduled_since"],
  ["scheduledUntil", "scheduled_until"],
  ["attemptedSince", "attempted_since"],
  ["attemptedUntil", "attempted_until"],
  ["finishedSince", "finished_since"],
  ["finishedUntil", "finished_until"],
] as const satisfies ReadonlyArray<readonly [keyof JobFilter, keyof ListJobsQuery]>;

/**
 * Writes a search as the query of GET /v1/jobs. Options not given are left
 * out, so that the server's defaults apply; the server checks the rest
 * (args being an object, a range's order) and names the parameter at fault.
 */
function searchQuery(o: ListJobsOptions): ListJobsQuery {
  const q: ListJobsQuery = {
    state: Array.isArray(o.state) ? o.state.join(",") : o.state,
    queue: o.queue,
    kind: o.kind,
    order: o.order,
    after: o.after,
    limit: o.limit,
  };
  if (o.tags !== undefined && o.tags.length > 0) {
    // The parameter is comma-separated, and tags are stored without commas:
    // a tag with one could only be split into two others.
    for (const t of o.tags) {
      if (t === "" || t.includes(",")) throw new TypeError(`tags: ${JSON.stringify(t)} is not a tag (tags are 1-255 characters without commas)`);
    }
    q.tags = o.tags.join(",");
  }
  if (o.args !== undefined) q.args = JSON.stringify(o.args);
  if (o.metadata !== undefined) q.metadata = JSON.stringify(o.metadata);
  for (const [option, param] of timeBounds) {
    const t = o[option];
    if (t === undefined) continue;
    if (!(t instanceof Date) || Number.isNaN(t.getTime())) throw new TypeError(`${option}: want a valid Date, got ${String(t)}`);
    q[param] = t.toISOString();
  }
  if (o.count) q.count = true;
  return q;
}

function positive(id: number, what = "id"): number {
  if (!Number.isSafeInteger(id) || id <= 0) throw new TypeError(`${what} ${id}: want a positive integer`);
  return id;
}

/**
 * A client of one `drover serve`.
 *
 * Inserting needs a token with the `enqueue` scope; cancel, retry, discard
 * and stats need `admin`. Methods throw a {@link DroverError} subclass; the
 * client never retries an insert on its own (a ConnectionError leaves it
 * unknown whether the job was stored; use `uniqueKey` to make a retry safe).
 */
export class Client {
  readonly #t: Transport;

  constructor(url: string, token: string, options: ClientOptions = {}) {
    this.#t = new Transport(url, token, options.timeoutMs ?? 30_000);
  }

  /** Inserts one job and returns its id (0 when `uniqueKey` skipped it as a duplicate). */
  async insert<A = unknown>(kind: string, args?: A, options: InsertOptions = {}): Promise<number> {
    const ids = await this.insertMany([{ ...options, kind, args }]);
    return ids[0] ?? 0;
  }

  /** Inserts jobs in one request, all or none; returns their ids in order (0 for a skipped duplicate). */
  async insertMany(jobs: JobSpec[]): Promise<number[]> {
    const out = await this.#t.request<{ ids: number[] }>("POST", "/v1/jobs", { jobs: jobs.map(specToJSON) });
    return out.ids;
  }

  /** Inserts jobs as one batch, all or none, with an optional callback job run once every member ended. */
  async insertBatch(jobs: JobSpec[], callback?: JobSpec): Promise<InsertedBatch> {
    const body: Record<string, unknown> = { jobs: jobs.map(specToJSON) };
    if (callback) body["callback"] = specToJSON(callback);
    const out = await this.#t.request<{ id: number; ids: number[]; callback_job_id?: number | null }>(
      "POST",
      "/v1/batches",
      body,
    );
    return { id: out.id, jobIds: out.ids, callbackJobId: out.callback_job_id || null };
  }

  /**
   * Inserts a workflow's steps in one request, all or none, and returns the
   * job id of every step by name. Each step waits, as pending, until the
   * steps it comes after (and the stored jobs of its `dependsOn`) have
   * completed; the server stores them through the same path as Go's
   * `Client.InsertWorkflow`.
   */
  async insertWorkflow(workflow: Workflow): Promise<Record<string, number>> {
    const steps = workflow.steps.map((s) => {
      const body: Record<string, unknown> = { ...specToJSON(s.spec), ref: s.name };
      if (s.after.length > 0) body["after"] = s.after;
      if (s.releaseOnParentFailure) body["release_on_parent_failure"] = true;
      return body;
    });
    const out = await this.#t.request<{ ids: number[]; refs: Record<string, number> }>("POST", "/v1/workflows", { steps });
    return out.refs;
  }

  /** One job, waiting, running or finished, with its last errors. */
  async getJob<A = unknown>(id: number): Promise<Job<A>> {
    return this.#t.request<Job<A>>("GET", `/v1/jobs/${positive(id)}`);
  }

  /**
   * Searches jobs: one keyset page of those that match every filter given,
   * oldest first (`order: "desc"`: newest first), with their count when
   * `count` is true. Pass the page's `nextAfter` as `after` for the next
   * page; a page may come back short, even empty, with a `nextAfter` (the
   * server bounds the jobs one page examines), so page on until it is null,
   * or iterate {@link Client.jobs}.
   */
  async listJobs(options: ListJobsOptions = {}): Promise<JobPage> {
    const out = await this.#t.request<ListJobsAnswer>("GET", "/v1/jobs", undefined, { query: searchQuery(options) });
    const page: JobPage = { jobs: out.jobs, nextAfter: out.next_after ?? null };
    if (out.count) page.count = { value: out.count.value, exact: out.count.exact };
    return page;
  }

  /**
   * Every job of the search in its order, a page of `limit` (default 500)
   * at a time, following `nextAfter` over short and empty pages:
   * `for await (const job of client.jobs({ queue, tags: ["vip"] }))`.
   */
  async *jobs(options: Omit<ListJobsOptions, "after" | "count"> = {}): AsyncGenerator<Job, void, undefined> {
    let after: number | undefined;
    for (;;) {
      const page = await this.listJobs({ limit: 500, ...options, after });
      yield* page.jobs;
      if (page.nextAfter === null) return;
      after = page.nextAfter;
    }
  }

  /** A job's state and result (null unless it completed with one). */
  async jobResult<R = unknown>(id: number): Promise<JobResult<R>> {
    return this.#t.request<JobResult<R>>("GET", `/v1/jobs/${positive(id)}/result`);
  }

  async getBatch(id: number): Promise<Batch> {
    return this.#t.request<Batch>("GET", `/v1/batches/${positive(id)}`);
  }

  /** One page of a batch's ended members with their results. */
  async batchResults(id: number, options: { after?: number; limit?: number } = {}): Promise<ResultPage> {
    const out = await this.#t.request<{ results: JobResult[]; next_after?: number | null }>(
      "GET",
      `/v1/batches/${positive(id)}/results`,
      undefined,
      { query: { after: options.after, limit: options.limit } },
    );
    return { results: out.results, nextAfter: out.next_after || null };
  }

  /** Every ended member of a batch with its result. */
  async *batchResultsAll(id: number): AsyncGenerator<JobResult, void, undefined> {
    let after: number | undefined;
    for (;;) {
      const page = await this.batchResults(id, { after, limit: 500 });
      yield* page.results;
      if (page.nextAfter === null) return;
      after = page.nextAfter;
    }
  }

  /** Jobs by state (admin scope). */
  async stats(queue?: string): Promise<Record<string, number>> {
    const out = await this.#t.request<{ counts: Record<string, number> }>("GET", "/v1/stats", undefined, {
      query: { queue },
    });
    return out.counts;
  }

  /** Cancels a waiting job, or asks the worker running it to stop (its handler's signal aborts). */
  async cancel(id: number): Promise<Job> {
    return this.#t.request<Job>("POST", `/v1/jobs/${positive(id)}/cancel`);
  }

  /** Makes a finished or waiting job available now (409 when it cannot be retried). */
  async retry(id: number): Promise<Job> {
    return this.#t.request<Job>("POST", `/v1/jobs/${positive(id)}/retry`);
  }

  async discard(id: number): Promise<Job> {
    return this.#t.request<Job>("POST", `/v1/jobs/${positive(id)}/discard`);
  }

  /** The workflow a job belongs to: its jobs with their states and results (the job asked about first) and the edges between them. */
  async workflowGraph(id: number): Promise<WorkflowGraph> {
    return this.#t.request<WorkflowGraph>("GET", `/v1/jobs/${positive(id)}/workflow`);
  }

  /** One page of batches, newest first (`limit` at most 1,000, default 50); pass `nextBefore` as `before` for the next. */
  async listBatches(options: { before?: number; limit?: number } = {}): Promise<BatchPage> {
    const out = await this.#t.request<{ batches: Batch[]; next_before: number | null }>("GET", "/v1/batches", undefined, {
      query: { before: options.before, limit: options.limit },
    });
    return { batches: out.batches, nextBefore: out.next_before ?? null };
  }

  // Acting on many jobs (admin scope): the server runs a bulk action in the
  // background, a page at a time; its task reports the progress.

  /**
   * Starts `action` on every job of the filter (each of state, queue and
   * kind when given; none: every job) and returns its task; follow it with
   * getBulk or waitBulk.
   */
  async bulk(action: BulkAction, filter: { state?: string; queue?: string; kind?: string } = {}): Promise<BulkTask> {
    const body: Record<string, unknown> = { action };
    for (const k of ["state", "queue", "kind"] as const) if (filter[k]) body[k] = filter[k];
    return this.#t.request<BulkTask>("POST", "/v1/bulk", body);
  }

  /** Starts `action` on the jobs `ids` names (at most 10,000; unknown ids are read and not changed). */
  async bulkByIds(action: BulkAction, ids: number[]): Promise<BulkTask> {
    return this.#t.request<BulkTask>("POST", "/v1/bulk-selection", { action, ids });
  }

  /** A bulk task's progress (the server keeps the last 50 since it started). */
  async getBulk(id: number): Promise<BulkTask> {
    return this.#t.request<BulkTask>("GET", `/v1/bulk/${positive(id)}`);
  }

  /** Reads a bulk task every `pollMs` until it is no longer running and returns it; rejects after `timeoutMs`. */
  async waitBulk(id: number, options: { pollMs?: number; timeoutMs?: number } = {}): Promise<BulkTask> {
    const poll = options.pollMs ?? 200;
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    for (;;) {
      const task = await this.getBulk(id);
      if (task.status !== "running") return task;
      if (Date.now() >= deadline) throw new Error(`bulk task ${id}: still running after ${options.timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, poll));
    }
  }

  // Queues (admin scope): settings every claim applies, fleet-wide.

  /** Every queue with stored settings or waiting or running jobs, with its settings. */
  async listQueues(): Promise<Queue[]> {
    return (await this.#t.request<{ queues: Queue[] }>("GET", "/v1/queues")).queues;
  }

  /**
   * One queue's settings (a queue without any is unpaused and unlimited). A
   * queue the store does not know (no jobs, no stored settings, no worker) is
   * a NotFoundError, here and in the calls that change settings, so that a
   * typo changes nothing.
   */
  async getQueue(name: string): Promise<Queue> {
    return this.#t.request<Queue>("GET", queuePath(name));
  }

  /**
   * Pauses a queue across the fleet, or with `kind` that kind within it: no
   * worker starts its jobs until resumed (running jobs finish, inserts still
   * succeed). Every process sees it within a second.
   */
  async pauseQueue(name: string, options: { kind?: string } = {}): Promise<Queue> {
    return this.#t.request<Queue>("POST", queuePath(name, "pause"), undefined, { query: { kind: options.kind } });
  }

  /** Resumes a paused queue, or with `kind` a kind paused within it. */
  async resumeQueue(name: string, options: { kind?: string } = {}): Promise<Queue> {
    return this.#t.request<Queue>("POST", queuePath(name, "resume"), undefined, { query: { kind: options.kind } });
  }

  /**
   * Puts a queue in strict order: its jobs start strictly in priority then
   * insert order across the fleet, at most `maxRunning` at once, a failed job
   * keeping its place at the head; 0 takes it out.
   */
  async setStrictOrder(name: string, maxRunning = 1): Promise<Queue> {
    return this.#t.request<Queue>("POST", queuePath(name, "strict"), { max_running: maxRunning });
  }

  /** The worker registry: every Go client and HTTP worker that registered, with its type, labels, queues and liveness. */
  async listWorkers(): Promise<WorkerInfo[]> {
    return (await this.#t.request<{ workers: WorkerInfo[] }>("GET", "/v1/workers")).workers;
  }

  /** The waiting routed jobs no live worker can take, grouped by queue and routing. */
  async listUnroutable(): Promise<UnroutableJobs[]> {
    return (await this.#t.request<{ unroutable: UnroutableJobs[] }>("GET", "/v1/unroutable")).unroutable;
  }

  // Periodic (cron) jobs: reads need enqueue or admin, changes admin.

  /** Every periodic job, stored or Go-configured, by name, with its next and last run. */
  async listPeriodic(): Promise<PeriodicJob[]> {
    const out = await this.#t.request<{ periodic_jobs: PeriodicJob[] }>("GET", "/v1/periodic");
    return out.periodic_jobs;
  }

  async getPeriodic(name: string): Promise<PeriodicJob> {
    return this.#t.request<PeriodicJob>("GET", periodicPath(name));
  }

  /**
   * Stores a periodic job: at each tick of `schedule` (a cron expression
   * such as "0 6 * * *", or "@every 1h") the server's leader inserts a
   * job of `kind` with `args`. Throws ConflictError when the name is taken.
   */
  async createPeriodic<A = unknown>(
    name: string,
    schedule: string,
    kind: string,
    args?: A,
    options: PeriodicOptions = {},
  ): Promise<PeriodicJob> {
    return this.#t.request<PeriodicJob>("POST", "/v1/periodic", { name, ...periodicBody(schedule, kind, args, options) });
  }

  /** Replaces a stored periodic job's schedule, job and options, keeping whether it is paused (409 for a Go-configured one). */
  async updatePeriodic<A = unknown>(
    name: string,
    schedule: string,
    kind: string,
    args?: A,
    options: PeriodicOptions = {},
  ): Promise<PeriodicJob> {
    return this.#t.request<PeriodicJob>("PUT", periodicPath(name), periodicBody(schedule, kind, args, options));
  }

  async deletePeriodic(name: string): Promise<void> {
    await this.#t.request<void>("DELETE", periodicPath(name));
  }

  /** Stops a periodic job from inserting jobs until resumed. */
  async pausePeriodic(name: string): Promise<PeriodicJob> {
    return this.#t.request<PeriodicJob>("POST", periodicPath(name) + "/pause");
  }

  /** Lets a paused periodic job insert again from its next tick. */
  async resumePeriodic(name: string): Promise<PeriodicJob> {
    return this.#t.request<PeriodicJob>("POST", periodicPath(name) + "/resume");
  }

  /** Inserts one job of a periodic job now, outside its schedule, and returns it. */
  async triggerPeriodic(name: string): Promise<Job> {
    return this.#t.request<Job>("POST", periodicPath(name) + "/trigger");
  }

  // Topics: publishing needs enqueue, creating and deleting admin. A token
  // restricted to queues may use a topic when it may use its retry queue,
  // "topic:<topic>".

  /**
   * Stores a topic, or returns the stored one of that name when its options
   * are the same (ConflictError when they are not). `lanes` (default
   * 16, fixed at creation) bounds how many batches of one subscription run at
   * once and how many keys in parallel; `retentionMs` is how long a message
   * is kept for subscriptions that have not read it (default 7 days; -1:
   * until every subscription has passed it).
   */
  async createTopic(name: string, options: { lanes?: number; retentionMs?: number } = {}): Promise<Topic> {
    const body: Record<string, unknown> = { name };
    if (options.lanes !== undefined) body["lanes"] = options.lanes;
    if (options.retentionMs !== undefined) body["retention_ms"] = options.retentionMs;
    return this.#t.request<Topic>("POST", "/v1/topics", body);
  }

  /** A topic with its options and subscriptions (NotFoundError when there is none of that name). */
  async getTopic(name: string): Promise<Topic> {
    return this.#t.request<Topic>("GET", topicPath(name));
  }

  /**
   * Deletes a topic with its subscriptions, their positions and every message
   * of the topic, at once (admin scope); the jobs of its retry queue stay.
   * NotFoundError when there is none.
   */
  async deleteTopic(name: string): Promise<void> {
    await this.#t.request<unknown>("DELETE", topicPath(name));
  }

  /** Every topic the token may use, with its subscriptions. */
  async listTopics(): Promise<Topic[]> {
    return (await this.#t.request<{ topics: Topic[] }>("GET", "/v1/topics")).topics;
  }

  /**
   * Publishes messages to a topic in one request, all or none, and returns
   * their ids in order. Every subscription receives each; messages of one key
   * in publish order.
   */
  async publish(topic: string, messages: Message[]): Promise<number[]> {
    const body = { messages: messages.map((m, i) => messageToJSON(m, i, false)) };
    return (await this.#t.request<{ ids: number[] }>("POST", topicPath(topic, "/publish"), body)).ids;
  }

  /** Publishes messages of several topics, each naming its own (`topic`), in one request, all or none. */
  async publishMany(messages: Message[]): Promise<number[]> {
    const body = { messages: messages.map((m, i) => messageToJSON(m, i, true)) };
    return (await this.#t.request<{ ids: number[] }>("POST", "/v1/messages", body)).ids;
  }

  /**
   * Stores a subscription of a topic; resolves whether it was created (false:
   * it existed). It receives the messages published from now on, or with
   * `fromEarliest` every message the topic keeps; a failed message is
   * delivered at most `maxAttempts` times (default 10, at least 2), its first
   * delivery included, then it is dead (a discarded job of the retry queue).
   */
  async createSubscription(topic: string, name: string, options: { fromEarliest?: boolean; maxAttempts?: number } = {}): Promise<boolean> {
    const body: Record<string, unknown> = { name };
    if (options.fromEarliest) body["from_earliest"] = true;
    if (options.maxAttempts !== undefined) body["max_attempts"] = options.maxAttempts;
    return (await this.#t.request<{ created: boolean }>("POST", topicPath(topic, "/subscriptions"), body)).created;
  }

  /** Removes a subscription and its position (NotFoundError when there is none of that name). */
  async deleteSubscription(topic: string, name: string): Promise<void> {
    await this.#t.request<unknown>("DELETE", subscriptionPath(topic, name));
  }

  /** Per subscription of a topic: the messages it has not acknowledged, the oldest's publish time, and how many retention dropped. */
  async subscriptionLag(topic: string): Promise<SubscriptionLag[]> {
    return (await this.#t.request<{ subscriptions: SubscriptionLag[] }>("GET", topicPath(topic, "/lag"))).subscriptions;
  }

  // Consuming by hand (work scope). Consumer does all of this for handlers:
  // receives, extends leases while they run, acks in batches.

  /**
   * Leases up to `maxBatches` lanes of a subscription that have messages and
   * returns a batch of each (at most `batchSize` messages, in order), waiting
   * up to `waitMs` for a publish when none is waiting. Acknowledge each batch
   * with ack before `leaseMs` passes, or it is delivered again.
   */
  async receive(
    topic: string,
    subscription: string,
    options: { worker: string; maxBatches?: number; batchSize?: number; leaseMs?: number; waitMs?: number; signal?: AbortSignal },
  ): Promise<ReceivedBatch[]> {
    const body: Record<string, unknown> = {
      worker: options.worker,
      max_batches: options.maxBatches ?? 1,
      batch_size: options.batchSize ?? 100,
      wait_ms: options.waitMs ?? 0,
    };
    if (options.leaseMs !== undefined) body["lease_ms"] = options.leaseMs;
    const out = await this.#t.request<ReceiveAnswer>("POST", subscriptionPath(topic, subscription, "receive"), body, {
      timeoutMs: this.#t.timeoutMs + (options.waitMs ?? 0),
      signal: options.signal,
    });
    return (out.batches ?? []).map((b) => ({
      receipt: b.receipt,
      dropped: b.dropped,
      messages: b.messages.map((m) => deliveryOf(m, topic, subscription)),
    }));
  }

  /**
   * Acknowledges received batches: `failed` maps the ids of messages of the
   * batch that failed to their errors (they become retry jobs). Resolves, per
   * receipt, whether it was accepted: false when its lease had ended (the
   * batch is delivered again, its failures not retried).
   */
  async ack(topic: string, subscription: string, acks: Array<{ receipt: string; failed?: Record<number, string> }>): Promise<boolean[]> {
    const body = { acks: acks.map((a) => (a.failed && Object.keys(a.failed).length > 0 ? { receipt: a.receipt, failed: a.failed } : { receipt: a.receipt })) };
    return (await this.#t.request<{ accepted: boolean[] }>("POST", subscriptionPath(topic, subscription, "ack"), body)).accepted;
  }

  /** Fails every message of the batches `receipts` names with `error` (they become retry jobs). */
  async nack(topic: string, subscription: string, receipts: string[], error = "nacked"): Promise<boolean[]> {
    return (await this.#t.request<{ accepted: boolean[] }>("POST", subscriptionPath(topic, subscription, "nack"), { receipts, error })).accepted;
  }

  /**
   * Renews the leases of received batches for `leaseMs` from now (at most
   * 300000; default the server's receive default). Resolves, per receipt,
   * whether it was renewed: false when the batch's lease was lost (another
   * consumer may have the lane now: stop handling it). A receipt goes back to
   * the server exactly as receive gave it.
   */
  async extendBatches(topic: string, subscription: string, receipts: string[], options: { leaseMs?: number } = {}): Promise<boolean[]> {
    const body: Record<string, unknown> = { receipts };
    if (options.leaseMs !== undefined) body["lease_ms"] = options.leaseMs;
    return (await this.#t.request<{ extended: boolean[] }>("POST", subscriptionPath(topic, subscription, "extend"), body)).extended;
  }

  /**
   * Hands received batches back unhandled, to be delivered again at once (a
   * consumer shutting down); their deliveries do not count as attempts.
   * Resolves, per receipt, whether it was released (false: its lease had
   * ended already).
   */
  async releaseBatches(topic: string, subscription: string, receipts: string[]): Promise<boolean[]> {
    return (await this.#t.request<{ released: boolean[] }>("POST", subscriptionPath(topic, subscription, "release"), { receipts })).released;
  }

  /** Each lane of a subscription: its position, its lag, and the consumer holding it with its lease's end when one does. */
  async subscriptionLanes(topic: string, subscription: string): Promise<SubscriptionLane[]> {
    return (await this.#t.request<{ lanes: SubscriptionLane[] }>("GET", subscriptionPath(topic, subscription, "lanes"))).lanes;
  }

  /**
   * Frees a lane whose holder hangs (admin scope): its batch is delivered
   * again to the next receive, and that delivery counts as an attempt; the
   * holder's extend, ack and release of it are refused. Resolves false when
   * the lane was free already.
   */
  async releaseLane(topic: string, subscription: string, lane: number): Promise<boolean> {
    const path = subscriptionPath(topic, subscription, `lanes/${encodeURIComponent(String(lane))}/release`);
    return (await this.#t.request<{ released: boolean }>("POST", path)).released;
  }

  /**
   * Moves a subscription back (admin scope), as a Kafka offset reset or a
   * Pub/Sub seek does: with `{ earliest: true }` every message the topic
   * keeps is delivered again, with `{ since }` (not in the future) each lane
   * delivers again from its first message published at or after it. Give
   * exactly one. Batches out are delivered again and their acks refused;
   * messages retention removed cannot come back (`oldest_pending` says where
   * the subscription starts).
   */
  async rewindSubscription(topic: string, subscription: string, to: { since: Date } | { earliest: true }): Promise<SubscriptionRewind> {
    const since = "since" in to ? to.since : undefined;
    const earliest = "earliest" in to && to.earliest === true;
    if (earliest === (since !== undefined)) throw new TypeError("rewindSubscription: give one of since and earliest");
    const body = since !== undefined ? { since: since.toISOString() } : { earliest: true };
    return this.#t.request<SubscriptionRewind>("POST", subscriptionPath(topic, subscription, "rewind"), body);
  }
}

type ReceiveAnswer = operations["receive"]["responses"][200]["content"]["application/json"];

function queuePath(name: string, action = ""): string {
  return "/v1/queues/" + encodeURIComponent(name) + (action ? `/${action}` : "");
}

export function topicPath(topic: string, rest = ""): string {
  return "/v1/topics/" + encodeURIComponent(topic) + rest;
}

export function subscriptionPath(topic: string, name: string, action = ""): string {
  return topicPath(topic, "/subscriptions/" + encodeURIComponent(name) + (action ? `/${action}` : ""));
}

function periodicPath(name: string): string {
  return "/v1/periodic/" + encodeURIComponent(name);
}

function periodicBody(schedule: string, kind: string, args: unknown, o: PeriodicOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { schedule, kind, args: args ?? {} };
  if (o.queue) body["queue"] = o.queue;
  if (o.priority) body["priority"] = o.priority;
  if (o.maxAttempts) body["max_attempts"] = o.maxAttempts;
  if (o.tags && o.tags.length > 0) body["tags"] = o.tags;
  return body;
}

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
export class Workflow {
  readonly steps: Step[] = [];

  add(name: string, spec: JobSpec, after: ReadonlyArray<string | Step> = [], options: { releaseOnParentFailure?: boolean } = {}): Step {
    if (this.steps.some((s) => s.name === name)) throw new Error(`workflow: step name ${JSON.stringify(name)} is used twice`);
    const names = after.map((a) => (typeof a === "string" ? a : a.name));
    for (const n of names) {
      if (!this.steps.some((s) => s.name === n)) throw new Error(`workflow: step ${JSON.stringify(name)} comes after unknown step ${JSON.stringify(n)}`);
    }
    const step: Step = { name, spec, after: names, releaseOnParentFailure: options.releaseOnParentFailure ?? false };
    this.steps.push(step);
    return step;
  }
}
