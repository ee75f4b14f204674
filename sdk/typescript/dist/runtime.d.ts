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
export interface Logger {
    debug(msg: string): void;
    info(msg: string): void;
    warn(msg: string): void;
    error(msg: string): void;
}
/** The default logger: the console, without debug. */
export declare const consoleLogger: Logger;
/**
 * The life of a worker or consumer: started, it runs until stop() or a
 * signal, then shuts down; `done` settles once it has, rejecting with the
 * error that stopped it (fail()), if one did.
 */
export declare class Lifecycle {
    #private;
    readonly what: string;
    readonly log: Logger;
    readonly onSecondSignal: () => void;
    /** `what` names it in messages; `onSecondSignal` hurries a shutdown under way. */
    constructor(what: string, log: Logger, onSecondSignal: () => void);
    /** Whether a stop was asked for (by stop(), a signal or fail()). */
    get stopRequested(): boolean;
    /** Called by start(): shutdown runs once a stop is asked for. */
    begin(shutdown: () => Promise<void>): void;
    get done(): Promise<void>;
    /** start(), then until stopped with SIGTERM and SIGINT handled; rejects with the error that stopped it. */
    run(start: () => void, stopping: string): Promise<void>;
    /** Makes the signals stop it gracefully (a second one hurries); returns a function that removes the handlers. */
    handleSignals(signals: NodeJS.Signals[], stopping: string): () => void;
    /** Asks for the shutdown and resolves once it is done (also when it stopped on an error). */
    stop(): Promise<void>;
    /** Stops on an error, which done and run() reject with. */
    fail(e: unknown): void;
}
