import { type Logger } from "./runtime.js";
export type { Logger };
import type { AttemptResult, ClaimedJob } from "./types.js";
/** The largest result the server stores (bytes of JSON). */
export declare const MAX_RESULT_BYTES = 65536;
/** The largest error message or trace the server stores. */
export declare const MAX_ERROR_BYTES = 65536;
/**
 * The compact form of a /v1/finish request: each of attempt, lease_token
 * and outcome that every result has goes once into `shared`, with the value
 * most of them have, and is left out of the results that have that value
 * (the server gives a result that lacks one shared's). The results of one
 * claim's noop jobs so become their ids alone.
 */
export declare function compactResults(batch: AttemptResult[]): {
    shared: Partial<AttemptResult>;
    results: Partial<AttemptResult>[];
};
/**
 * The jobs of a claim's answer: in the compact form (what the jobs share
 * sent once, in `shared`), each job is its entry with the fields it lacks
 * taken from `shared`.
 */
export declare function claimedJobs(out: {
    jobs?: ClaimedJob[] | null;
    shared?: Partial<ClaimedJob>;
}): ClaimedJob[];
/** Throw from a handler to finish the job as cancelled, without retry. */
export declare class Cancel extends Error {
    constructor(message?: string);
}
/**
 * Throw from a handler to fail this attempt and retry the job after
 * `delayMs` (or at `at`) instead of the server's backoff. The attempt counts
 * against max_attempts.
 */
export declare class Retry extends Error {
    readonly at: Date | undefined;
    constructor(message?: string, options?: {
        delayMs?: number;
        at?: Date;
    });
}
/**
 * Throw from a handler to put the job back to wait `ms` milliseconds without
 * using an attempt and without recording an error: it runs again after the
 * delay with the same attempt number (outcome `snoozed`). For a job that
 * cannot run yet (a rate limit upstream, a resource not ready).
 */
export declare class Snooze extends Error {
    readonly ms: number;
    constructor(ms: number);
}
/** Why a handler's signal aborted. */
export type CancelReason = "cancel_requested" | "lease_lost" | "timeout" | "shutdown";
export type { ClaimedJob };
/** What a handler knows besides its job, and how it learns to stop. */
export interface JobContext {
    /**
     * Aborts when the handler should stop: someone cancelled the job
     * (`reason` "cancel_requested"), its lease was lost ("lease_lost": its
     * result would be rejected and is not sent), its timeout passed
     * ("timeout"), or the worker is shutting down and the grace period ran out
     * ("shutdown": unless the handler then returns, or throws Cancel or
     * Snooze, the job is released, to run again with the same attempt). Pass
     * it to fetch and friends.
     */
    readonly signal: AbortSignal;
    /** Why `signal` aborted; undefined while it has not. */
    readonly reason: CancelReason | undefined;
    readonly workerId: string;
    /** Records the job's result (a handler's non-undefined return value takes precedence). */
    setResult(value: unknown): void;
}
/** A handler: its return value (JSON, at most 64 KiB) becomes the job's result. */
export type Handler<A = unknown, R = unknown> = (job: ClaimedJob<A>, ctx: JobContext) => R | Promise<R>;
export interface HandlerOptions {
    /** Milliseconds an attempt may run when the job has no timeout_ms of its own. */
    timeoutMs?: number;
}
export interface WorkerOptions {
    /** Default: $DROVER_URL (read when the worker starts). */
    url?: string;
    /** Default: $DROVER_TOKEN. Needs the `work` scope. */
    token?: string;
    /** One claimer per queue; default ["default"]. */
    queues?: string[];
    /** Most handlers running at once; default 10. */
    concurrency?: number;
    /** Lease asked for each attempt, ms (at least 1,000); heartbeats every third. Default 30 s. */
    leaseMs?: number;
    /** Longest long poll of a claim, ms (at most the server's --max-wait). Default 30 s. */
    pollWaitMs?: number;
    /**
     * What running handlers get after stop() or SIGTERM, ms; the jobs of those
     * still running then are released (available again at once, their
     * attempts undone). Default 30 s.
     */
    shutdownTimeoutMs?: number;
    /** Longest wait between tries while the server is unreachable, ms. Default 10 s. */
    maxBackoffMs?: number;
    /** Default: hostname-pid-random. */
    workerId?: string;
    /**
     * What the worker is, said on every claim (see docs/routing.md): with any
     * of these it also takes the routed jobs it matches, as a worker named
     * workerName (default workerId); with none, plain jobs only.
     * setWorkerLabels changes the labels while it runs.
     */
    workerName?: string;
    workerType?: string;
    workerLabels?: Record<string, string>;
    /** Default: console, without debug. */
    logger?: Logger;
}
/** Encodes a result, throwing when it is not JSON or over 64 KiB. */
export declare function encodeResult(value: unknown): unknown;
/**
 * Runs handlers registered by kind:
 *
 * ```ts
 * const worker = new Worker({ queues: ["default"], concurrency: 20 });
 * worker.register<{ to: string }>("email", async (job, ctx) => ({ sentTo: job.args.to }));
 * await worker.run(); // until SIGTERM or SIGINT
 * ```
 */
export declare class Worker {
    #private;
    readonly workerId: string;
    constructor(options?: WorkerOptions);
    /** Replaces the worker's labels while it runs: its next claims take the routed jobs the new labels match. */
    setWorkerLabels(labels: Record<string, string>): void;
    /**
     * Registers the handler of a kind. `A` types the job's args (not checked
     * at run time). The handler's return value becomes the job's result; a
     * throw fails the attempt (retried with backoff until max_attempts);
     * {@link Cancel} cancels the job, {@link Retry} retries it at a chosen time,
     * {@link Snooze} puts it back for a delay without using the attempt.
     */
    register<A = unknown, R = unknown>(kind: string, handler: Handler<A, R>, options?: HandlerOptions): this;
    get kinds(): string[];
    /** How many handlers run now. */
    get running(): number;
    /** Starts the loops; returns at once. `stop()` ends them, `done` settles then. */
    start(): void;
    /** Settles once the worker has stopped: rejects with the error that stopped it (a bad token, a refused queue). */
    get done(): Promise<void>;
    /**
     * Runs until stop(), SIGTERM or SIGINT, then shuts down gracefully. A
     * second signal stops waiting for running handlers. Rejects with the error
     * that stopped the worker, if one did.
     */
    run(): Promise<void>;
    /**
     * Makes SIGTERM and SIGINT stop the worker gracefully (a second one stops
     * waiting for handlers). Returns a function that removes the handlers.
     */
    handleSignals(signals?: NodeJS.Signals[]): () => void;
    /**
     * Stops gracefully: no more claims, running handlers get shutdownTimeoutMs
     * to finish, their results are reported; the jobs of handlers still running
     * then are released (available again at once, their attempts undone). Resolves once stopped (also when
     * the worker stopped on an error: that one `done` and `run()` reject with).
     */
    stop(): Promise<void>;
}
