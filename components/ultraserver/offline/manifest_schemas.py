"""Rendered objects against their schemas: built-in kinds against the stack's Kubernetes version (strict, as
`kubectl --validate=strict`; the schemas kubernetes-validate ships per version), custom resources against the
openAPIV3Schema of the CRD version that serves them.

Custom resources are checked for types, enums and required fields only: the API server prunes unknown fields of a
structural schema rather than refusing them, so reporting them would flag what deploys fine.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

import jsonschema
from referencing import Registry, Resource

from ultraserver.offline.served_apis import Api, api_of, definitions, schema_folder, served_versions

# kubernetes-validate's file per kind: `<kind>-<first label of the group>-<version>.json` (`deployment-apps-v1`,
# `configmap-v1`), beside `_definitions.json` that they refer to; read once per process, not per object as its
# validate() does.
_GROUP_LABEL = re.compile(r"^([^./]*)(?:\.[^/]*)?/")


def crd_schemas(bodies: Iterable[Mapping[str, Any]]) -> dict[Api, Mapping[str, Any]]:
    """The openAPIV3Schema of each served version of every CRD among ``bodies``."""
    found: dict[Api, Mapping[str, Any]] = {}
    for api, version in served_versions(bodies):
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if schema:
            found[api] = schema
    return found


def _where(error: jsonschema.ValidationError) -> str:
    return ".".join(str(part) for part in error.absolute_path) or "(the object)"


def schema_error(
    body: Mapping[str, Any], kube_version: str, custom: Mapping[Api, Mapping[str, Any]]
) -> tuple[str, str] | None:
    """(field path, message) of the first schema error of ``body``, or None when it validates or no schema is known
    (an unserved kind is reported by served_apis)."""
    schema = custom.get(api_of(body))
    if schema is not None:
        error = jsonschema.exceptions.best_match(jsonschema.Draft7Validator(schema).iter_errors(dict(body)))
        return (_where(error), error.message) if error is not None else None
    validator = _builtin(kube_version, str(body.get("apiVersion", "")), str(body.get("kind", "")))
    if validator is None:
        return None
    error = jsonschema.exceptions.best_match(validator.iter_errors(dict(body)))
    return (_where(error), error.message) if error is not None else None


@cache
def _definitions(kube_version: str) -> Resource[Any]:
    return Resource.from_contents(definitions(kube_version))


@cache
def _builtin(kube_version: str, api_version: str, kind: str) -> jsonschema.Draft202012Validator | None:
    """The strict validator of a built-in kind at that Kubernetes minor; None when it has no schema."""
    folder = schema_folder(kube_version)
    group_version = _GROUP_LABEL.sub(r"\1-", api_version)
    path = folder.joinpath(f"{kind.lower()}-{group_version}.json")
    if not path.is_file():
        return None
    schema = json.loads(path.read_text())
    registry: Registry[Any] = _definitions(kube_version) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)
