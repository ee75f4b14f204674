// Checks that dist/, the build committed with the package so that
// `npm install ./sdk/typescript` gives an importable package without
// building (npm links a local folder and installs none of its
// devDependencies, so it could not run tsc), is what `npm run build` makes
// of src/ now. It builds into .dist-check/ (beside dist/, so that the source
// maps' relative paths are the same), compares, and removes it.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(pkg, ".dist-check");
const dist = join(pkg, "dist");

function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath ?? e.path, e.name)))
    .sort();
}

rmSync(out, { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [join(pkg, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json", "--outDir", out], {
  cwd: pkg,
  stdio: "inherit",
});
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
const want = files(out);
const have = files(dist);
const differ = [...new Set([...want, ...have])].filter(
  (f) => !want.includes(f) || !have.includes(f) || !readFileSync(join(out, f)).equals(readFileSync(join(dist, f))),
);
rmSync(out, { recursive: true, force: true });
if (differ.length > 0) {
  console.error(`dist/ is out of date with src/ (${differ.join(", ")}): run \`npm run build\` and commit dist/`);
  process.exit(1);
}
console.log(`dist/ matches src/ (${want.length} files)`);
