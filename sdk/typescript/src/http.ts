import { ConnectionError, DroverError, errorForStatus } from "./errors.js";

export const VERSION = "0.1.0";

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined> | undefined;
  /** Milliseconds before the request is abandoned (a ConnectionError). */
  timeoutMs?: number | undefined;
  /** Aborts the request (a ConnectionError). */
  signal?: AbortSignal | undefined;
}

/** Sends JSON requests to one Drover server with a bearer token, over the global fetch. */
export class Transport {
  readonly base: string;
  readonly #token: string;
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
  }

  /**
   * Sends one request and returns the decoded JSON answer. Throws a
   * DroverError subclass for an error answer and ConnectionError when no
   * answer arrived.
   */
  async request<T>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
    let target = this.base + path;
    if (opts.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(opts.query)) if (v !== undefined && v !== "") q.set(k, String(v));
      const s = q.toString();
      if (s) target += "?" + s;
    }
    const headers: Record<string, string> = {
      Authorization: "Bearer " + this.#token,
      Accept: "application/json",
      // Sent with every request (the server wants it on every body; a GET ignores it).
      "Content-Type": "application/json",
      "User-Agent": `drover-typescript/${VERSION}`,
    };
    let data: string | undefined;
    if (body !== undefined || method === "POST") data = JSON.stringify(body ?? {});
    const timeout = AbortSignal.timeout(opts.timeoutMs ?? this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    let status: number;
    let raw: string;
    try {
      const resp = await fetch(target, { method, headers, body: data ?? null, signal });
      status = resp.status;
      raw = await resp.text();
    } catch (e) {
      const why = e instanceof Error ? describe(e) : String(e);
      throw new ConnectionError(why, undefined, path, { cause: e });
    }
    return decode<T>(status, raw, path);
  }
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
