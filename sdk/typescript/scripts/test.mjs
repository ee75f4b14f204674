// Runs the tests (compiled to build/ by `npm run build:test`) with node's
// test runner, after building drover once from the repository root unless
// $DROVER_BIN names a binary.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, "..");
const repo = join(pkg, "..", "..");
let tmp;
if (!process.env.DROVER_BIN) {
  tmp = mkdtempSync(join(tmpdir(), "drover-ts-bin-"));
  const bin = join(tmp, "drover");
  const b = spawnSync("go", ["build", "-o", bin, "./cmd/drover"], { cwd: repo, stdio: "inherit" });
  if (b.status !== 0) process.exit(b.status ?? 1);
  process.env.DROVER_BIN = bin;
}
// The compiled tests import the package by its name: from build/test that is
// this package itself (its dist/); scripts/sdk-typescript.sh copies them
// into a project that installed the packed tarball and names them here.
const dir = process.env["DROVER_TS_TESTS"] ?? join(pkg, "build", "test");
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".test.js"))
  .map((f) => join(dir, f));
const r = spawnSync(process.execPath, ["--test", ...process.argv.slice(2), ...files], { stdio: "inherit", env: process.env });
if (tmp) rmSync(tmp, { recursive: true, force: true });
process.exit(r.status ?? 1);
