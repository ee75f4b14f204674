/**
 * What the worker and the consumer share: backoff, the wake-up of waiting
 * loops, bounded waits, and the cutting of error texts to the server's
 * limits.
 */

/** Exponential backoff with jitter: each delay is drawn from the upper half of a window that doubles after every failure, up to cap. */
export class Backoff {
  failures = 0;
  constructor(
    readonly baseMs = 100,
    readonly capMs = 10_000,
  ) {}
  next(): number {
    const window = Math.min(this.capMs, this.baseMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return window / 2 + Math.random() * (window / 2);
  }
  reset(): void {
    this.failures = 0;
  }
}

/** A promise with its resolve function, for waking loops. */
export class Signal {
  #waiters: Array<() => void> = [];
  wait(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      let t: ReturnType<typeof setTimeout> | undefined;
      const done = () => {
        if (t) clearTimeout(t);
        resolve();
      };
      this.#waiters.push(done);
      if (ms !== undefined) t = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== done);
        resolve();
      }, ms);
    });
  }
  notify(): void {
    const ws = this.#waiters;
    this.#waiters = [];
    for (const w of ws) w();
  }
}

export function byteLength(s: string): number {
  return Buffer.byteLength(s, "utf8");
}

export function truncate(s: string, limit: number, keepTail = false): string {
  const b = Buffer.from(s, "utf8");
  if (b.length <= limit) return s;
  // Decoding a cut buffer replaces a split character with U+FFFD, which the server accepts.
  if (keepTail) return "…" + b.subarray(b.length - (limit - 8)).toString("utf8");
  return b.subarray(0, limit - 8).toString("utf8") + "…";
}

/** Resolves true when p settles within ms, false otherwise; leaves no timer behind. */
export async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let t: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([p.then(() => true), new Promise<boolean>((r) => (t = setTimeout(() => r(false), ms)))]);
  } finally {
    clearTimeout(t);
  }
}


export interface Logger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

/** The default logger: the console, without debug. */
export const consoleLogger: Logger = {
  debug: () => {},
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
  readonly #stopRequested = new AbortController();
  #fatal: unknown = undefined;
  #done: Promise<void> | undefined;

  /** `what` names it in messages; `onSecondSignal` hurries a shutdown under way. */
  constructor(
    readonly what: string,
    readonly log: Logger,
    readonly onSecondSignal: () => void,
  ) {}

  /** Whether a stop was asked for (by stop(), a signal or fail()). */
  get stopRequested(): boolean {
    return this.#stopRequested.signal.aborted;
  }

  /** Called by start(): shutdown runs once a stop is asked for. */
  begin(shutdown: () => Promise<void>): void {
    this.#done = (async () => {
      const stopped = this.#stopRequested.signal;
      if (!stopped.aborted) await new Promise<void>((r) => stopped.addEventListener("abort", () => r(), { once: true }));
      await shutdown();
      if (this.#fatal !== undefined) throw this.#fatal;
    })();
    // Marked handled here, so that one whose error nobody awaits does not
    // crash the process with an unhandled rejection; done still rejects.
    this.#done.catch(() => {});
  }

  get done(): Promise<void> {
    if (!this.#done) return Promise.reject(new Error(`${this.what}: not started`));
    return this.#done;
  }

  /** start(), then until stopped with SIGTERM and SIGINT handled; rejects with the error that stopped it. */
  async run(start: () => void, stopping: string): Promise<void> {
    const remove = this.handleSignals(["SIGTERM", "SIGINT"], stopping);
    try {
      start();
      await this.done;
    } finally {
      remove();
    }
  }

  /** Makes the signals stop it gracefully (a second one hurries); returns a function that removes the handlers. */
  handleSignals(signals: NodeJS.Signals[], stopping: string): () => void {
    const on = (sig: NodeJS.Signals) => {
      if (this.stopRequested) {
        this.log.warn(`second ${sig}: not waiting for running handlers`);
        this.onSecondSignal();
        return;
      }
      this.log.info(`${sig}: ${stopping}`);
      void this.stop().catch(() => {});
    };
    for (const s of signals) process.on(s, on);
    return () => {
      for (const s of signals) process.off(s, on);
    };
  }

  /** Asks for the shutdown and resolves once it is done (also when it stopped on an error). */
  async stop(): Promise<void> {
    if (!this.#stopRequested.signal.aborted) this.#stopRequested.abort();
    if (!this.#done) return;
    await this.#done.catch(() => {});
  }

  /** Stops on an error, which done and run() reject with. */
  fail(e: unknown): void {
    if (this.#fatal === undefined) this.#fatal = e;
    if (!this.#stopRequested.signal.aborted) this.#stopRequested.abort();
  }
}
