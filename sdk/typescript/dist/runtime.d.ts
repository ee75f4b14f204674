/**
 * What the worker and the consumer share: backoff, the wake-up of waiting
 * loops, bounded waits, and the cutting of error texts to the server's
 * limits.
 */
/** Exponential backoff with jitter: each delay is drawn from the upper half of a window that doubles after every failure, up to cap. */
export declare class Backoff {
    readonly baseMs: number;
    readonly capMs: number;
    failures: number;
    constructor(baseMs?: number, capMs?: number);
    next(): number;
    reset(): void;
}
/** A promise with its resolve function, for waking loops. */
export declare class Signal {
    #private;
    wait(ms?: number): Promise<void>;
    notify(): void;
}
export declare function byteLength(s: string): number;
export declare function truncate(s: string, limit: number, keepTail?: boolean): string;
/** Resolves true when p settles within ms, false otherwise; leaves no timer behind. */
export declare function within(p: Promise<unknown>, ms: number): Promise<boolean>;
