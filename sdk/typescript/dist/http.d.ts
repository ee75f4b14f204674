export declare const VERSION = "0.1.0";
export interface RequestOptions {
    query?: Record<string, string | number | boolean | undefined> | undefined;
    /** Milliseconds before the request is abandoned (a ConnectionError). */
    timeoutMs?: number | undefined;
    /** Aborts the request (a ConnectionError). */
    signal?: AbortSignal | undefined;
}
/**
 * Sends JSON requests to one Drover server with a bearer token, over
 * node:http or node:https with connections kept alive between requests.
 * The global fetch cost 3-4 times the CPU per request of a kept-alive
 * node:http request, most of a claim's or an ack's cost in a worker or
 * consumer.
 */
export declare class Transport {
    #private;
    readonly base: string;
    timeoutMs: number;
    constructor(url: string, token: string, timeoutMs?: number);
    /**
     * Sends one request and returns the decoded JSON answer. Throws a
     * DroverError subclass for an error answer and ConnectionError when no
     * answer arrived.
     */
    request<T>(method: string, path: string, body?: unknown, opts?: RequestOptions): Promise<T>;
}
