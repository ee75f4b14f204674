// Starts real `drover serve` processes for the tests: the binary from
// $DROVER_BIN (scripts/test.mjs builds one), a tokens file made with
// `drover serve token`, a free loopback port and a fresh store: a temporary
// SQLite file, and PostgreSQL too when $DROVER_TEST_DATABASE_URL is set (in a
// schema of its own).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { appendFileSync, mkdtempSync, openSync, closeSync } from "node:fs";
import { createServer as createHTTPServer, type Server as HTTPServer } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { Client } from "@drover/client";

/**
 * The repository: $DROVER_REPO when the compiled tests run from a project
 * that installed the package (scripts/sdk-typescript.sh), else the checkout
 * they were built in (build/test is four levels below it).
 */
export const repo = process.env["DROVER_REPO"] ?? join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

export function droverBin(): string {
  const b = process.env["DROVER_BIN"];
  if (!b) throw new Error("set DROVER_BIN (npm test builds drover and sets it)");
  return b;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = typeof a === "object" && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export type Backend = "sqlite" | "postgres";

export function backends(): Backend[] {
  return process.env["DROVER_TEST_DATABASE_URL"] ? ["sqlite", "postgres"] : ["sqlite"];
}

/** One `drover serve` process, restartable on the same store and port. */
export class Server {
  readonly dir: string;
  readonly databaseUrl: string;
  readonly schema: string | undefined;
  port = 0;
  url = "";
  token = "";
  enqueueToken = "";
  workToken = "";
  proc: ChildProcess | undefined;
  readonly tokensFile: string;

  private constructor(readonly backend: Backend) {
    this.dir = mkdtempSync(join(tmpdir(), `drover-ts-${backend}-`));
    this.tokensFile = join(this.dir, "tokens");
    if (backend === "sqlite") {
      this.databaseUrl = `sqlite://${this.dir}/drover.db`;
      this.schema = undefined;
    } else {
      this.databaseUrl = process.env["DROVER_TEST_DATABASE_URL"]!;
      this.schema = "tssdk_" + randomBytes(4).toString("hex");
    }
  }

  static async start(backend: Backend = "sqlite"): Promise<Server> {
    const s = new Server(backend);
    s.port = await freePort();
    s.url = `http://127.0.0.1:${s.port}`;
    s.token = s.makeToken("admin", "admin");
    s.enqueueToken = s.makeToken("enqueuer", "enqueue");
    s.workToken = s.makeToken("worker", "work");
    if (backend === "postgres") {
      const m = spawnSync(droverBin(), ["migrate", ...s.storeArgs()], { encoding: "utf8" });
      if (m.status !== 0) throw new Error(`drover migrate: ${m.stderr}`);
    }
    await s.start();
    return s;
  }

  storeArgs(): string[] {
    const a = ["--database-url", this.databaseUrl];
    if (this.schema) a.push("--schema", this.schema);
    return a;
  }

  private makeToken(name: string, scope: string): string {
    const p = spawnSync(droverBin(), ["serve", "token", "--name", name, "--scope", scope], { encoding: "utf8" });
    if (p.status !== 0) throw new Error(`drover serve token: ${p.stderr}`);
    appendFileSync(this.tokensFile, p.stdout);
    const m = /(drv_\S+)/.exec(p.stderr);
    if (!m?.[1]) throw new Error(`no token in: ${p.stderr}`);
    return m[1];
  }

  async start(): Promise<void> {
    if (this.proc) throw new Error("server running already");
    const log = openSync(join(this.dir, "serve.log"), "a");
    const args = ["serve", "--listen", `127.0.0.1:${this.port}`, "--tokens", this.tokensFile, "--max-wait", "10s", ...this.storeArgs()];
    const proc = spawn(droverBin(), args, { stdio: ["ignore", log, log] });
    closeSync(log);
    this.proc = proc;
    let exited = false;
    proc.once("exit", () => (exited = true));
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (exited) throw new Error(`drover serve exited: see ${this.dir}/serve.log`);
      try {
        const r = await fetch(this.url + "/readyz", { headers: { Authorization: "Bearer " + this.token }, signal: AbortSignal.timeout(2000) });
        await r.text();
        if (r.status === 200) return;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) throw new Error("drover serve did not become ready");
      await sleep(50);
    }
  }

  async stop(sig: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const p = this.proc;
    if (!p) return;
    this.proc = undefined;
    if (p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((r) => p.once("exit", () => r()));
    p.kill(sig);
    const t = setTimeout(() => p.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(t);
  }

  client(token?: string): Client {
    return new Client(this.url, token ?? this.token);
  }

  /** `drover jobs list --json` against the same store. */
  jobsListCli(...args: string[]): Array<{ id: number; state: string }> {
    const p = spawnSync(droverBin(), ["jobs", "list", "--json", "--limit", "10000", ...this.storeArgs(), ...args], { encoding: "utf8" });
    if (p.status !== 0) throw new Error(`drover jobs list: ${p.stderr}`);
    return JSON.parse(p.stdout) as Array<{ id: number; state: string }>;
  }
}

export function newQueue(): string {
  return "q-" + randomBytes(6).toString("hex");
}

export async function states(client: Client, queue: string): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for await (const j of client.jobs({ queue })) out.set(j.id, j.state);
  return out;
}

export async function allIn(client: Client, queue: string, state: string): Promise<boolean> {
  const s = await states(client, queue);
  return s.size > 0 && [...s.values()].every((v) => v === state);
}

/** A logger that keeps quiet (tests provoke failures on purpose). */
export const quiet = { debug() {}, info() {}, warn() {}, error() {} };

/**
 * An HTTP proxy in front of a server that holds the requests whose path
 * matches `slow` for `delayMs` before forwarding them: a server that
 * answers those slowly, as a loaded one does. It counts the answered
 * requests by path.
 */
export class DelayProxy {
  readonly answered = new Map<string, number>();
  url = "";
  #server: HTTPServer | undefined;

  private constructor(
    readonly upstream: string,
    readonly delayMs: number,
    readonly slow: RegExp,
  ) {}

  static async start(upstream: string, delayMs: number, slow: RegExp): Promise<DelayProxy> {
    const p = new DelayProxy(upstream, delayMs, slow);
    const server = createHTTPServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "/";
        const forward = async () => {
          try {
            const headers: Record<string, string> = {};
            for (const h of ["authorization", "content-type", "accept", "user-agent"]) {
              const v = req.headers[h];
              if (typeof v === "string") headers[h] = v;
            }
            const body = chunks.length > 0 ? Buffer.concat(chunks) : null;
            const r = await fetch(p.upstream + path, { method: req.method ?? "GET", headers, body });
            const out = Buffer.from(await r.arrayBuffer());
            p.answered.set(path, (p.answered.get(path) ?? 0) + 1);
            res.writeHead(r.status, { "content-type": r.headers.get("content-type") ?? "application/json" }).end(out);
          } catch (e) {
            res.writeHead(502).end(String(e));
          }
        };
        if (p.slow.test(path)) setTimeout(() => void forward(), p.delayMs);
        else void forward();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const a = server.address();
    p.url = `http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}`;
    p.#server = server;
    return p;
  }

  /** Answered requests whose path ends with `suffix`. */
  count(suffix: string): number {
    let n = 0;
    for (const [path, c] of this.answered) if (path.endsWith(suffix)) n += c;
    return n;
  }

  async stop(): Promise<void> {
    const s = this.#server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
}
