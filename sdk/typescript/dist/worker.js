/**
 * The worker: claims jobs over the HTTP API, runs their handlers, keeps
 * their leases and reports their results.
 *
 * Its loops, all on the one event loop:
 *
 * - a claimer per queue long-polls `/v1/claim` for at most as many jobs as
 *   there are free slots (it reserves the slots first), so every claimed job
 *   starts at once and none waits in a buffer;
 * - the heartbeat extends the leases of every held attempt in one request
 *   every third of the lease, and delivers `cancel_requested` and lost
 *   leases to the handlers (through their AbortSignal);
 * - the finisher sends the results that piled up since its last request in
 *   one `/v1/finish` request.
 *
 * An attempt stays held from its claim until the server has answered its
 * result: the heartbeat keeps extending its lease while the result waits
 * for an unreachable server, and the result is sent again until the server
 * answers. The server's fencing by (id, attempt, lease_token) rejects a
 * result whose lease was lost, so re-sending can never finish a job twice.
 *
 * At shutdown, an attempt whose handler did not finish within the shutdown
 * timeout is released (`/v1/release`): its job is available again at once
 * and its attempt undone, as if it had never been claimed. A release is one
 * more kind of report the finisher sends, in requests of its own. A handler
 * that throws {@link Snooze} reports the outcome `snoozed`: the job waits for
 * the delay without using an attempt.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { DroverError, NotFoundError, PayloadTooLargeError, ValidationError } from "./errors.js";
import { Transport } from "./http.js";
import { Backoff, Lifecycle, consoleLogger, Signal, byteLength, truncate, within } from "./runtime.js";
/** The largest result the server stores (bytes of JSON). */
export const MAX_RESULT_BYTES = 65536;
/** The largest error message or trace the server stores. */
export const MAX_ERROR_BYTES = 65536;
const MAX_PER_REQUEST = 1000;
/** The longest snooze the server takes (366 days). */
const MAX_SNOOZE_MS = 31_622_400_000;
function isRelease(r) {
    return r.outcome === "released";
}
/** The fields of a result that a compact /v1/finish request may send once, in `shared`. */
const SHARED_RESULT_FIELDS = ["attempt", "lease_token", "outcome"];
/**
 * The compact form of a /v1/finish request: each of attempt, lease_token
 * and outcome that every result has goes once into `shared`, with the value
 * most of them have, and is left out of the results that have that value
 * (the server gives a result that lacks one shared's). The results of one
 * claim's noop jobs so become their ids alone.
 */
export function compactResults(batch) {
    const shared = {};
    for (const k of SHARED_RESULT_FIELDS) {
        const counts = new Map();
        let best;
        let most = 0;
        let everyOne = true;
        for (const r of batch) {
            const v = r[k];
            if (v === undefined) {
                everyOne = false;
                break;
            }
            const n = (counts.get(v) ?? 0) + 1;
            counts.set(v, n);
            if (n > most)
                [best, most] = [v, n];
        }
        if (everyOne && most > 0)
            shared[k] = best;
    }
    const results = batch.map((r) => {
        const e = {};
        for (const [k, v] of Object.entries(r))
            if (shared[k] !== v)
                e[k] = v;
        return e;
    });
    return { shared: shared, results };
}
/**
 * The jobs of a claim's answer: in the compact form (what the jobs share
 * sent once, in `shared`), each job is its entry with the fields it lacks
 * taken from `shared`.
 */
export function claimedJobs(out) {
    const jobs = out.jobs ?? [];
    const shared = out.shared;
    if (shared === undefined)
        return jobs;
    // Object.assign, not an object spread: spreading shared's ~15 fields
    // into each job cost 10-25 µs a job in V8, more than parsing the full
    // form, where assign costs about 1.5 µs.
    return jobs.map((e) => Object.assign({}, shared, e));
}
/** Throw from a handler to finish the job as cancelled, without retry. */
export class Cancel extends Error {
    constructor(message = "cancelled") {
        super(message);
        this.name = "Cancel";
    }
}
/**
 * Throw from a handler to fail this attempt and retry the job after
 * `delayMs` (or at `at`) instead of the server's backoff. The attempt counts
 * against max_attempts.
 */
