// The server's OpenAPI document for the SDK's tests: its operations, a check
// of a JSON value against a schema (the parts of JSON Schema the document
// uses), and a sample value of a schema, handed to the SDK as an answer.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repo } from "./helpers.js";

type Schema = Record<string, unknown>;
const doc = JSON.parse(readFileSync(join(repo, "internal", "app", "server", "openapi.json"), "utf8")) as {
  paths: Record<string, Record<string, Schema>>;
  components: { schemas: Record<string, Schema> };
};

export interface Operation {
  id: string;
  method: string;
  path: string;
  spec: Schema;
}

export function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(item)) {
      if (["get", "post", "put", "delete", "patch"].includes(m)) out.push({ id: op["operationId"] as string, method: m.toUpperCase(), path, spec: op });
    }
  }
  return out;
}

export function matches(op: Operation, method: string, path: string): boolean {
  const pattern = "^" + op.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+") + "$";
  return op.method === method && new RegExp(pattern).test(path);
}

export function bodySchema(op: Operation): Schema | undefined {
  const b = op.spec["requestBody"] as { content: Record<string, { schema: Schema }> } | undefined;
  return b?.content["application/json"]?.schema;
}

export function queryParams(op: Operation): Set<string> {
  const params = (op.spec["parameters"] ?? []) as Array<{ name: string; in: string }>;
  return new Set(params.filter((p) => p.in === "query").map((p) => p.name));
}

export function answerSchema(op: Operation): Schema | undefined {
  const responses = op.spec["responses"] as Record<string, { content?: Record<string, { schema: Schema }> }>;
  for (const s of ["200", "201", "202"]) {
    const r = responses[s];
    if (r) return r.content?.["application/json"]?.schema;
  }
  return undefined;
}

function resolve(s: Schema): Schema {
  while (typeof s["$ref"] === "string") s = doc.components.schemas[(s["$ref"] as string).split("/").pop()!]!;
  return s;
}

/** What makes value invalid against schema s, as "path: why" lines. */
export function errors(value: unknown, schema: Schema, where = "$"): string[] {
  const s = resolve(schema);
  const out: string[] = [];
  if (value === null && s["nullable"]) return out;
  for (const sub of (s["allOf"] ?? []) as Schema[]) out.push(...errors(value, sub, where));
  if (s["anyOf"] && (s["anyOf"] as Schema[]).every((sub) => errors(value, sub, where).length > 0)) out.push(`${where}: matches none of anyOf`);
  if (s["not"] && errors(value, s["not"] as Schema, where).length === 0) out.push(`${where}: matches what \`not\` excludes`);
  if (s["enum"] && !(s["enum"] as unknown[]).includes(value)) out.push(`${where}: ${JSON.stringify(value)} not in the enum`);
  const t = s["type"];
  const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
  if (t === "object" && !isObject) return [...out, `${where}: want an object`];
  if (t !== undefined && t !== "object" && isObject) return [...out, `${where}: want ${String(t)}, got an object`];
  if (isObject) {
    const v = value as Record<string, unknown>;
    const props = (s["properties"] ?? {}) as Record<string, Schema>;
    for (const r of (s["required"] ?? []) as string[]) if (!(r in v)) out.push(`${where}: ${r} is required`);
    const extra = s["additionalProperties"];
    for (const [k, x] of Object.entries(v)) {
      if (props[k]) out.push(...errors(x, props[k], `${where}.${k}`));
      else if (extra === false) out.push(`${where}: ${k} is not a property`);
      else if (typeof extra === "object" && extra !== null) out.push(...errors(x, extra as Schema, `${where}.${k}`));
    }
  } else if (t === "array") {
    if (!Array.isArray(value)) return [...out, `${where}: want an array`];
    value.forEach((x, i) => out.push(...errors(x, (s["items"] ?? {}) as Schema, `${where}[${i}]`)));
  } else if (t === "string") {
    if (typeof value !== "string") out.push(`${where}: want a string, got ${JSON.stringify(value)}`);
    else if (typeof s["pattern"] === "string" && !new RegExp(s["pattern"], "u").test(value)) out.push(`${where}: ${value} does not match ${s["pattern"]}`);
  } else if (t === "integer" || t === "number") {
    if (typeof value !== "number" || (t === "integer" && !Number.isInteger(value))) out.push(`${where}: want ${t}, got ${JSON.stringify(value)}`);
    else if ((typeof s["minimum"] === "number" && value < s["minimum"]) || (typeof s["maximum"] === "number" && value > s["maximum"])) out.push(`${where}: ${value} out of range`);
  } else if (t === "boolean" && typeof value !== "boolean") {
    out.push(`${where}: want a boolean`);
  }
  return out;
}

/** A value of schema s with every property set. */
export function sample(schema: Schema): unknown {
  const s = resolve(schema);
  if (s["allOf"]) return Object.assign({}, ...(s["allOf"] as Schema[]).map((x) => sample(x)));
  if (s["anyOf"]) return sample((s["anyOf"] as Schema[])[0]!);
  if (s["enum"]) return (s["enum"] as unknown[]).find((e) => e !== "") ?? (s["enum"] as unknown[])[0];
  switch (s["type"]) {
    case "object": {
      const props = s["properties"] as Record<string, Schema> | undefined;
      if (props) return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, sample(v)]));
      const extra = s["additionalProperties"];
      return { k: typeof extra === "object" && extra !== null ? sample(extra as Schema) : 1 };
    }
    case "array":
      return [sample((s["items"] ?? {}) as Schema)];
    case "string":
      return s["format"] === "date-time" ? "2026-01-02T03:04:05Z" : s["format"] === "byte" ? "aGk=" : "a";
    case "integer":
      return Math.max(1, typeof s["minimum"] === "number" ? s["minimum"] : 1);
    case "number":
      return 1.5;
    case "boolean":
      return true;
    default:
      return { any: "json" };
  }
}
