"""What the API server keeps of a custom resource: fields its CRD's structural schema does not declare are pruned.

Kubernetes docs, "Extend the Kubernetes API with CustomResourceDefinitions", section "Field pruning": with
apiextensions.k8s.io/v1, fields not specified in the OpenAPI schema are dropped on create and update, unless the
schema (or the node the field is under) sets `x-kubernetes-preserve-unknown-fields: true`; `additionalProperties`
declares the values of a map. `apiVersion`, `kind` and `metadata` are kept (metadata is validated, not pruned, here).

A pruned key under a pod's placement or its containers' settings changes what runs, silently: a misspelled
`opertor` of a toleration leaves `{key, effect}`, which tolerates only a taint with an empty value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PLACEMENT_FIELDS = frozenset({"tolerations", "nodeSelector", "affinity", "resources", "env"})
"""Fields under which a pruned key is an error: where pods land, what they may use and how they are configured."""
_KEPT = frozenset({"apiVersion", "kind", "metadata"})


def _walk(value: Any, schema: Mapping[str, Any], path: tuple[str, ...], found: list[tuple[str, ...]]) -> Any:
    """The value as stored, appending the path of each pruned key to ``found``."""
    if not isinstance(schema, Mapping) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return value
    if isinstance(value, list):
        items = schema.get("items")
        if not isinstance(items, Mapping):
            return value
        return [_walk(item, items, (*path, str(index)), found) for index, item in enumerate(value)]
    if not isinstance(value, Mapping):
        return value
    if schema.get("properties") is None and schema.get("additionalProperties") is None:
        # An object schema with neither lists no fields: everything under it is pruned, unless it is no object.
        if schema.get("type") != "object":
            return value
    return _walk_fields(value, schema, path, found)


def _walk_fields(
    value: Mapping[str, Any], schema: Mapping[str, Any], path: tuple[str, ...], found: list[tuple[str, ...]]
) -> dict[str, Any]:
    """An object's fields as stored: those its schema lists or lets in, the rest noted in ``found``."""
    properties = schema.get("properties")
    extra = schema.get("additionalProperties")
    kept: dict[str, Any] = {}
    for key, item in value.items():
        if not path and key in _KEPT:
            kept[key] = item
        elif properties and key in properties:
            kept[key] = _walk(item, properties[key], (*path, str(key)), found)
        elif isinstance(extra, Mapping):
            kept[key] = _walk(item, extra, (*path, str(key)), found)
        elif extra is True:
            kept[key] = item
        else:
            found.append((*path, str(key)))
    return kept


def pruned(body: Mapping[str, Any], schema: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[str]]:
    """(the object as the API server stores it, the dotted path of every key it prunes)."""
    found: list[tuple[str, ...]] = []
    stored = _walk(body, schema, (), found)
    return stored, [".".join(p) for p in found]


def placement_field(path: str) -> bool:
    """Whether a pruned path lies under tolerations, nodeSelector, affinity, resources or env."""
    return any(part in PLACEMENT_FIELDS for part in path.split(".")[:-1])
