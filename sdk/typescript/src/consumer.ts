/**
 * The topic consumer: receives batches of subscriptions over the HTTP API,
 * runs their handlers, keeps their leases and acknowledges them
 * (docs/topics.md has the model). Its loops, all on the one event loop:
 *
 * - a receiver per subscription long-polls `receive` for at most as many
 *   batches as the subscription has room for: its free handlers and its
 *   prefetch, batches received ahead that wait for a handler (each batch
 *   is one lane, in order). A receive is under way while handlers run, so
 *   that the next batches are here when they end: the server answers it
 *   as soon as a publish, or an ack of this consumer, makes a lane's next
 *   batch available;
 * - each batch runs its handler once, per message in order or as a whole;
 * - an extender per subscription renews the leases of its batches held
 *   (waiting, running or waiting for their acks) a third of the lease after
 *   each one's lease began, counted from when the receive or the last
 *   renewal that set it was sent, and aborts the handler of a batch whose
 *   lease was lost: another consumer has it now;
 * - an acker per subscription acknowledges its batches that ended since its
 *   last request, in one request, failed messages named in `failed`: the
 *   server makes them jobs of the topic's retry queue;
 * - a Worker on the retry queues (`topic:<topic>`) runs those jobs through
 *   the same handlers, as one-message batches, with the job's retries and
 *   backoff: the subscription's max_attempts bounds the deliveries.
 *
 * Each subscription has its own extender and acker, rather than one loop
 * taking the subscriptions in turn: when the server answers slowly (a
 * loaded machine), a turn through them all took one answer's time per
 * subscription, so the last ones' leases ran out before their renewal or
 * ack was sent (their lanes then deliver one message at a time), and a
 * subscription whose batches kept ending held the one acker while the
 * others' acks waited.
 *
 * A batch is handed to a handler at most once at a time in a process: a
 * batch that repeats messages of one still running here (its lease ran out
 * and this process received the lane again) waits for that one to end. At
 * shutdown the batches not started, and those whose handlers outlast the
 * shutdown timeout, are released: delivered again at once, to another
 * consumer.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { Client, subscriptionPath } from "./client.js";
import { DroverError, NotFoundError, PayloadTooLargeError, ValidationError } from "./errors.js";
import { Transport } from "./http.js";
import { Backoff, Lifecycle, consoleLogger, Signal, truncate, within, type Logger } from "./runtime.js";
import { deliveryOfRetry, type Delivery, type ReceivedBatch, type RetryArgs } from "./types.js";
import { Snooze, Worker, type ClaimedJob, type JobContext } from "./worker.js";

/** The kind of the jobs a topic's failed messages become, in its retry queue. */
const RETRY_KIND = "drover.topic";
/**
 * How long a retry job of a subscription this consumer does not serve waits
 * before it is claimed again: it snoozes rather than fails, so that a
 * consumer of another subscription of the topic never spends its attempts.
 */
const ELSEWHERE_SNOOZE_MS = 1000;
const MAX_PER_REQUEST = 1000;
/** The server's bound on the batches of one receive (the most lanes a topic has). */
const MAX_BATCHES_PER_RECEIVE = 1024;
/** The server's bound on a lease (5 minutes); longer work is extended. */
const MAX_LEASE_MS = 300_000;
/** The longest error text the server keeps for a failed message. */
const MAX_ERROR_BYTES = 1024;

/**
 * Throw from a batch handler to fail some messages of its batch, by
 * Delivery.id, with their errors, and acknowledge the others (Go's
 * `drover.FailedMessages`). Each becomes a job of the topic's retry queue,
 * for this subscription alone.
 */
export class FailedMessages extends Error {
  readonly failed: Map<number, unknown>;
  constructor(failed: Map<number, unknown> | Record<number, unknown>) {
    const m = failed instanceof Map ? failed : new Map(Object.entries(failed).map(([k, v]) => [Number(k), v]));
    super(`${m.size} messages failed`);
    this.name = "FailedMessages";
    this.failed = m;
  }
}

