import { ConnectionError, DroverError, errorForStatus } from "./errors.js";
export const VERSION = "0.1.0";
/** Sends JSON requests to one Drover server with a bearer token, over the global fetch. */
export class Transport {
    base;
    #token;
    timeoutMs;
    constructor(url, token, timeoutMs = 30_000) {
        let parsed;
        try {
            parsed = new URL(url);
        }
        catch {
            throw new TypeError(`url ${JSON.stringify(url)}: want http://host:port or https://host:port`);
        }
        if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
            throw new TypeError(`url ${JSON.stringify(url)}: want http://host:port or https://host:port`);
        }
        if (!token)
            throw new TypeError("token: required (make one with: drover serve token)");
        this.base = url.replace(/\/+$/, "");
        this.#token = token;
        this.timeoutMs = timeoutMs;
    }
    /**
     * Sends one request and returns the decoded JSON answer. Throws a
     * DroverError subclass for an error answer and ConnectionError when no
     * answer arrived.
     */
    async request(method, path, body, opts = {}) {
        let target = this.base + path;
        if (opts.query) {
            const q = new URLSearchParams();
            for (const [k, v] of Object.entries(opts.query))
                if (v !== undefined && v !== "")
                    q.set(k, String(v));
            const s = q.toString();
            if (s)
                target += "?" + s;
        }
        const headers = {
            Authorization: "Bearer " + this.#token,
            Accept: "application/json",
            // Sent with every request (the server wants it on every body; a GET ignores it).
            "Content-Type": "application/json",
            "User-Agent": `drover-typescript/${VERSION}`,
        };
        let data;
        if (body !== undefined || method === "POST")
            data = JSON.stringify(body ?? {});
        const timeout = AbortSignal.timeout(opts.timeoutMs ?? this.timeoutMs);
        const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
        let status;
        let raw;
        try {
            const resp = await fetch(target, { method, headers, body: data ?? null, signal });
            status = resp.status;
            raw = await resp.text();
        }
        catch (e) {
            const why = e instanceof Error ? describe(e) : String(e);
            throw new ConnectionError(why, undefined, path, { cause: e });
        }
        return decode(status, raw, path);
    }
}
function describe(e) {
    if (e.name === "TimeoutError")
        return "timed out";
    if (e.name === "AbortError")
        return "aborted";
    const cause = e.cause;
    if (cause instanceof Error)
        return `${e.message}: ${cause.message}`;
    return e.message;
}
function decode(status, raw, path) {
    let payload = undefined;
    try {
        payload = raw ? JSON.parse(raw) : undefined;
    }
    catch {
        payload = undefined;
    }
    if (status >= 200 && status < 300) {
        if (payload === undefined && raw) {
            throw new DroverError(`answer is not JSON: ${raw.slice(0, 200)}`, status, path);
        }
        return payload;
    }
    let msg = "";
    if (payload && typeof payload === "object" && typeof payload.error === "string") {
        msg = payload.error;
    }
    if (!msg)
        msg = raw.slice(0, 500).trim() || `HTTP ${status}`;
    throw errorForStatus(status, msg, path);
}
//# sourceMappingURL=http.js.map