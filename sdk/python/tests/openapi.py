"""The server's OpenAPI document for the SDK's tests: its operations, a
check of a JSON value against a schema (the parts of JSON Schema the
document uses), and a sample value of a schema, which the tests hand to the
SDK's decoders as a server's answer."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DOC_PATH = Path(__file__).resolve().parents[3] / "internal" / "app" / "server" / "openapi.json"
DOC: dict[str, Any] = json.loads(DOC_PATH.read_text())
METHODS = ("get", "post", "put", "delete", "patch")


@dataclass(frozen=True)
class Operation:
    id: str
    method: str
    path: str
    spec: dict[str, Any]

    def matches(self, method: str, path: str) -> bool:
        pattern = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(self.path))
        return method == self.method and re.fullmatch(pattern, path.split("?", maxsplit=1)[0]) is not None

    @property
    def body_schema(self) -> dict[str, Any] | None:
        body = self.spec.get("requestBody")
        return body["content"]["application/json"]["schema"] if body else None

    @property
    def query_params(self) -> set[str]:
        return {p["name"] for p in self.spec.get("parameters", []) if p.get("in") == "query"}

    @property
    def answer_schema(self) -> dict[str, Any] | None:
        for status in ("200", "201", "202"):
            r = self.spec["responses"].get(status)
            if r is not None:
                content = r.get("content", {}).get("application/json")
                return content["schema"] if content else None
        return None


def operations() -> list[Operation]:
    return [Operation(op["operationId"], m.upper(), path, op)
            for path, item in DOC["paths"].items() for m, op in item.items() if m in METHODS]


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = DOC["components"]["schemas"][name]
    return schema


def schema(name: str) -> dict[str, Any]:
    return resolve({"$ref": f"#/components/schemas/{name}"})


def errors(value: Any, s: dict[str, Any], where: str = "$") -> list[str]:
    """What makes value invalid against schema s, as "path: why" lines."""
    s = resolve(s)
    out: list[str] = []
    if value is None and s.get("nullable"):
        return out
    for sub in s.get("allOf", []):
        out += errors(value, sub, where)
    if "anyOf" in s and all(errors(value, sub, where) for sub in s["anyOf"]):
        out.append(f"{where}: matches none of anyOf")
    if "not" in s and not errors(value, s["not"], where):
        out.append(f"{where}: matches what `not` excludes")
    if "enum" in s and value not in s["enum"]:
        out.append(f"{where}: {value!r} not in {s['enum']}")
    t = s.get("type")
    if t == "object" and not isinstance(value, dict):
        return [*out, f"{where}: want an object, got {value!r}"]
    if t not in (None, "object") and isinstance(value, dict):
        return [*out, f"{where}: want {t}, got an object"]
    if isinstance(value, dict):  # typed "object", or a bare {"required": …} under `not`
        props = s.get("properties", {})
        for name in s.get("required", []):
            if name not in value:
                out.append(f"{where}: {name} is required")
        extra = s.get("additionalProperties", True)
        for k, v in value.items():
            if k in props:
                out += errors(v, props[k], f"{where}.{k}")
            elif extra is False:
                out.append(f"{where}: {k} is not a property")
            elif isinstance(extra, dict):
                out += errors(v, extra, f"{where}.{k}")
    elif t == "array":
        if not isinstance(value, list):
            return [*out, f"{where}: want an array, got {value!r}"]
        if len(value) < s.get("minItems", 0) or len(value) > s.get("maxItems", len(value)):
            out.append(f"{where}: {len(value)} items")
        for i, v in enumerate(value):
            out += errors(v, s.get("items", {}), f"{where}[{i}]")
    elif t == "string":
        if not isinstance(value, str):
            out.append(f"{where}: want a string, got {value!r}")
        elif "pattern" in s and not re.search(s["pattern"], value):
            out.append(f"{where}: {value!r} does not match {s['pattern']}")
    elif t in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, int if t == "integer" else (int, float)):
            out.append(f"{where}: want {t}, got {value!r}")
        elif value < s.get("minimum", value) or value > s.get("maximum", value):
            out.append(f"{where}: {value} out of range")
    elif t == "boolean" and not isinstance(value, bool):
        out.append(f"{where}: want a boolean, got {value!r}")
    return out


def sample(s: dict[str, Any]) -> Any:
    """A value of schema s with every property set, as full an answer as
    the server could give."""
    s = resolve(s)
    if "allOf" in s:
        merged: dict[str, Any] = {}
        for sub in s["allOf"]:
            v = sample(sub)
            if isinstance(v, dict):
                merged.update(v)
        return merged
    if "anyOf" in s:
        return sample(s["anyOf"][0])
    if "enum" in s:
        return next((e for e in s["enum"] if e != ""), s["enum"][0])
    t = s.get("type")
    if t == "object":
        props = s.get("properties")
        if props:
            return {k: sample(v) for k, v in props.items()}
        extra = s.get("additionalProperties")
        return {"k": sample(extra)} if isinstance(extra, dict) else {"k": 1}
    if t == "array":
        return [sample(s.get("items", {}))]
    if t == "string":
        fmt = s.get("format")
        return {"date-time": "2026-01-02T03:04:05Z", "byte": "aGk="}.get(fmt or "", "a")
    if t == "integer":
        return max(1, s.get("minimum", 1))
    if t == "number":
        return 1.5
    if t == "boolean":
        return True
    return {"any": "json"}
