import { Agent as HTTPAgent, request as httpRequest } from "node:http";
import { Agent as HTTPSAgent, request as httpsRequest } from "node:https";
import { ConnectionError, DroverError, errorForStatus } from "./errors.js";
export const VERSION = "0.1.0";
/**
 * How long an idle kept-alive connection is kept, ms: under drover serve's
 * idle timeout (2 minutes), so that the client, not the server, closes it.
 */
const IDLE_SOCKET_MS = 60_000;
/**
 * Sends JSON requests to one Drover server with a bearer token, over
 * node:http or node:https with connections kept alive between requests.
 * The global fetch cost 3-4 times the CPU per request of a kept-alive
 * node:http request, most of a claim's or an ack's cost in a worker or
 * consumer.
 */
export class Transport {
    base;
    #token;
    #send;
    #agent;
    #host;
    #port;
    #prefix;
    #userAgent = `drover-typescript/${VERSION}`;
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
        const tls = parsed.protocol === "https:";
        this.#send = tls ? httpsRequest : httpRequest;
        const agentOptions = { keepAlive: true, timeout: IDLE_SOCKET_MS };
        this.#agent = tls ? new HTTPSAgent(agentOptions) : new HTTPAgent(agentOptions);
        // URL keeps an IPv6 address in brackets, which a socket's host is without.
        this.#host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
        this.#port = parsed.port ? Number(parsed.port) : tls ? 443 : 80;
        this.#prefix = parsed.pathname.replace(/\/+$/, "");
    }
    /**
     * Sends one request and returns the decoded JSON answer. Throws a
     * DroverError subclass for an error answer and ConnectionError when no
     * answer arrived.
     */
    async request(method, path, body, opts = {}) {
        let target = this.#prefix + path;
        if (opts.query) {
            const q = new URLSearchParams();
            for (const [k, v] of Object.entries(opts.query))
                if (v !== undefined && v !== "")
                    q.set(k, String(v));
            const s = q.toString();
            if (s)
                target += "?" + s;
        }
        let data;
        if (body !== undefined || method === "POST")
            data = Buffer.from(JSON.stringify(body ?? {}), "utf8");
        const headers = {
            Authorization: "Bearer " + this.#token,
            Accept: "application/json",
            // Sent with every request (the server wants it on every body; a GET ignores it).
            "Content-Type": "application/json",
            "User-Agent": this.#userAgent,
        };
        if (data)
            headers["Content-Length"] = data.length;
        let answer;
        try {
            answer = await this.#exchange({ method, target, headers, data, opts });
        }
        catch (e) {
            const why = e instanceof Error ? describe(e) : String(e);
            throw new ConnectionError(why, undefined, path, { cause: e });
        }
        return decode(answer.status, answer.raw, path);
    }
    /**
     * Sends a request and reads its whole answer, once more on a fresh
     * connection when a kept-alive one turns out closed before any answer:
     * the server closed it as idle, so it read nothing of the request.
     */
    async #exchange(out) {
        for (let tries = 0;; tries++) {
            try {
                return await this.#once(out);
            }
            catch (e) {
                if (!(e instanceof StaleConnection) || tries > 0)
                    throw e instanceof StaleConnection ? e.cause : e;
            }
        }
    }
    #once({ method, target, headers, data, opts }) {
        const signal = opts.signal;
        if (signal?.aborted)
            return Promise.reject(abortError());
        return new Promise((resolve, reject) => {
            let settled = false;
            let answered = false;
            const req = this.#send({ agent: this.#agent, host: this.#host, port: this.#port, method, path: target, headers });
            const finish = (e, out) => {
                if (settled)
                    return;
                settled = true;
                clearTimeout(timer);
                signal?.removeEventListener("abort", onAbort);
                if (e) {
                    req.destroy();
                    const resetCode = e.code;
                    const stale = req.reusedSocket && !answered && (resetCode === "ECONNRESET" || resetCode === "EPIPE");
                    reject(stale ? new StaleConnection(e) : e);
                }
                else
                    resolve(out);
            };
            const onAbort = () => finish(abortError());
            const timer = setTimeout(() => finish(timeoutError()), opts.timeoutMs ?? this.timeoutMs);
            signal?.addEventListener("abort", onAbort, { once: true });
            req.on("error", (e) => finish(e));
            req.on("response", (res) => {
                answered = true;
                const chunks = [];
                res.on("data", (c) => chunks.push(c));
                res.on("error", (e) => finish(e));
                res.on("aborted", () => finish(new Error("connection closed before the whole answer arrived")));
                res.on("end", () => {
                    const raw = chunks.length === 1 ? chunks[0].toString("utf8") : Buffer.concat(chunks).toString("utf8");
                    finish(undefined, { status: res.statusCode ?? 0, raw });
                });
            });
            req.end(data);
        });
    }
}
/** A kept-alive connection found closed before an answer: the request is sent again on another. */
class StaleConnection extends Error {
    cause;
    constructor(cause) {
        super(cause.message);
        this.cause = cause;
    }
}
function abortError() {
    const e = new Error("aborted");
    e.name = "AbortError";
    return e;
}
function timeoutError() {
    const e = new Error("timed out");
    e.name = "TimeoutError";
    return e;
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