export class Retry extends Error {
    at;
    constructor(message = "retry requested", options = {}) {
        super(message);
        this.name = "Retry";
        this.at = options.at ?? (options.delayMs !== undefined ? new Date(Date.now() + options.delayMs) : undefined);
    }
}
/**
 * Throw from a handler to put the job back to wait `ms` milliseconds without
 * using an attempt and without recording an error: it runs again after the
 * delay with the same attempt number (outcome `snoozed`). For a job that
 * cannot run yet (a rate limit upstream, a resource not ready).
 */
export class Snooze extends Error {
    ms;
    constructor(ms) {
        if (!(ms >= 0))
            throw new RangeError(`snooze ${ms}: must be at least 0 ms`);
        super(`snoozed for ${ms} ms`);
        this.name = "Snooze";
        this.ms = ms;
    }
}
/** Encodes a result, throwing when it is not JSON or over 64 KiB. */
export function encodeResult(value) {
    let text;
    try {
        text = JSON.stringify(value);
    }
    catch (e) {
        throw new TypeError(`result: not JSON-encodable: ${e.message}`);
    }
    if (text === undefined)
        throw new TypeError("result: not JSON-encodable");
    const size = byteLength(text);
    if (size > MAX_RESULT_BYTES)
        throw new RangeError(`result: ${size} bytes is over the limit of ${MAX_RESULT_BYTES}`);
    return JSON.parse(text);
}
function errorText(e) {
    if (e instanceof Error) {
        const message = e.message ? `${e.name}: ${e.message}` : e.name;
        return { message, trace: e.stack ?? "" };
    }
    return { message: `thrown: ${String(e)}`, trace: "" };
}
/**
 * Runs handlers registered by kind:
 *
 * ```ts
 * const worker = new Worker({ queues: ["default"], concurrency: 20 });
 * worker.register<{ to: string }>("email", async (job, ctx) => ({ sentTo: job.args.to }));
 * await worker.run(); // until SIGTERM or SIGINT
 * ```
 */