/** Why a subscription handler's signal aborted. */
export type DeliveryCancelReason = "lease_lost" | "shutdown" | "cancel_requested" | "timeout";

/** What a subscription handler knows besides its messages, and how it learns to stop. */
export interface DeliveryContext {
  readonly topic: string;
  readonly subscription: string;
  readonly consumerId: string;
  /**
   * Aborts when the handler should stop: the batch's lease was lost
   * ("lease_lost": another consumer has it, this one's ack would be refused)
   * or the consumer is shutting down and the grace period ran out
   * ("shutdown": the batch is released, delivered again). A per-message
   * handler's batch stops before its next message then. For a retry (a
   * one-message batch run as a job) it is the job's signal.
   */
  readonly signal: AbortSignal;
  readonly reason: DeliveryCancelReason | undefined;
}

/** A per-message handler: a throw fails that message, and the next one is handled. */
export type MessageHandler = (message: Delivery, ctx: DeliveryContext) => unknown;
/** A per-batch handler: FailedMessages fails those it names, any other throw the whole batch. */
export type BatchHandler = (batch: Delivery[], ctx: DeliveryContext) => unknown;

export interface SubscribeOptions {
  /** Batches of the subscription run at once (more than the topic's lanes gain nothing). Default 1. */
  concurrency?: number;
  /**
   * Batches received ahead of a free handler, waiting for one with their
   * leases extended, 0 to 1,024. Default: concurrency. A lane's next batch
   * comes only after its last one was acknowledged, so prefetch gains
   * where the topic has more lanes than the concurrency; it holds up to
   * prefetch × batchSize more messages in memory, and lanes another
   * consumer could be handling.
   */
  prefetch?: number;
  /** Messages of a batch at most, 1 to 10,000. Default 100. */
  batchSize?: number;
}

export interface ConsumerOptions {
  /** Default: $DROVER_URL (read when the consumer starts). */
  url?: string;
  /** Default: $DROVER_TOKEN. Needs the `work` scope. */
  token?: string;
  /** Names the consumer in the lanes' leases and its retry jobs'. Default: hostname-pid-random. */
  consumerId?: string;
  /** How long a batch is this consumer's before it is delivered again, ms (1,000 to 300,000); extended every third while its handler runs. Default 30 s. */
  leaseMs?: number;
  /** Longest long poll of a receive, ms (at most the server's --max-wait). Default 30 s. */
  pollWaitMs?: number;
  /** What running handlers get after stop() or SIGTERM, ms; the batches of those still running then are released. Default 30 s. */
  shutdownTimeoutMs?: number;
  /** Longest wait between tries while the server is unreachable, ms. Default 10 s. */
  maxBackoffMs?: number;
  /** Most retry jobs running at once. Default: the subscriptions' concurrency added up, at most 100. */
  retryConcurrency?: number;
  /** Default: console, without debug. */
  logger?: Logger;
}

interface Subscription {
  topic: string;
  name: string;
  ref: string;
  handler: MessageHandler | BatchHandler;
  batch: boolean;
  concurrency: number;
  prefetch: number;
  batchSize: number;
  /** Batches asked for or held until their handlers end: at most concurrency + prefetch. */
  inFlight: number;
  /** Handlers running: at most concurrency. */
  running: number;
  /** Batches received that wait for a handler, oldest first. */
  waiting: Array<{ b: Batch; before: Batch[] }>;
  /** The batch each message in flight belongs to, by message id. */
  holding: Map<number, Batch>;
  /** Ended batches whose acks (receipt → failed) or releases wait to be sent. */
  acks: Map<string, Record<string, string>>;
  releases: Set<string>;
  /** Batches held (running, waiting, or waiting for their ack), whose leases the extender renews. */
  held: Map<string, Batch>;
  /** Wakes the extender: a batch was received, or the consumer stopped. */
  received: Signal;
  dropped: number;
}

