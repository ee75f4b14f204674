import { Agent as HTTPAgent, request as httpRequest } from "node:http";
import { Agent as HTTPSAgent, request as httpsRequest } from "node:https";
import { ConnectionError, DroverError, errorForStatus } from "./errors.js";

export const VERSION = "0.1.0";

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined> | undefined;
  /** Milliseconds before the request is abandoned (a ConnectionError). */
  timeoutMs?: number | undefined;
  /** Aborts the request (a ConnectionError). */
  signal?: AbortSignal | undefined;
}

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
  readonly base: string;
  readonly #token: string;
  readonly #send: typeof httpRequest;
  readonly #agent: HTTPAgent;
  readonly #host: string;
  readonly #port: number;
  readonly #prefix: string;
  readonly #userAgent = `drover-typescript/${VERSION}`;
  timeoutMs: number;

  constructor(url: string, token: string, timeoutMs = 30_000) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new TypeError(`url ${JSON.stringify(url)}: want http://host:port or https://host:port`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new TypeError(`url ${JSON.stringify(url)}: want http://host:port or https://host:port`);
    }
    if (!token) throw new TypeError("token: required (make one with: drover serve token)");
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
  async request<T>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
    let target = this.#prefix + path;
    if (opts.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.query)) if (v !== undefined && v !== "") q.set(k, String(v));
      const s = q.toString();
      if (s) target += "?" + s;
    }
    let data: Buffer | undefined;
    if (body !== undefined || method === "POST") data = Buffer.from(JSON.stringify(body ?? {}), "utf8");
    const headers: Record<string, string | number> = {
      Authorization: "Bearer " + this.#token,
      Accept: "application/json",
      // Sent with every request (the server wants it on every body; a GET ignores it).
      "Content-Type": "application/json",
      "User-Agent": this.#userAgent,
    };
    if (data) headers["Content-Length"] = data.length;
    let answer: { status: number; raw: string };
    try {
      answer = await this.#exchange({ method, target, headers, data, opts });
    } catch (e) {
      const why = e instanceof Error ? describe(e) : String(e);
      throw new ConnectionError(why, undefined, path, { cause: e });
    }
    return decode<T>(answer.status, answer.raw, path);
  }

  /**
   * Sends a request and reads its whole answer, once more on a fresh
   * connection when a kept-alive one turns out closed before any answer:
   * the server closed it as idle, so it read nothing of the request.
   */
  async #exchange(out: Outgoing): Promise<{ status: number; raw: string }> {
    for (let tries = 0; ; tries++) {
      try {
        return await this.#once(out);
      } catch (e) {
        if (!(e instanceof StaleConnection) || tries > 0) throw e instanceof StaleConnection ? e.cause : e;
      }
    }
  }

  #once({ method, target, headers, data, opts }: Outgoing): Promise<{ status: number; raw: string }> {
    const signal = opts.signal;
    if (signal?.aborted) return Promise.reject(abortError());
    return new Promise((resolve, reject) => {
      let settled = false;
      let answered = false;
      const req = this.#send({ agent: this.#agent, host: this.#host, port: this.#port, method, path: target, headers });
      const finish = (e: Error | undefined, out?: { status: number; raw: string }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (e) {
          req.destroy();
          const resetCode = (e as NodeJS.ErrnoException).code;
          const stale = req.reusedSocket && !answered && (resetCode === "ECONNRESET" || resetCode === "EPIPE");
          reject(stale ? new StaleConnection(e) : e);
        } else resolve(out!);
      };
      const onAbort = () => finish(abortError());
      const timer = setTimeout(() => finish(timeoutError()), opts.timeoutMs ?? this.timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("error", (e) => finish(e));
      req.on("response", (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", (e) => finish(e));
        res.on("aborted", () => finish(new Error("connection closed before the whole answer arrived")));
        res.on("end", () => {
          const raw = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8");
          finish(undefined, { status: res.statusCode ?? 0, raw });
        });
      });
      req.end(data);
    });
  }
}

/** A request ready to send: the path with its query, the headers and the encoded body. */
interface Outgoing {
  method: string;
  target: string;
  headers: Record<string, string | number>;
  data: Buffer | undefined;
  opts: RequestOptions;
}

/** A kept-alive connection found closed before an answer: the request is sent again on another. */
class StaleConnection extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}

function abortError(): Error {
  const e = new Error("aborted");
  e.name = "AbortError";
  return e;
}

function timeoutError(): Error {
  const e = new Error("timed out");
  e.name = "TimeoutError";
  return e;
}

function describe(e: Error): string {
  if (e.name === "TimeoutError") return "timed out";
  if (e.name === "AbortError") return "aborted";
  const cause = (e as { cause?: unknown }).cause;
  if (cause instanceof Error) return `${e.message}: ${cause.message}`;
  return e.message;
}

function decode<T>(status: number, raw: string, path: string): T {
  let payload: unknown = undefined;
  try {
    payload = raw ? JSON.parse(raw) : undefined;
  } catch {
    payload = undefined;
  }
  if (status >= 200 && status < 300) {
    if (payload === undefined && raw) {
      throw new DroverError(`answer is not JSON: ${raw.slice(0, 200)}`, status, path);
    }
    return payload as T;
  }
  let msg = "";
  if (payload && typeof payload === "object" && typeof (payload as { error?: unknown }).error === "string") {
    msg = (payload as { error: string }).error;
  }
  if (!msg) msg = raw.slice(0, 500).trim() || `HTTP ${status}`;
  throw errorForStatus(status, msg, path);
}
