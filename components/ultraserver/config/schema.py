"""The JSON Schema of stack files and the settings reference table, both generated from the settings model.

``stacks/stack.schema.json`` (written by scripts/regen_docs.py) lets editors check a stack file as it is
typed (the ``# yaml-language-server: $schema=./stack.schema.json`` modeline); docs/settings.md is
rendered from the same schema. Tests fail when either is stale.
"""

from __future__ import annotations

import json
from typing import Any

from ultraserver.config.fields import PROJECT
from ultraserver.config.model import SECTIONS, Settings

SCHEMA_ID = "https://github.com/ultraserver/ultraserver/stacks/stack.schema.json"


def _settings_schema() -> dict[str, Any]:
    schema = Settings.model_json_schema(by_alias=True, mode="validation")
    schema.get("properties", {}).pop("__project", None)
    schema.get("properties", {}).pop("__stack", None)
    return schema


def stack_schema(project: str = PROJECT) -> dict[str, Any]:
    """JSON Schema of a Pulumi stack file (Pulumi.<stack>.yaml) of this project."""
    settings = _settings_schema()
    properties: dict[str, Any] = {}
    for name, prop in settings["properties"].items():
        properties[name if ":" in name else f"{project}:{name}"] = prop
    known = "|".join(SECTIONS)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"Pulumi stack file of the {project} project",
        "description": "Generated from ultraserver.config.model by scripts/regen_docs.py; do not edit.",
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "description": "Stack settings: aws:region and the ultraserver-eks:<section> keys.",
                "properties": properties,
                "required": [k if ":" in k else f"{project}:{k}" for k in settings.get("required", [])],
                # Other namespaces (aws:profile, pulumi:tags, ...) are Pulumi's business; ours are closed.
                "propertyNames": {"not": {"pattern": f"^{project}:(?!({known})$)"}},
                "additionalProperties": True,
            }
        },
        "required": ["config"],
        "additionalProperties": True,
        "$defs": settings.get("$defs", {}),
    }


def schema_text(project: str = PROJECT) -> str:
    """The schema as the committed file holds it."""
    return json.dumps(stack_schema(project), indent=2, sort_keys=True) + "\n"


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref") or next((x["$ref"] for x in node.get("anyOf", []) if "$ref" in x), None)
    return defs[ref.rsplit("/", 1)[-1]] if ref else {}


def _type_text(node: dict[str, Any], defs: dict[str, Any]) -> str:
    if "enum" in node:
        return " \\| ".join(f"`{v}`" for v in node["enum"])
    if "const" in node:
        return f"`{node['const']}`"
    for union in ("anyOf", "oneOf"):
        if union in node:
            return " or ".join(_type_text(x, defs) for x in node[union] if x.get("type") != "null")
    if "$ref" in node:
        return "mapping"
    kind = node.get("type", "any")
    if kind == "array":
        return f"list of {_type_text(node.get('items', {}), defs)}"
    if kind == "object":
        return "mapping"
    return kind + _bounds_text(node)


def _bounds_text(node: dict[str, Any]) -> str:
    """(>= minimum, <= maximum) of a number's schema, or nothing."""
    bounds = [f"{word} {node[k]}" for k, word in (("minimum", ">="), ("maximum", "<=")) if k in node]
    return f" ({', '.join(bounds)})" if bounds else ""


def _default_text(node: dict[str, Any], required: bool) -> str:
    if required:
        return "required"
    if "default" not in node:
        return ""
    return f"`{json.dumps(node['default'])}`"


def settings_rows(project: str = PROJECT) -> list[tuple[str, str, str, str]]:
    """(stack key, type, default, description) of every setting, sub-settings expanded."""
    schema = _settings_schema()
    defs = schema.get("$defs", {})
    rows: list[tuple[str, str, str, str]] = []

    def walk(model: dict[str, Any], prefix: str) -> None:
        required = set(model.get("required", []))
        for name, node in model.get("properties", {}).items():
            key = name if ":" in name else f"{prefix}{name}"
            inner = _resolve(node, defs)
            if not inner and node.get("type") == "array":
                inner = _resolve(node.get("items", {}), defs)
                key += "[]" if inner else ""
            description = node.get("description") or inner.get("description", "")
            if inner and "properties" in inner:
                rows.append((key, "mapping", _default_text(node, name in required), description))
                walk(inner, f"{key}.")
            else:
                rows.append((key, _type_text(node, defs), _default_text(node, name in required), description))

    walk(schema, "")
    return rows


def model_rows(model: Any) -> list[tuple[str, str, str, str]]:
    """(stack key, type, default, description) of one settings model's own fields."""
    schema = model.model_json_schema(by_alias=True, mode="validation")
    defs, required = schema.get("$defs", {}), set(schema.get("required", []))
    return [
        (name, _type_text(node, defs), _default_text(node, name in required), node.get("description", ""))
        for name, node in schema.get("properties", {}).items()
        if not name.startswith("__")
    ]


def settings_table(project: str = PROJECT) -> str:
    """The settings reference (docs/settings.md) as a Markdown table."""
    lines = ["| Key | Type | Default | Meaning |", "|---|---|---|---|"]
    for key, kind, default, description in settings_rows(project):
        cell = description.replace("|", "\\|")
        lines.append(f"| `{key}` | {kind} | {default} | {cell} |")
    return "\n".join(lines)
