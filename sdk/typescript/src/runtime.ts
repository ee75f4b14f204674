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

