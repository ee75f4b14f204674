import type { components, operations } from "./generated/api.js";

type Schemas = components["schemas"];

/** The state of a job. */
export type JobState = Schemas["Job"]["state"];
/** One recorded attempt error, with its stack trace. */
export type AttemptError = Schemas["AttemptError"];
/** JSON metadata of a job. */
export type Metadata = Record<string, unknown>;

/**
 * A job as the server returns it (generated from the OpenAPI document).
 * `A` types `args`; it is not checked at run time.
 */
export type Job<A = unknown> = Omit<Schemas["Job"], "args" | "metadata"> & {
  args: A;
  metadata?: Metadata;
};

/** A job's state and result (null unless it completed with one). */
export type JobResult<R = unknown> = Omit<Schemas["JobResult"], "result"> & { result: R | null };

/**
 * A job as a claim hands it to a worker: running under the worker's lease,
 * with its `lease_token`, and with the jobs it waited for (`depends_on`, in
 * id order) and their results (`parent_results`, in the same order), which
 * a Go handler reads with `Job.ParentResults`. Both are empty for a job that
 * depends on none.
 */
export type ClaimedJob<A = unknown> = Omit<Schemas["ClaimedJob"], "args" | "metadata" | "depends_on" | "parent_results"> & {
  args: A;
  metadata?: Metadata;
  depends_on: number[];
  parent_results: JobResult[];
};
/** A batch's progress. */
export type Batch = Schemas["Batch"];
/** The outcome of a finished attempt, as sent to /v1/finish. */
export type AttemptResult = Schemas["AttemptResult"];
/**
 * The answer to /v1/finish: the results written (`accepted`), those of
 * attempts the server no longer holds (`rejected`), and those the store
 * refused to hold (`refused`), each recorded as a failed attempt in its
 * place when `recorded`.
 */
export type FinishAnswer = operations["finish"]["responses"][200]["content"]["application/json"];
/** An attempt named in a heartbeat. */
export type AttemptRef = Schemas["AttemptRef"];

/**
 * A periodic (cron) job as the server lists it: stored through the API
 * (`source` "api") or a Go entry of `Config.PeriodicJobs` that its leader
 * registered (`source` "config"). `next_run_at` is null while paused,
 * `last_run_at` before the first run. `A` types `args`.
 */
export type PeriodicJob<A = Record<string, unknown>> = Omit<Schemas["PeriodicJob"], "args"> & { args: A };

/** The options of the jobs a periodic job inserts (the fields of `PeriodicDefinition` besides name, schedule, kind and args). */
export interface PeriodicOptions {
  queue?: string;
  /** Lower runs first. */
  priority?: number;
  /** 0 or absent: the inserting client's default (25). */
  maxAttempts?: number;
  tags?: string[];
}

/** Insert options of a job (the fields of `EnqueueJob` besides kind and args). */
export interface InsertOptions {
  queue?: string;
  /** Lower runs first. */
  priority?: number;
  /** Schedule the job; a Date or an RFC 3339 string. */
  runAt?: Date | string;
  /** 0 or absent: the server's default (25). */
  maxAttempts?: number;
  tags?: string[];
  metadata?: Metadata;
  timeoutMs?: number;
  /** Stored jobs this one waits for. */
  dependsOn?: number[];
  /** Ordering key (see docs/ordering-and-limits.md). */
  key?: string;
  keyLimit?: number;
  keyRate?: number;
  keyRatePeriodMs?: number;
  /** Skip the insert while a job of the kind holds this key (id 0). */
  uniqueKey?: string;
  uniqueStates?: JobState[];
  uniqueByQueue?: boolean;
  /** Run only on workers of this type (see docs/routing.md). */
  workerType?: string;
  /** Run only on one of these workers, by name. */
  workerNames?: string[];
  /** Run only on workers with every one of these labels. */
  workerLabels?: Record<string, string>;
  /** With workerNames: what happens when none of them is seen for workerAbsentAfterMs. */
  onWorkerAbsent?: "wait" | "fallback" | "fail";
  workerAbsentAfterMs?: number;
}

/** A job to insert. */
export interface JobSpec<A = unknown> extends InsertOptions {
  kind: string;
  args?: A;
}

/** The JSON body of one job of an insert. */
export type EnqueueJobJSON = {
  kind: string;
  args: unknown;
  queue?: string;
  priority?: number;
  run_at?: string;
  max_attempts?: number;
  tags?: string[];
  metadata?: Metadata;
  timeout_ms?: number;
  depends_on?: number[];
  key?: string;
  key_limit?: number;
  key_rate?: number;
  key_rate_period_ms?: number;
  unique_key?: string;
  unique_states?: JobState[];
  unique_by_queue?: boolean;
  worker_type?: string;
  worker_names?: string[];
  worker_labels?: Record<string, string>;
  on_worker_absent?: "wait" | "fallback" | "fail";
  worker_absent_after_ms?: number;
};