interface Batch {
  sub: Subscription;
  receipt: string;
  messages: Delivery[];
  abort: AbortController;
  reason: DeliveryCancelReason | undefined;
  lost: boolean;
  /** When the request that began the batch's lease (its receive, then its last renewal) was sent, ms since the epoch. */
  renewFrom: number;
  started: boolean;
  ended: boolean;
  done: Promise<void>;
  markDone: () => void;
}

type Failures = Map<number, unknown>;


function errorText(e: unknown): string {
  if (e instanceof Error) return e.message ? `${e.name}: ${e.message}` : e.name;
  return typeof e === "string" ? e : `thrown: ${String(e)}`;
}

/**
 * Runs handlers of topic subscriptions:
 *
 * ```ts
 * const consumer = new Consumer({ url, token });
 * consumer.subscribe("orders", "billing", async (msg) => bill(msg.payload), { concurrency: 4 });
 * consumer.subscribeBatch("orders", "search", async (batch) => index(batch));
 * await consumer.run(); // until SIGTERM or SIGINT
 * ```
 *
 * Failed messages are retried by the server as jobs of the topic's retry
 * queue, which this consumer works too: a delivery's `attempt` counts them,
 * and after the subscription's max_attempts the message is dead (a
 * discarded job that `drover jobs retry` brings back). Delivery is at least
 * once: make handlers idempotent by Delivery.id.
 */
