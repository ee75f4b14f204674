import { type Logger } from "./runtime.js";
import { type Delivery } from "./types.js";
/**
 * Throw from a batch handler to fail some messages of its batch, by
 * Delivery.id, with their errors, and acknowledge the others (Go's
 * `drover.FailedMessages`). Each becomes a job of the topic's retry queue,
 * for this subscription alone.
 */
export declare class FailedMessages extends Error {
    readonly failed: Map<number, unknown>;
    constructor(failed: Map<number, unknown> | Record<number, unknown>);
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
export declare class Consumer {
    #private;
    readonly consumerId: string;
    constructor(options?: ConsumerOptions);
    /** Serves the stored subscription `name` of `topic` with a handler called for each message of a batch, in order. */
    subscribe(topic: string, name: string, handler: MessageHandler, options?: SubscribeOptions): this;
    /** Serves the stored subscription `name` of `topic` with a handler called with each batch whole. */
    subscribeBatch(topic: string, name: string, handler: BatchHandler, options?: SubscribeOptions): this;
    /** The subscriptions served, as "topic/name". */
    get subscriptions(): string[];
    /** Starts the loops; returns at once. `stop()` ends them, `done` settles then. */
    start(): void;
    /** Settles once the consumer has stopped: rejects with the error that stopped it (a bad token, an unknown subscription). */
    get done(): Promise<void>;
    /** Runs until stop(), SIGTERM or SIGINT, then shuts down gracefully; rejects with the error that stopped it, if one did. */
    run(): Promise<void>;
    /** Makes SIGTERM and SIGINT stop the consumer gracefully (a second one stops waiting for handlers); returns a function that removes the handlers. */
    handleSignals(signals?: NodeJS.Signals[]): () => void;
    /**
     * Stops gracefully: no more receives, the batches not started are
     * released, running handlers get shutdownTimeoutMs to finish and are
     * acknowledged, the batches of those still running then are released.
     * Resolves once stopped.
     */
    stop(): Promise<void>;
}
