"""Compact tool schemas for tools/list: every byte there sits in the agent's context on every turn.

Pydantic's schemas carry a `title` for every field and spell an optional parameter as
`anyOf: [{type: X}, {type: null}], default: null`. Neither tells the agent anything a property
name and `required` do not, so tools/list drops them. Validation still uses the full schema, so
a client that sends an explicit null is accepted.
"""

from __future__ import annotations

from typing import Any


def compact_schema(schema: Any) -> Any:
    if isinstance(schema, list):
        return [compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key == "properties" and isinstance(value, dict):
            # Keys here are parameter names (one may be called "title"): keep them all.
            out[key] = {name: compact_schema(prop) for name, prop in value.items()}
        else:
            out[key] = compact_schema(value)
    variants = out.get("anyOf")
    if isinstance(variants, list) and len(variants) == 2 and {"type": "null"} in variants:
        other = next(v for v in variants if v != {"type": "null"})
        del out["anyOf"]
        if out.get("default", 0) is None:
            del out["default"]
        out = {**other, **out}
    return out
