/**
 * What the worker and the consumer share: backoff, the wake-up of waiting
 * loops, bounded waits, and the cutting of error texts to the server's
 * limits.
 */
/** Exponential backoff with jitter: each delay is drawn from the upper half of a window that doubles after every failure, up to cap. */
export class Backoff {
    baseMs;
    capMs;
    failures = 0;
    constructor(baseMs = 100, capMs = 10_000) {
        this.baseMs = baseMs;
        this.capMs = capMs;
    }
    next() {
        const window = Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.failures, 30));
        this.failures++;
        return window / 2 + Math.random() * (window / 2);
    }
    reset() {
        this.failures = 0;
    }
}
/** A promise with its resolve function, for waking loops. */
export class Signal {
    #waiters = [];
    wait(ms) {
        return new Promise((resolve) => {
            let t;
            const done = () => {
                if (t)
                    clearTimeout(t);
                resolve();
            };
            this.#waiters.push(done);
            if (ms !== undefined)
                t = setTimeout(() => {
                    this.#waiters = this.#waiters.filter((w) => w !== done);
                    resolve();
                }, ms);
        });
    }
    notify() {
        const ws = this.#waiters;
        this.#waiters = [];
        for (const w of ws)
            w();
    }
}
export function byteLength(s) {
    return Buffer.byteLength(s, "utf8");
}
export function truncate(s, limit, keepTail = false) {
    const b = Buffer.from(s, "utf8");
    if (b.length <= limit)
        return s;
    // Decoding a cut buffer replaces a split character with U+FFFD, which the server accepts.
    if (keepTail)
        return "…" + b.subarray(b.length - (limit - 8)).toString("utf8");
    return b.subarray(0, limit - 8).toString("utf8") + "…";
}
/** Resolves true when p settles within ms, false otherwise; leaves no timer behind. */
export async function within(p, ms) {
    let t;
    try {
        return await Promise.race([p.then(() => true), new Promise((r) => (t = setTimeout(() => r(false), ms)))]);
    }
    finally {
        clearTimeout(t);
    }
}
/** The default logger: the console, without debug. */
export const consoleLogger = {
    debug: () => { },
    info: (m) => console.info(`drover: ${m}`),
    warn: (m) => console.warn(`drover: ${m}`),
    error: (m) => console.error(`drover: ${m}`),
};
/**
 * The life of a worker or consumer: started, it runs until stop() or a
 * signal, then shuts down; `done` settles once it has, rejecting with the
 * error that stopped it (fail()), if one did.
 */
export class Lifecycle {
    what;
    log;
    onSecondSignal;
    #stopRequested = new AbortController();
    #fatal = undefined;
    #done;
    /** `what` names it in messages; `onSecondSignal` hurries a shutdown under way. */
    constructor(what, log, onSecondSignal) {
        this.what = what;
        this.log = log;
        this.onSecondSignal = onSecondSignal;
    }
    /** Whether a stop was asked for (by stop(), a signal or fail()). */
    get stopRequested() {
        return this.#stopRequested.signal.aborted;
    }
    /** Called by start(): shutdown runs once a stop is asked for. */
    begin(shutdown) {
        this.#done = (async () => {
            const stopped = this.#stopRequested.signal;
            if (!stopped.aborted)
                await new Promise((r) => stopped.addEventListener("abort", () => r(), { once: true }));
            await shutdown();
            if (this.#fatal !== undefined)
                throw this.#fatal;
        })();
        // Marked handled here, so that one whose error nobody awaits does not
        // crash the process with an unhandled rejection; done still rejects.
        this.#done.catch(() => { });
    }
    get done() {
        if (!this.#done)
            return Promise.reject(new Error(`${this.what}: not started`));
        return this.#done;
    }
    /** start(), then until stopped with SIGTERM and SIGINT handled; rejects with the error that stopped it. */
    async run(start, stopping) {
        const remove = this.handleSignals(["SIGTERM", "SIGINT"], stopping);
        try {
            start();
            await this.done;
        }
        finally {
            remove();
        }
    }
    /** Makes the signals stop it gracefully (a second one hurries); returns a function that removes the handlers. */
    handleSignals(signals, stopping) {
        const on = (sig) => {
            if (this.stopRequested) {
                this.log.warn(`second ${sig}: not waiting for running handlers`);
                this.onSecondSignal();
                return;
            }
            this.log.info(`${sig}: ${stopping}`);
            void this.stop().catch(() => { });
        };
        for (const s of signals)
            process.on(s, on);
        return () => {
            for (const s of signals)
                process.off(s, on);
        };
    }
    /** Asks for the shutdown and resolves once it is done (also when it stopped on an error). */
    async stop() {
        if (!this.#stopRequested.signal.aborted)
            this.#stopRequested.abort();
        if (!this.#done)
            return;
        await this.#done.catch(() => { });
    }
    /** Stops on an error, which done and run() reject with. */
    fail(e) {
        if (this.#fatal === undefined)
            this.#fatal = e;
        if (!this.#stopRequested.signal.aborted)
            this.#stopRequested.abort();
    }
}
//# sourceMappingURL=runtime.js.map