export class Worker {
    workerId;
    #opts;
    #workerName;
    #workerType;
    #workerLabels;
    #log;
    #handlers = new Map();
    #held = new Map();
    #pending = new Map();
    #free = 0;
    #running = 0;
    #reserving = 0;
    #started = false;
    #stopping = false;
    #finisherStop = false;
    #hurry = false;
    #changed = new Signal();
    #hurried = new Signal();
    #life;
    #claimAbort = new AbortController();
    #hbStop = new AbortController();
    #t;
    /** Whether claims ask for the compact form: until a server that predates it refuses the field. */
    #compact = true;
    /** Whether the server answered a claim in the compact form, and so takes compact finish requests. */
    #compactFinish = false;
    #loops = { claim: [] };
    constructor(options = {}) {
        const concurrency = options.concurrency ?? 10;
        if (!Number.isInteger(concurrency) || concurrency < 1)
            throw new RangeError(`concurrency ${concurrency}: must be at least 1`);
        const leaseMs = options.leaseMs ?? 30_000;
        if (leaseMs < 1000)
            throw new RangeError(`leaseMs ${leaseMs}: must be at least 1000`);
        const queues = options.queues ?? ["default"];
        if (queues.length === 0)
            throw new RangeError("queues: give at least one queue");
        this.#opts = {
            url: options.url,
            token: options.token,
            queues,
            concurrency,
            leaseMs,
            pollWaitMs: Math.max(0, options.pollWaitMs ?? 30_000),
            shutdownTimeoutMs: Math.max(0, options.shutdownTimeoutMs ?? 30_000),
            maxBackoffMs: Math.max(50, options.maxBackoffMs ?? 10_000),
        };
        this.workerId = (options.workerId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`).slice(0, 255);
        this.#workerName = options.workerName;
        this.#workerType = options.workerType;
        this.#workerLabels = options.workerLabels === undefined ? undefined : { ...options.workerLabels };
        this.#log = options.logger ?? consoleLogger;
        this.#life = new Lifecycle("worker", this.#log, () => this.#hurryNow());
    }
    /** Replaces the worker's labels while it runs: its next claims take the routed jobs the new labels match. */
    setWorkerLabels(labels) {
        this.#workerLabels = { ...labels };
    }
    /** What the worker says of itself on a claim; empty for a plain worker. */
    #routing() {
        const out = {};
        if (this.#workerName)
            out.worker_name = this.#workerName;
        if (this.#workerType)
            out.worker_type = this.#workerType;
        if (this.#workerLabels && Object.keys(this.#workerLabels).length > 0)
            out.worker_labels = { ...this.#workerLabels };
        return out;
    }
    /**
     * Registers the handler of a kind. `A` types the job's args (not checked
     * at run time). The handler's return value becomes the job's result; a
     * throw fails the attempt (retried with backoff until max_attempts);
     * {@link Cancel} cancels the job, {@link Retry} retries it at a chosen time,
     * {@link Snooze} puts it back for a delay without using the attempt.
     */
    register(kind, handler, options = {}) {
        if (this.#started)
            throw new Error("worker: register handlers before start()");
        if (this.#handlers.has(kind))
            throw new Error(`kind ${JSON.stringify(kind)}: a handler is registered already`);
        this.#handlers.set(kind, { fn: handler, timeoutMs: options.timeoutMs });
        return this;
    }
    get kinds() {
        return [...this.#handlers.keys()].sort();
    }
    /** How many handlers run now. */
    get running() {
        return this.#running;
    }
    /** Starts the loops; returns at once. `stop()` ends them, `done` settles then. */
    start() {
        if (this.#started)
            throw new Error("worker: started already");
        const url = this.#opts.url ?? process.env["DROVER_URL"];
        const token = this.#opts.token ?? process.env["DROVER_TOKEN"];
        if (!url || !token)
            throw new Error("worker: give url and token (or set DROVER_URL and DROVER_TOKEN)");
        if (this.#handlers.size === 0)
            throw new Error("worker: no handlers registered (use worker.register(kind, handler))");
        this.#t = new Transport(url, token, Math.max(30_000, this.#opts.leaseMs));
        this.#started = true;
        this.#free = this.#opts.concurrency;
        this.#loops.heartbeat = this.#heartbeatLoop();
        this.#loops.finisher = this.#finishLoop();
        this.#loops.claim = this.#opts.queues.map((q) => this.#claimLoop(q));
        this.#log.info(`worker ${this.workerId}: queues ${this.#opts.queues.join(",")}, concurrency ${this.#opts.concurrency}, kinds ${this.kinds.join(",")}`);
        this.#life.begin(() => this.#shutdown());
    }
    /** Settles once the worker has stopped: rejects with the error that stopped it (a bad token, a refused queue). */
    get done() {
        return this.#life.done;
    }
    /**
     * Runs until stop(), SIGTERM or SIGINT, then shuts down gracefully. A
     * second signal stops waiting for running handlers. Rejects with the error
     * that stopped the worker, if one did.
     */
    async run() {
        await this.#life.run(() => this.start(), this.#stoppingMessage());
    }
    /**
     * Makes SIGTERM and SIGINT stop the worker gracefully (a second one stops
     * waiting for handlers). Returns a function that removes the handlers.
     */
    handleSignals(signals = ["SIGTERM", "SIGINT"]) {
        return this.#life.handleSignals(signals, this.#stoppingMessage());
    }
    #stoppingMessage() {
        return `stopping (no new jobs; running handlers get ${this.#opts.shutdownTimeoutMs} ms)`;
    }
    /**
     * Stops gracefully: no more claims, running handlers get shutdownTimeoutMs
     * to finish, their results are reported; the jobs of handlers still running
     * then are released (available again at once, their attempts undone). Resolves once stopped (also when
     * the worker stopped on an error: that one `done` and `run()` reject with).
     */
    async stop() {
        await this.#life.stop();
    }
    #fail(e) {
        this.#life.fail(e);
    }
    /** A second signal: stop waiting for handlers, try the results once more at once. */
    #hurryNow() {
        this.#hurry = true;
        this.#changed.notify();
        this.#hurried.notify();
    }
    #wait(ms, signal) {
        if (signal.aborted)
            return Promise.resolve();
        return new Promise((resolve) => {
            const t = setTimeout(done, ms);
            function done() {
                clearTimeout(t);
                signal.removeEventListener("abort", done);
                resolve();
            }
            signal.addEventListener("abort", done, { once: true });
        });
    }
    // Claiming.
    async #reserve(limit) {
        this.#reserving++;
        try {
            while (!this.#stopping && this.#free <= 0)
                await this.#changed.wait();
            if (this.#stopping)
                return 0;
            const n = Math.min(Math.max(1, Math.floor(this.#free / this.#reserving)), limit, MAX_PER_REQUEST);
            this.#free -= n;
            return n;
        }
        finally {
            this.#reserving--;
        }
    }
    #release(n) {
        if (n > 0) {
            this.#free += n;
            this.#changed.notify();
        }
    }
    async #claimLoop(queue) {
        const o = this.#opts;
        const t = this.#t;
        const backoff = new Backoff(100, o.maxBackoffMs);
        const body = { queue, worker: this.workerId, lease_ms: o.leaseMs, wait_ms: o.pollWaitMs };
        // With several queues, the claimer of a queue that was empty last time
        // asks for one job only, so an idle queue holds one slot while it waits.
        let idle = false;
        const shared = o.queues.length > 1;
        for (;;) {
            const n = await this.#reserve(idle && shared ? 1 : MAX_PER_REQUEST);
            if (n === 0)
                return;
            let jobs;
            try {
                const req = { ...body, ...this.#routing(), max: n, ...(this.#compact ? { compact: true } : {}) };
                const out = await t.request("POST", "/v1/claim", req, {
                    timeoutMs: o.pollWaitMs + 30_000,
                    signal: this.#claimAbort.signal,
                });
                jobs = claimedJobs(out);
                if (out.shared !== undefined)
                    this.#compactFinish = true;
                // The server leaves both out for jobs that depend on none.
                for (const j of jobs) {
                    j.depends_on ??= [];
                    j.parent_results ??= [];
                }
            }
            catch (e) {
                this.#release(n);
                if (this.#stopping)
                    return;
                if (this.#compact && e instanceof ValidationError && e.message.includes('"compact"')) {
                    // A server that predates the compact form: claim in the full one.
                    this.#log.info(`claim from queue ${queue}: the server does not know the compact form (${e.message}); claiming in the full form`);
                    this.#compact = false;
                    continue;
                }
                if (!(e instanceof DroverError) || !e.retryable) {
                    this.#log.error(`claim from queue ${queue}: ${e.message}`);
                    this.#fail(e);
                    return;
                }
                const delay = backoff.next();
                this.#log.warn(`claim from queue ${queue}: ${e.message}; retrying in ${Math.round(delay)} ms`);
                await this.#wait(delay, this.#claimAbort.signal);
                continue;
            }
            backoff.reset();
            idle = jobs.length === 0;
            this.#release(n - jobs.length);
            for (const job of jobs)
                this.#begin(job);
        }
    }
    // Running handlers.
    #begin(job) {
        const held = {
            job,
            key: `${job.id}:${job.attempt}`,
            abort: undefined,
            reason: undefined,
            lost: false,
            ended: false,
            timer: undefined,
            result: undefined,
            hasResult: false,
            explicitResult: undefined,
        };
        this.#held.set(held.key, held);
        this.#running++;
        const h = this.#handlers.get(job.kind);
        if (!h) {
            this.#end(held, this.#failure(job, `no handler for kind ${JSON.stringify(job.kind)} in worker ${this.workerId} (it handles ${this.kinds.join(", ")})`, ""));
            return;
        }
        const timeoutMs = job.timeout_ms || h.timeoutMs;
        if (timeoutMs)
            held.timer = setTimeout(() => this.#interrupt(held, "timeout"), timeoutMs);
        const ctx = {
            get signal() {
                return (held.abort ??= new AbortController()).signal;
            },
            get reason() {
                return held.reason;
            },
            workerId: this.workerId,
            setResult: (value) => {
                encodeResult(value);
                held.hasResult = true;
                held.explicitResult = value;
            },
        };
        void (async () => {
            try {
                const value = await h.fn(job, ctx);
                this.#end(held, this.#completed(held, value));
            }
            catch (e) {
                this.#end(held, this.#outcomeOf(held, e, timeoutMs));
            }
        })();
    }
    #interrupt(held, reason) {
        if (held.ended || held.reason !== undefined)
            return;
        held.reason = reason;
        (held.abort ??= new AbortController()).abort(new DOMException(`job ${held.job.id}: ${reason}`, "AbortError"));
    }
    #base(job, outcome) {
        const r = { id: job.id, attempt: job.attempt, outcome };
        if (job.lease_token)
            r.lease_token = job.lease_token;
        return r;
    }
    #releaseOf(job) {
        const r = { id: job.id, attempt: job.attempt, outcome: "released" };
        if (job.lease_token)
            r.lease_token = job.lease_token;
        return r;
    }
    #completed(held, value) {
        if (value === undefined && held.hasResult)
            value = held.explicitResult;
        const r = this.#base(held.job, "completed");
        if (value !== undefined) {
            try {
                r.result = encodeResult(value);
            }
            catch (e) {
                return this.#failure(held.job, e.message, "");
            }
        }
        return r;
    }
    #failure(job, message, trace, retryAt) {
        const r = this.#base(job, "failed");
        r.error = truncate(message || "failed without a message", MAX_ERROR_BYTES);
        if (trace)
            r.trace = truncate(trace, MAX_ERROR_BYTES, true);
        if (retryAt)
            r.retry_at = retryAt.toISOString();
        return r;
    }
    #outcomeOf(held, e, timeoutMs) {
        const job = held.job;
        const { message, trace } = errorText(e);
        if (e instanceof Cancel || held.reason === "cancel_requested") {
            const r = this.#base(job, "cancelled");
            r.error = truncate((e instanceof Error && e.message) || "cancelled", MAX_ERROR_BYTES);
            if (!(e instanceof Cancel) && trace)
                r.trace = truncate(trace, MAX_ERROR_BYTES, true);
            return r;
        }
        if (e instanceof Snooze) {
            const r = this.#base(job, "snoozed");
            r.snooze_ms = Math.min(MAX_SNOOZE_MS, Math.max(0, Math.round(e.ms)));
            return r;
        }
        // Interrupted by the shutdown: give the attempt back unused.
        if (held.reason === "shutdown")
            return this.#releaseOf(job);
        if (e instanceof Retry)
            return this.#failure(job, message, "", e.at);
        if (held.reason === "timeout")
            return this.#failure(job, `timed out after ${timeoutMs} ms: ${message}`, trace);
        return this.#failure(job, message, trace);
    }
    /** Frees the attempt's slot and queues its result, unless its lease was lost. */
    #end(held, result) {
        if (held.timer)
            clearTimeout(held.timer);
        if (held.ended)
            return;
        held.ended = true;
        this.#running--;
        this.#free++;
        if (held.lost) {
            this.#held.delete(held.key);
            this.#log.info(`job ${held.job.id} attempt ${held.job.attempt} ended after its lease was lost; result dropped`);
        }
        else {
            held.result = result;
            this.#pending.set(held.key, result);
            if (isRelease(result)) {
                this.#log.info(`job ${held.job.id} (${held.job.kind}) attempt ${held.job.attempt}: handler unfinished at shutdown; releasing the job`);
            }
            else if (result.outcome === "failed") {
                this.#log.warn(`job ${held.job.id} (${held.job.kind}) attempt ${held.job.attempt} failed: ${result.error ?? ""}`);
            }
        }
        this.#changed.notify();
    }
    // Leases.
    async #heartbeatLoop() {
        const o = this.#opts;
        const t = this.#t;
        const backoff = new Backoff(100, Math.min(o.maxBackoffMs, o.leaseMs / 3));
        let delay = o.leaseMs / 3;
        for (;;) {
            await this.#wait(delay, this.#hbStop.signal);
            if (this.#hbStop.signal.aborted)
                return;
            delay = o.leaseMs / 3;
            const held = [...this.#held.values()].filter((h) => !h.lost);
            for (let i = 0; i < held.length; i += MAX_PER_REQUEST) {
                const chunk = held.slice(i, i + MAX_PER_REQUEST);
                const attempts = chunk.map((h) => {
                    const ref = { id: h.job.id, attempt: h.job.attempt };
                    if (h.job.lease_token)
                        ref.lease_token = h.job.lease_token;
                    return ref;
                });
                try {
                    // A heartbeat that takes half the lease is as good as lost.
                    const out = await t.request("POST", "/v1/heartbeat", { lease_ms: o.leaseMs, attempts }, { timeoutMs: Math.max(2000, o.leaseMs / 2) });
                    backoff.reset();
                    this.#applyHeartbeat(chunk, out.lost ?? [], out.cancel_requested ?? []);
                }
                catch (e) {
                    delay = backoff.next();
                    this.#log.warn(`heartbeat of ${chunk.length} jobs: ${e.message}; retrying in ${Math.round(delay)} ms`);
                    break;
                }
            }
        }
    }
    #applyHeartbeat(chunk, lost, cancel) {
        const byId = new Map();
        for (const h of chunk) {
            const list = byId.get(h.job.id) ?? [];
            list.push(h);
            byId.set(h.job.id, list);
        }
        for (const id of lost) {
            const entries = (byId.get(id) ?? []).sort((a, b) => a.job.attempt - b.job.attempt);
            // With two attempts of one job held (an old one rescued and claimed again here), the older one is lost.
            for (const h of entries.length > 1 ? entries.slice(0, -1) : entries)
                this.#lose(h);
        }
        for (const id of cancel) {
            for (const h of byId.get(id) ?? []) {
                this.#log.info(`job ${id}: cancel requested`);
                this.#interrupt(h, "cancel_requested");
            }
        }
    }
    #lose(h) {
        h.lost = true;
        if (h.ended) {
            // Most often its result landed while this heartbeat was on its way.
            this.#pending.delete(h.key);
            this.#held.delete(h.key);
            this.#changed.notify();
            return;
        }
        this.#log.warn(`job ${h.job.id} attempt ${h.job.attempt}: lease lost while running (the job runs again elsewhere); stopping it`);
        this.#interrupt(h, "lease_lost");
    }
    // Results.
    async #finishLoop() {
        const t = this.#t;
        const backoff = new Backoff(100, this.#opts.maxBackoffMs);
        // After the server refused a batch (a rejected request stores nothing),
        // its results are sent one at a time to find the bad one.
        let suspects = new Set();
        for (;;) {
            while (this.#pending.size === 0 && !this.#finisherStop)
                await this.#changed.wait();
            if (this.#pending.size === 0)
                return;
            suspects = new Set([...suspects].filter((k) => this.#pending.has(k)));
            const first = suspects.values().next();
            const keys = !first.done ? [first.value] : this.#nextBatch();
            const batch = keys.map((k) => this.#pending.get(k));
            // A request holds releases only, or results only.
            const release = isRelease(batch[0]);
            try {
                let out;
                if (release) {
                    const attempts = batch.map((r) => {
                        const ref = { id: r.id, attempt: r.attempt };
                        if (r.lease_token)
                            ref.lease_token = r.lease_token;
                        return ref;
                    });
                    out = await t.request("POST", "/v1/release", { attempts });
                }
                else {
                    out = await t.request("POST", "/v1/finish", this.#compactFinish ? compactResults(batch) : { results: batch });
                }
                backoff.reset();
                const rejected = new Set(out.rejected ?? []);
                const refused = new Map((out.refused ?? []).map((f) => [f.id, f]));
                for (const r of batch) {
                    if (rejected.has(r.id)) {
                        this.#log.warn(`${release ? "release" : "result"} of job ${r.id} attempt ${r.attempt} rejected: the server no longer holds that attempt (lease lost, or already reported)`);
                    }
                    // The store could not hold the result (a value it refuses): the
                    // job did not complete. recorded says whether its failed attempt
                    // was written in place of the result.
                    const f = refused.get(r.id);
                    if (f) {
                        this.#log.error(`result of job ${r.id} attempt ${r.attempt} refused by the store: ${f.error}; ${f.recorded ? "recorded as a failed attempt" : "not recorded either (the job runs again after its lease)"}`);
                    }
                }
                this.#settle(keys);
            }
            catch (e) {
                if (release && e instanceof NotFoundError) {
                    // A server older than /v1/release: fail the attempts with an
                    // immediate retry instead, as workers did before.
                    this.#log.warn(`releasing ${batch.length} jobs: ${e.message}; reporting them failed instead`);
                    const now = new Date();
                    for (const k of keys) {
                        const held = this.#held.get(k);
                        if (this.#pending.has(k) && held) {
                            this.#pending.set(k, this.#failure(held.job, "worker shut down before the handler finished", "", now));
                        }
                    }
                    continue;
                }
                if (e instanceof ValidationError || e instanceof PayloadTooLargeError) {
                    if (batch.length > 1) {
                        suspects = new Set(keys);
                        continue;
                    }
                    this.#log.error(`result of job ${keys[0]} refused: ${e.message}; dropped (the job runs again after its lease)`);
                    this.#settle(keys);
                    continue;
                }
                if (this.#hurry && this.#finisherStop) {
                    this.#log.error(`could not report ${this.#pending.size} results: ${e.message} (their jobs run again after their leases)`);
                    return;
                }
                const delay = backoff.next();
                this.#log.warn(`reporting ${batch.length} results: ${e.message}; retrying in ${Math.round(delay)} ms`);
                // A second signal (hurry) cuts the wait short for one last try.
                await this.#hurried.wait(delay);
            }
        }
    }
    /** The keys of the next request: pending results or releases, of the kind of the oldest pending one. */
    #nextBatch() {
        const release = isRelease(this.#pending.values().next().value);
        const keys = [];
        for (const [k, r] of this.#pending) {
            if (isRelease(r) !== release)
                continue;
            keys.push(k);
            if (keys.length === MAX_PER_REQUEST)
                break;
        }
        return keys;
    }
    #settle(keys) {
        for (const k of keys) {
            this.#pending.delete(k);
            this.#held.delete(k);
        }
        this.#changed.notify();
    }
    // Shutting down.
    async #shutdown() {
        const o = this.#opts;
        this.#stopping = true;
        this.#changed.notify();
        this.#claimAbort.abort(); // breaks the long polls; no claim starts after
        await Promise.all(this.#loops.claim);
        const deadline = Date.now() + o.shutdownTimeoutMs;
        while (this.#running > 0 && !this.#hurry && Date.now() < deadline) {
            await this.#changed.wait(Math.min(200, Math.max(1, deadline - Date.now())));
        }
        const running = [...this.#held.values()].filter((h) => !h.ended);
        if (running.length > 0) {
            this.#log.warn(`${running.length} handlers still running after ${o.shutdownTimeoutMs} ms: aborting them`);
            for (const h of running)
                this.#interrupt(h, "shutdown");
            // A moment to react, then the attempts still running are released:
            // their jobs are available again at once, with their attempts undone,
            // rather than after their leases (the abandoned handlers' later ends
            // are ignored).
            const grace = Date.now() + 1000;
            while (this.#running > 0 && Date.now() < grace)
                await this.#changed.wait(50);
            for (const h of running)
                this.#end(h, this.#releaseOf(h.job));
        }
        this.#finisherStop = true;
        this.#changed.notify();
        const finisher = this.#loops.finisher;
        const finished = await within(finisher, Math.max(10_000, o.maxBackoffMs * 2));
        if (!finished) {
            this.#hurry = true;
            this.#changed.notify();
            this.#hurried.notify();
            await within(finisher, o.leaseMs);
        }
        this.#hbStop.abort();
        await this.#loops.heartbeat;
        this.#log.info(`worker ${this.workerId} stopped`);
    }
}
//# sourceMappingURL=worker.js.map