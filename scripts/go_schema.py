"""A JSON Schema of Go structs from their `json` tags (field names and types only), for
scripts/regen_upstream_fixtures.py: Kueue's Configuration API (apis/config/v1beta2/configuration_types.go) becomes the
schema tests validate the generated Configuration against.
"""

from __future__ import annotations

import re
from typing import Any

# Types from other packages: what their JSON looks like (an open object where the toolkit never writes into them).
GO_EXTERNAL_TYPES: dict[str, dict[str, Any]] = {
    "metav1.Duration": {"type": "string"},
    "time.Duration": {"type": "integer"},
    "corev1.ResourceName": {"type": "string"},
    "resourcev1.QualifiedName": {"type": "string"},
    "corev1.ResourceList": {"type": "object"},
    "metav1.LabelSelector": {"type": "object"},
}
GO_BUILTINS: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "bool": {"type": "boolean"},
    **{n: {"type": "integer"} for n in ("int", "int32", "int64", "uint", "uint32", "uint64")},
    **{n: {"type": "number"} for n in ("float32", "float64")},
}
_GO_STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.S | re.M)
_GO_STRING_TYPE = re.compile(r"^type (\w+) string$", re.M)
_GO_FIELD = re.compile(r"^\t(?:(\w+)\s+)?([\w.*\[\]]+)\s+`json:\"([^\"]*)\"`", re.M)


def go_type_schema(go_type: str, structs: set[str], strings: set[str]) -> dict[str, Any]:
    """JSON Schema of one Go field type (pointers dropped, slices as arrays, string maps as objects)."""
    go_type = go_type.lstrip("*")
    if go_type.startswith("[]"):
        return {"type": "array", "items": go_type_schema(go_type[2:], structs, strings)}
    if go_type.startswith("map[string]"):
        return {"type": "object", "additionalProperties": go_type_schema(go_type[11:], structs, strings)}
    if go_type in structs:
        return {"$ref": f"#/$defs/{go_type}"}
    if go_type in strings:
        return {"type": "string"}
    return GO_BUILTINS.get(go_type) or GO_EXTERNAL_TYPES.get(go_type, {})


def go_struct_schema(source: str, root: str) -> dict[str, Any]:
    """JSON Schema of a Go struct and the structs it uses, from their `json` tags: field names and types only, no
    unknown fields (inline embedded structs merged, `json:"-"` fields left out)."""
    bodies = {m.group(1): m.group(2) for m in _GO_STRUCT.finditer(source)}
    strings = set(_GO_STRING_TYPE.findall(source))

    def properties(name: str) -> dict[str, Any]:
        props: dict[str, Any] = {}
        for field_name, go_type, tag in _GO_FIELD.findall(bodies[name]):
            json_name, _, options = tag.partition(",")
            if json_name == "-":
                continue
            if not json_name and "inline" in options:
                if go_type == "metav1.TypeMeta":
                    props |= {"apiVersion": {"type": "string"}, "kind": {"type": "string"}}
                elif go_type in bodies:
                    props |= properties(go_type)
                continue
            props[json_name or field_name] = go_type_schema(go_type, set(bodies), strings)
        return props

    defs = {name: {"type": "object", "properties": properties(name), "additionalProperties": False} for name in bodies}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": f"#/$defs/{root}", "$defs": defs}
