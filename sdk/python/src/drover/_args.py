"""Decoding a job's JSON args into the type a handler's first parameter is
annotated with: a dataclass (nested dataclasses and lists of them too), a
pydantic model when pydantic is installed, or the plain JSON value."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, Union


def decode_args(tp: Any, value: Any) -> Any:
    """Returns value converted to tp; None or Any leave it as is."""
    if tp is None or tp is Any:
        return value
    return _convert(tp, value)


def _convert(tp: Any, value: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        inner = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        if len(inner) == 1:
            return _convert(inner[0], value)
        return value
    if origin in (list, tuple, set, frozenset) and isinstance(value, list):
        params = typing.get_args(tp)
        item = params[0] if params else Any
        items = [_convert(item, v) for v in value]
        return items if origin is list else origin(items)
    if origin is dict and isinstance(value, dict):
        params = typing.get_args(tp)
        vt = params[1] if len(params) == 2 else Any
        return {k: _convert(vt, v) for k, v in value.items()}
    if isinstance(tp, type):
        if dataclasses.is_dataclass(tp):
            if not isinstance(value, dict):
                raise TypeError(f"args: want a JSON object for {tp.__name__}, got {type(value).__name__}")
            hints = typing.get_type_hints(tp)
            kwargs = {
                f.name: _convert(hints.get(f.name, Any), value[f.name])
                for f in dataclasses.fields(tp)
                if f.init and f.name in value
            }
            # Keys the dataclass does not know are ignored, so that a
            # producer can add a field before every worker knows it.
            return tp(**kwargs)
        validate = getattr(tp, "model_validate", None)
        if callable(validate):
            return validate(value)
    return value