export class Consumer {
  readonly consumerId: string;
  readonly #opts: Required<Omit<ConsumerOptions, "url" | "token" | "consumerId" | "logger" | "retryConcurrency">> & {
    url: string | undefined;
    token: string | undefined;
    retryConcurrency: number | undefined;
  };
  readonly #log: Logger;
  readonly #subs = new Map<string, Subscription>();
  #started = false;
  #stopping = false;
  #ackerStop = false;
  #hurry = false;
  readonly #changed = new Signal();
  readonly #life: Lifecycle;
  readonly #receiveAbort = new AbortController();
  readonly #extendStop = new AbortController();
  #t: Transport | undefined;
  #client: Client | undefined;
  #retries: Worker | undefined;
  #loops: { receive: Promise<void>[]; extend: Promise<void>[]; ack: Promise<void>[] } = { receive: [], extend: [], ack: [] };

  constructor(options: ConsumerOptions = {}) {
    const leaseMs = options.leaseMs ?? 30_000;
    if (!(leaseMs >= 1000 && leaseMs <= MAX_LEASE_MS)) throw new RangeError(`leaseMs ${leaseMs}: must be between 1000 and ${MAX_LEASE_MS}`);
    this.#opts = {
      url: options.url,
      token: options.token,
      leaseMs,
      pollWaitMs: Math.max(0, options.pollWaitMs ?? 30_000),
      shutdownTimeoutMs: Math.max(0, options.shutdownTimeoutMs ?? 30_000),
      maxBackoffMs: Math.max(50, options.maxBackoffMs ?? 10_000),
      retryConcurrency: options.retryConcurrency,
    };
    this.consumerId = (options.consumerId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`).slice(0, 255);
    this.#log = options.logger ?? consoleLogger;
    this.#life = new Lifecycle("consumer", this.#log, () => {
      this.#hurry = true;
      this.#changed.notify();
    });
  }

  /** Serves the stored subscription `name` of `topic` with a handler called for each message of a batch, in order. */
  subscribe(topic: string, name: string, handler: MessageHandler, options: SubscribeOptions = {}): this {
    return this.#add(topic, name, handler, false, options);
  }

  /** Serves the stored subscription `name` of `topic` with a handler called with each batch whole. */
  subscribeBatch(topic: string, name: string, handler: BatchHandler, options: SubscribeOptions = {}): this {
    return this.#add(topic, name, handler, true, options);
  }

  #add(topic: string, name: string, handler: MessageHandler | BatchHandler, batch: boolean, o: SubscribeOptions): this {
    if (this.#started) throw new Error("consumer: subscribe before start()");
    const ref = `${topic}/${name}`;
    if (this.#subs.has(ref)) throw new Error(`subscription ${ref}: a handler is registered already`);
    const concurrency = o.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new RangeError(`concurrency ${concurrency}: must be at least 1`);
    const prefetch = o.prefetch ?? concurrency;
    if (!Number.isInteger(prefetch) || prefetch < 0 || prefetch > 1024) throw new RangeError(`prefetch ${prefetch}: must be between 0 and 1024`);
    const batchSize = o.batchSize ?? 100;
    if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) throw new RangeError(`batchSize ${batchSize}: must be between 1 and 10000`);
    this.#subs.set(ref, {
      topic, name, ref, handler, batch, concurrency, prefetch, batchSize, inFlight: 0, running: 0, waiting: [], holding: new Map(), acks: new Map(),
      releases: new Set(), held: new Map(), received: new Signal(), dropped: 0,
    });
    return this;
  }

  /** The subscriptions served, as "topic/name". */
  get subscriptions(): string[] {
    return [...this.#subs.keys()].sort();
  }

  /** Starts the loops; returns at once. `stop()` ends them, `done` settles then. */
  start(): void {
    if (this.#started) throw new Error("consumer: started already");
    const url = this.#opts.url ?? process.env["DROVER_URL"];
    const token = this.#opts.token ?? process.env["DROVER_TOKEN"];
    if (!url || !token) throw new Error("consumer: give url and token (or set DROVER_URL and DROVER_TOKEN)");
    if (this.#subs.size === 0) throw new Error("consumer: no subscriptions (use consumer.subscribe(topic, name, handler))");
    this.#started = true;
    this.#t = new Transport(url, token, Math.max(30_000, this.#opts.leaseMs));
    this.#client = new Client(url, token, { timeoutMs: 30_000 });
    const topics = [...new Set([...this.#subs.values()].map((s) => s.topic))].sort();
    const concurrency = this.#opts.retryConcurrency ?? Math.min(100, [...this.#subs.values()].reduce((n, s) => n + s.concurrency, 0));
    this.#retries = new Worker({
      url, token, queues: topics.map((t) => `topic:${t}`), concurrency, leaseMs: Math.max(1000, this.#opts.leaseMs),
      pollWaitMs: this.#opts.pollWaitMs, shutdownTimeoutMs: this.#opts.shutdownTimeoutMs, maxBackoffMs: this.#opts.maxBackoffMs,
      workerId: this.consumerId, logger: this.#log,
    });
    this.#retries.register<RetryArgs>(RETRY_KIND, (job, ctx) => this.#retry(job, ctx));
    this.#retries.start();
    this.#retries.done.catch((e: unknown) => this.#fail(e));
    const subs = [...this.#subs.values()];
    this.#loops.extend = subs.map((s) => this.#extendLoop(s));
    this.#loops.ack = subs.map((s) => this.#ackLoop(s));
    this.#loops.receive = subs.map((s) => this.#receiveLoop(s));
    this.#log.info(`consumer ${this.consumerId}: subscriptions ${this.subscriptions.join(", ")}`);
    this.#life.begin(() => this.#shutdown());
  }

  /** Settles once the consumer has stopped: rejects with the error that stopped it (a bad token, an unknown subscription). */
  get done(): Promise<void> {
    return this.#life.done;
  }

  /** Runs until stop(), SIGTERM or SIGINT, then shuts down gracefully; rejects with the error that stopped it, if one did. */
  async run(): Promise<void> {
    await this.#life.run(() => this.start(), `stopping consumer ${this.consumerId}`);
  }

  /** Makes SIGTERM and SIGINT stop the consumer gracefully (a second one stops waiting for handlers); returns a function that removes the handlers. */
  handleSignals(signals: NodeJS.Signals[] = ["SIGTERM", "SIGINT"]): () => void {
    return this.#life.handleSignals(signals, `stopping consumer ${this.consumerId}`);
  }

  /**
   * Stops gracefully: no more receives, the batches not started are
   * released, running handlers get shutdownTimeoutMs to finish and are
   * acknowledged, the batches of those still running then are released.
   * Resolves once stopped.
   */
  async stop(): Promise<void> {
    await this.#life.stop();
  }

  #fail(e: unknown): void {
    this.#life.fail(e);
  }

  async #sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const t = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  // Receiving.

  async #reserve(sub: Subscription): Promise<number> {
    const room = sub.concurrency + sub.prefetch;
    while (!this.#stopping && sub.inFlight >= room) await this.#changed.wait();
    if (this.#stopping) return 0;
    const n = Math.min(room - sub.inFlight, MAX_BATCHES_PER_RECEIVE);
    sub.inFlight += n;
    return n;
  }

  #unreserve(sub: Subscription, n: number): void {
    if (n > 0) {
      sub.inFlight -= n;
      this.#changed.notify();
    }
  }

  async #receiveLoop(sub: Subscription): Promise<void> {
    const o = this.#opts;
    const backoff = new Backoff(100, o.maxBackoffMs);
    for (;;) {
      const n = await this.#reserve(sub);
      if (n === 0) return;
      let batches: ReceivedBatch[];
      const sent = Date.now();
      try {
        batches = await this.#client!.receive(sub.topic, sub.name, {
          worker: this.consumerId, maxBatches: n, batchSize: sub.batchSize, leaseMs: o.leaseMs, waitMs: o.pollWaitMs,
          signal: this.#receiveAbort.signal,
        });
      } catch (e) {
        this.#unreserve(sub, n);
        if (this.#stopping) return;
        if (!(e instanceof DroverError) || !e.retryable) {
          this.#log.error(`receive from ${sub.ref}: ${(e as Error).message}`);
          this.#fail(e);
          return;
        }
        const delay = backoff.next();
        this.#log.warn(`receive from ${sub.ref}: ${e.message}; retrying in ${Math.round(delay)} ms`);
        await this.#sleep(delay, this.#receiveAbort.signal);
        continue;
      }
      backoff.reset();
      this.#unreserve(sub, n - batches.length);
      for (const b of batches) this.#begin(sub, b, sent);
      if (batches.length > 0) sub.received.notify();
    }
  }

  #begin(sub: Subscription, received: ReceivedBatch, sent: number): void {
    if (received.dropped > sub.dropped) {
      this.#log.error(`subscription ${sub.ref} lagged past its topic's retention: ${received.dropped} messages were dropped unread`);
      sub.dropped = received.dropped;
    }
    let markDone = () => {};
    const done = new Promise<void>((r) => (markDone = r));
    const b: Batch = {
      sub, receipt: received.receipt, messages: received.messages, abort: new AbortController(), reason: undefined, lost: false,
      renewFrom: sent, started: false, ended: false, done, markDone,
    };
    sub.held.set(b.receipt, b);
    // A batch repeating messages of one still running here waits for it: the
    // earlier one's lease ran out and this process received the lane again.
    const before = new Set<Batch>();
    for (const m of b.messages) {
      const o = sub.holding.get(m.id);
      if (o) before.add(o);
      sub.holding.set(m.id, b);
    }
    sub.waiting.push({ b, before: [...before] });
    this.#startWaiting(sub);
  }

  /** Starts the batches waiting for a handler while the subscription has free handlers. */
  #startWaiting(sub: Subscription): void {
    while (sub.running < sub.concurrency) {
      const next = sub.waiting.shift();
      if (!next) return;
      if (next.b.ended) continue; // released at shutdown while waiting
      next.b.started = true;
      sub.running++;
      void this.#run(next.b, next.before);
    }
  }

  async #run(b: Batch, before: Batch[]): Promise<void> {
    let failed: Failures | undefined;
    try {
      for (const o of before) await o.done;
      if (b.lost || this.#stopping) return;
      const ctx: DeliveryContext = {
        topic: b.sub.topic, subscription: b.sub.name, consumerId: this.consumerId, signal: b.abort.signal,
        get reason() {
          return b.reason;
        },
      };
      failed = await this.#handle(b.sub, b.messages, ctx);
      // Stopped at shutdown, the batch is released however its handler
      // ended (as Python's, whose task is cancelled): a handler told to
      // stop may have cut its work short and still returned.
      if (b.reason === "shutdown") failed = undefined;
    } finally {
      this.#end(b, failed);
    }
  }

  /** Runs the handler on messages; resolves the failed ones by id, undefined when it was stopped before it got through them. */
  async #handle(sub: Subscription, messages: Delivery[], ctx: DeliveryContext): Promise<Failures | undefined> {
    const failed: Failures = new Map();
    if (sub.batch) {
      try {
        await (sub.handler as BatchHandler)(messages, ctx);
      } catch (e) {
        if (ctx.signal.aborted) return undefined;
        if (e instanceof FailedMessages) {
          const ids = new Set(messages.map((m) => m.id));
          for (const [id, err] of e.failed) if (ids.has(id)) failed.set(id, err);
        } else {
          for (const m of messages) failed.set(m.id, e);
        }
      }
      return failed;
    }
    for (const m of messages) {
      if (ctx.signal.aborted) return undefined;
      try {
        await (sub.handler as MessageHandler)(m, ctx);
      } catch (e) {
        failed.set(m.id, e);
      }
    }
    return failed;
  }

  /** The batch's handler ended (or never started): its ack, or its release when it did not get through, waits for the acker. */
  #end(b: Batch, failed: Failures | undefined): void {
    if (b.ended) return;
    b.ended = true;
    const sub = b.sub;
    sub.inFlight--;
    if (b.started) {
      sub.running--;
      this.#startWaiting(sub);
    }
    for (const m of b.messages) if (sub.holding.get(m.id) === b) sub.holding.delete(m.id);
    b.markDone();
    if (b.lost) {
      sub.held.delete(b.receipt);
      this.#log.info(`batch of ${sub.ref} ended after its lease was lost; not acknowledged`);
    } else if (failed === undefined) {
      sub.releases.add(b.receipt);
    } else {
      const out: Record<string, string> = {};
      for (const [id, e] of failed) out[String(id)] = truncate(errorText(e), MAX_ERROR_BYTES);
      sub.acks.set(b.receipt, out);
      if (failed.size > 0) this.#log.warn(`${failed.size} of ${b.messages.length} messages of ${sub.ref} failed (retried as jobs of queue topic:${sub.topic})`);
    }
    this.#changed.notify();
  }

  #stopBatch(b: Batch, reason: DeliveryCancelReason): void {
    if (b.ended || b.abort.signal.aborted) return;
    b.reason = reason;
    b.abort.abort(new DOMException(`batch of ${b.sub.ref}: ${reason}`, "AbortError"));
  }

  // Retries: a failed message's job, run through its subscription's handler.

  async #retry(job: ClaimedJob<RetryArgs>, jobCtx: JobContext): Promise<void> {
    const sub = this.#subs.get(`${job.args.topic}/${job.args.subscription}`);
    if (!sub) throw new Snooze(ELSEWHERE_SNOOZE_MS);
    const d = deliveryOfRetry(job.args, job.attempt);
    const ctx: DeliveryContext = {
      topic: sub.topic, subscription: sub.name, consumerId: this.consumerId, signal: jobCtx.signal,
      get reason() {
        return jobCtx.reason;
      },
    };
    const failed = await this.#handle(sub, [d], ctx);
    if (failed === undefined) throw jobCtx.signal.reason ?? new Error("stopped");
    if (failed.has(d.id)) {
      const e = failed.get(d.id);
      throw e instanceof Error ? e : new Error(String(e));
    }
  }

  // Leases.

  /**
   * Renews the leases of the subscription's batches held, each a third of
   * the lease after the request that began it was sent. A renewal takes
   * along the batches past half of that, so that there are at most two
   * renewals a third of a lease. Counting from each batch's own receive
   * matters on a loaded machine: renewing every third of the lease on one
   * clock, a batch received just after a renewal waited for the next one,
   * its lease having begun before the receive's slow answer arrived, and
   * the renewal came after the lease had ended.
   */
  async #extendLoop(sub: Subscription): Promise<void> {
    const o = this.#opts;
    const t = this.#t!;
    const every = o.leaseMs / 3;
    const backoff = new Backoff(100, Math.min(o.maxBackoffMs, every));
    const stop = this.#extendStop.signal;
    let notBefore = 0;
    for (;;) {
      if (stop.aborted) return;
      let due = Infinity;
      for (const b of sub.held.values()) due = Math.min(due, b.renewFrom + every);
      due = Math.max(due, notBefore);
      const now = Date.now();
      if (due > now) {
        await sub.received.wait(due === Infinity ? undefined : due - now);
        continue;
      }
      const began = Date.now();
      const batches = [...sub.held.values()].filter((b) => b.renewFrom <= began - every / 2);
      for (let i = 0; i < batches.length; i += MAX_PER_REQUEST) {
        const chunk = batches.slice(i, i + MAX_PER_REQUEST);
        let out: { extended?: boolean[] };
        try {
          out = await t.request<{ extended?: boolean[] }>(
            "POST",
            subscriptionPath(sub.topic, sub.name, "extend"),
            { receipts: chunk.map((b) => b.receipt), lease_ms: o.leaseMs },
            { timeoutMs: Math.max(2000, o.leaseMs / 2) },
          );
        } catch (e) {
          if (e instanceof NotFoundError) {
            // Deleted while consuming; its receives fail too.
            notBefore = Date.now() + every;
            break;
          }
          const retryIn = backoff.next();
          notBefore = Date.now() + retryIn;
          this.#log.warn(`extending ${chunk.length} batches of ${sub.ref}: ${(e as Error).message}; retrying in ${Math.round(retryIn)} ms`);
          break;
        }
        backoff.reset();
        const extended = out.extended ?? [];
        chunk.forEach((b, j) => {
          if (extended[j] === true) b.renewFrom = began;
          else if (extended[j] === false) this.#lose(b);
        });
        // An answer naming fewer receipts than sent leaves the others due: tried again a third of a lease later.
        if (extended.length < chunk.length) notBefore = Date.now() + every;
      }
    }
  }

  /** The batch's lease is lost: its handler is stopped, its ack dropped (the server would refuse it). */
  #lose(b: Batch): void {
    b.lost = true;
    const sub = b.sub;
    sub.held.delete(b.receipt);
    sub.acks.delete(b.receipt);
    sub.releases.delete(b.receipt);
    if (!b.ended) {
      this.#log.warn(`batch of ${sub.ref}: lease lost while its handler ran (it is delivered again); stopping it`);
      this.#stopBatch(b, "lease_lost");
    }
  }

  // Acknowledgements.

  async #ackLoop(sub: Subscription): Promise<void> {
    const backoff = new Backoff(100, this.#opts.maxBackoffMs);
    const pending = () => sub.acks.size > 0 || sub.releases.size > 0;
    for (;;) {
      while (!pending() && !this.#ackerStop) await this.#changed.wait();
      if (!pending()) return;
      try {
        await this.#sendAcks(sub);
        await this.#sendReleases(sub);
        backoff.reset();
      } catch (e) {
        if (this.#hurry && this.#ackerStop) {
          this.#log.error(`could not acknowledge or release batches of ${sub.ref}: ${(e as Error).message} (they are delivered again after their leases)`);
          return;
        }
        const delay = backoff.next();
        this.#log.warn(`acknowledging batches of ${sub.ref}: ${(e as Error).message}; retrying in ${Math.round(delay)} ms`);
        await this.#changed.wait(delay);
      }
    }
  }

  async #sendAcks(sub: Subscription): Promise<void> {
    const t = this.#t!;
    const path = subscriptionPath(sub.topic, sub.name, "ack");
    const body = (receipts: string[]) => ({
      acks: receipts.map((r) => {
        const failed = sub.acks.get(r) ?? {};
        return Object.keys(failed).length > 0 ? { receipt: r, failed } : { receipt: r };
      }),
    });
    while (sub.acks.size > 0) {
      const receipts = [...sub.acks.keys()].slice(0, MAX_PER_REQUEST);
      try {
        const out = await t.request<{ accepted?: boolean[] }>("POST", path, body(receipts));
        if ((out.accepted ?? []).some((ok) => !ok)) this.#log.warn(`acks of ${sub.ref} refused: their leases had ended (the batches are delivered again)`);
      } catch (e) {
        if (!(e instanceof ValidationError || e instanceof PayloadTooLargeError)) throw e;
        // Nothing of a refused request is stored: the receipts go one at a
        // time to find the one at fault, which is dropped.
        for (const r of receipts) {
          try {
            await t.request("POST", path, body([r]));
          } catch (e1) {
            if (!(e1 instanceof ValidationError || e1 instanceof PayloadTooLargeError)) throw e1;
            this.#log.error(`ack of a batch of ${sub.ref} refused: ${e1.message}; dropped (delivered again after its lease)`);
          }
          this.#settle(sub, [r]);
        }
        continue;
      }
      this.#settle(sub, receipts);
    }
  }

  async #sendReleases(sub: Subscription): Promise<void> {
    while (sub.releases.size > 0) {
      const receipts = [...sub.releases].sort().slice(0, MAX_PER_REQUEST);
      try {
        await this.#t!.request("POST", subscriptionPath(sub.topic, sub.name, "release"), { receipts });
      } catch (e) {
        // Deleted while consuming: nothing to hand back.
        if (!(e instanceof NotFoundError)) throw e;
      }
      for (const r of receipts) {
        sub.releases.delete(r);
        sub.held.delete(r);
      }
    }
  }

  #settle(sub: Subscription, receipts: string[]): void {
    for (const r of receipts) {
      sub.acks.delete(r);
      sub.held.delete(r);
    }
  }

  // Shutting down.

  async #shutdown(): Promise<void> {
    const o = this.#opts;
    this.#stopping = true;
    this.#changed.notify();
    const retries = this.#retries?.stop();
    this.#receiveAbort.abort(); // breaks the long polls; no receive starts after
    await Promise.all(this.#loops.receive);
    // Batches received ahead and not started go back at once.
    for (const sub of this.#subs.values()) {
      for (const { b } of sub.waiting.splice(0)) this.#end(b, undefined);
    }
    const batches = [...this.#subs.values()].flatMap((s) => [...s.held.values()]).filter((b) => !b.ended);
    const deadline = Date.now() + o.shutdownTimeoutMs;
    while (batches.some((b) => !b.ended) && !this.#hurry && Date.now() < deadline) {
      await this.#changed.wait(Math.min(200, Math.max(1, deadline - Date.now())));
    }
    const running = batches.filter((b) => !b.ended);
    if (running.length > 0) {
      this.#log.warn(`${running.length} batch handlers still running after ${o.shutdownTimeoutMs} ms: aborting them; their batches are released`);
      for (const b of running) this.#stopBatch(b, "shutdown");
      const grace = Date.now() + 1000;
      while (running.some((b) => !b.ended) && Date.now() < grace) await this.#changed.wait(50);
      for (const b of running) this.#end(b, undefined); // abandoned: released; a later end is ignored
    }
    await retries;
    this.#ackerStop = true;
    this.#changed.notify();
    const acker = Promise.all(this.#loops.ack);
    if (!(await within(acker, Math.max(10_000, o.maxBackoffMs * 2)))) {
      this.#hurry = true;
      this.#changed.notify();
      await within(acker, o.leaseMs);
    }
    this.#extendStop.abort();
    for (const sub of this.#subs.values()) sub.received.notify();
    await Promise.all(this.#loops.extend);
    this.#log.info(`consumer ${this.consumerId} stopped`);
  }
}