export function specToJSON(spec: JobSpec): EnqueueJobJSON {
  const out: EnqueueJobJSON = { kind: spec.kind, args: spec.args === undefined ? {} : spec.args };
  if (spec.queue !== undefined) out.queue = spec.queue;
  if (spec.priority !== undefined) out.priority = spec.priority;
  if (spec.runAt !== undefined) out.run_at = spec.runAt instanceof Date ? spec.runAt.toISOString() : spec.runAt;
  if (spec.maxAttempts !== undefined) out.max_attempts = spec.maxAttempts;
  if (spec.tags !== undefined) out.tags = spec.tags;
  if (spec.metadata !== undefined) out.metadata = spec.metadata;
  if (spec.timeoutMs !== undefined) out.timeout_ms = spec.timeoutMs;
  if (spec.dependsOn !== undefined) out.depends_on = spec.dependsOn;
  if (spec.key !== undefined) out.key = spec.key;
  if (spec.keyLimit !== undefined) out.key_limit = spec.keyLimit;
  if (spec.keyRate !== undefined) out.key_rate = spec.keyRate;
  if (spec.keyRatePeriodMs !== undefined) out.key_rate_period_ms = spec.keyRatePeriodMs;
  if (spec.uniqueKey !== undefined) out.unique_key = spec.uniqueKey;
  if (spec.uniqueStates !== undefined) out.unique_states = spec.uniqueStates;
  if (spec.uniqueByQueue !== undefined) out.unique_by_queue = spec.uniqueByQueue;
  if (spec.workerType !== undefined) out.worker_type = spec.workerType;
  if (spec.workerNames !== undefined) out.worker_names = spec.workerNames;
  if (spec.workerLabels !== undefined) out.worker_labels = spec.workerLabels;
  if (spec.onWorkerAbsent !== undefined) out.on_worker_absent = spec.onWorkerAbsent;
  if (spec.workerAbsentAfterMs !== undefined) out.worker_absent_after_ms = spec.workerAbsentAfterMs;
  return out;
}

/**
 * How many jobs match a search: exact (`exact` true) while each jobs table
 * (waiting and running; finished) holds at most 50,000 jobs, otherwise an
 * estimate from samples of the table.
 */
export type JobCount = NonNullable<operations["listJobs"]["responses"][200]["content"]["application/json"]["count"]>;

/**
 * One keyset page of jobs; pass `nextAfter` as `after` for the next, null on
 * the last. A page may hold fewer than `limit` jobs, even none, and still
 * have a `nextAfter` (the server bounds the jobs one page examines): page on
 * until it is null, not until a page comes back short.
 */
export interface JobPage {
  jobs: Job[];
  nextAfter: number | null;
  /** How many jobs match the filter (after and limit aside); set when asked for with `count: true`. */
  count?: JobCount;
}

/** One page of a batch's ended members with their results. */
export interface ResultPage {
  results: JobResult[];
  nextAfter: number | null;
}

/** What insertBatch returns. */
export interface InsertedBatch {
  id: number;
  jobIds: number[];
  callbackJobId: number | null;
}

/** A queue's settings as every claim applies them: paused (whole, or `paused_kinds`), fleet-wide limits, strict order. */
export type Queue = Schemas["Queue"];
/** A worker of the server's registry (a Go client, or an HTTP worker such as this SDK's). */
export type WorkerInfo = Schemas["Worker"];
/** Waiting routed jobs of one queue and routing that no live worker can take. */
export type UnroutableJobs = Schemas["UnroutableJobs"];
/** A bulk action running in the server's background, or done. */
export type BulkTask = Schemas["BulkTask"];
/** What a bulk action does to each job it matches. */
export type BulkAction = BulkTask["action"];
/** The jobs of a job's workflow with their states and results, and the edges between them. */
export type WorkflowGraph = Schemas["WorkflowGraph"];
/** A stored topic with its subscriptions' names. */
export type Topic = Schemas["Topic"];
/** How far a subscription is behind its topic. */
export type SubscriptionLag =
  operations["topicLag"]["responses"][200]["content"]["application/json"]["subscriptions"][number];

/**
 * One lane of a subscription: the id of the last message it acknowledged
 * (`cursor`, 0 when none), the messages past it (`lag`), the consumer holding
 * its lease and when that lease ends (`holder` and `lease_expires_at`, absent
 * when the lane is free), and the deliveries of its next message so far
 * (`attempt`).
 */
export type SubscriptionLane = Schemas["SubscriptionLane"];

/**
 * What a rewind did (Client.rewindSubscription): the lanes it moved back
 * (`lanes`; a lane at or before the point stays), the batches that were out
 * (`released`: their acks are refused and their messages delivered again),
 * the messages the subscription has to deliver now (`pending`) and when the
 * oldest of them was published (`oldest_pending`: later than the time asked
 * for when retention removed the messages between, null when none is
 * pending).
 */
export type SubscriptionRewind = Schemas["SubscriptionRewind"];

/** One page of batches, newest first; pass `nextBefore` as `before` for the next, null on the last. */
export interface BatchPage {
  batches: Batch[];
  nextBefore: number | null;
}

/**
 * A message to publish. `payload` is bytes (a Uint8Array, delivered as is)
 * or any JSON value; `key` keeps the messages of one key in publish order for
 * every subscription; `metadata` is a JSON object. `topic` names the topic
 * for publishMany and is left out for publish.
 */
export interface Message {
  payload?: unknown;
  key?: string;
  metadata?: Metadata;
  topic?: string;
}

/**
 * A message as a subscription's handler receives it. `data` holds the
 * payload's bytes; `payload` its JSON value when the payload is JSON
 * (`isJSON`), else undefined (a JSON payload comes as its compact JSON text
 * in `data`). `attempt` is 1 for the first delivery to this subscription and
 * counts the later ones (retries, and deliveries after a lost lease).
 */
export interface Delivery {
  id: number;
  topic: string;
  subscription: string;
  key: string;
  data: Uint8Array;
  isJSON: boolean;
  payload: unknown;
  metadata: Metadata;
  publishedAt: string;
  attempt: number;
}

/** A batch of one lane of a subscription, in order, with the receipt that acknowledges it before its lease ends. */
export interface ReceivedBatch {
  receipt: string;
  dropped: number;
  messages: Delivery[];
}

/** The wire form of a delivery (receive's `messages[]`). */
type DeliveryJSON = Schemas["Delivery"];

/** One decoder for every payload: making one per message cost more than the decoding. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Whether bytes are a JSON text (the server's rule for sending `payload`), and its value. */
function jsonOf(data: Uint8Array): { ok: boolean; value: unknown } {
  try {
    return { ok: true, value: JSON.parse(utf8.decode(data)) as unknown };
  } catch {
    return { ok: false, value: undefined };
  }
}

/**
 * Reads a delivery of a receive answer, which carries the payload as
 * `payload` when it is JSON and as `payload_base64` otherwise (an older
 * server sent both).
 */
export function deliveryOf(d: DeliveryJSON, topic: string, subscription: string): Delivery {
  const data = d.payload_base64 !== undefined ? Buffer.from(d.payload_base64, "base64") : Buffer.from(JSON.stringify(d.payload ?? null));
  // The server sends payload only for a payload that is JSON text, so one
  // without it is not JSON: decoding its bytes to find out again (a
  // decoder and an exception per message) was most of a delivery's cost.
  const isJSON = "payload" in d;
  return {
    id: d.id,
    topic,
    subscription,
    key: d.key ?? "",
    data,
    isJSON,
    payload: isJSON ? d.payload : undefined,
    metadata: (d.metadata as Metadata | undefined) ?? {},
    publishedAt: d.published_at,
    attempt: d.attempt,
  };
}

/** The args of a retry job (kind `drover.topic`): a failed message as the server stored it, its payload in base64. */
export interface RetryArgs {
  topic: string;
  subscription: string;
  id: number;
  key?: string;
  payload?: string;
  metadata?: Metadata;
  published_at: string;
  /** How often the message was delivered before it failed; absent: once. */
  delivered?: number;
}

/**
 * Reads a retry job's args, in the job's attempt `jobAttempt`, as the
 * delivery it retries: its attempt counts on from the deliveries before the
 * failure, as a Go consumer's does.
 */
export function deliveryOfRetry(a: RetryArgs, jobAttempt: number): Delivery {
  const attempt = jobAttempt + Math.max(a.delivered ?? 1, 1);
  const data = Buffer.from(a.payload ?? "", "base64");
  const parsed = jsonOf(data);
  return {
    id: a.id,
    topic: a.topic,
    subscription: a.subscription,
    key: a.key ?? "",
    data,
    isJSON: parsed.ok,
    payload: parsed.value,
    metadata: a.metadata ?? {},
    publishedAt: a.published_at,
    attempt,
  };
}

/** The JSON of a message to publish. */
export function messageToJSON(m: Message, i: number, withTopic: boolean): Record<string, unknown> {
  if (withTopic && !m.topic) throw new TypeError(`messages[${i}]: topic: required by publishMany (each message names its topic)`);
  if (!withTopic && m.topic !== undefined) throw new TypeError(`messages[${i}]: topic: publish names the topic; leave it unset`);
  const out: Record<string, unknown> = {};
  if (withTopic) out["topic"] = m.topic;
  if (m.key) out["key"] = m.key;
  if (m.payload instanceof Uint8Array) out["payload_base64"] = Buffer.from(m.payload).toString("base64");
  else out["payload"] = m.payload === undefined ? null : m.payload;
  if (m.metadata !== undefined) out["metadata"] = m.metadata;
  return out;
}
