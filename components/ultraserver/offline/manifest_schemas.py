"""Rendered objects against their schemas: built-in kinds against the stack's Kubernetes version (strict, as
`kubectl --validate=strict`), custom resources against the openAPIV3Schema of the CRD version that serves them.

Custom resources are checked for types, enums and required fields only: the API server prunes unknown fields of a
structural schema rather than refusing them, so reporting them would flag what deploys fine.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import jsonschema
import kubernetes_validate

from ultraserver.offline.served_apis import Api, api_of


def crd_schemas(bodies: Iterable[Mapping[str, Any]]) -> dict[Api, Mapping[str, Any]]:
    """The openAPIV3Schema of each served version of every CRD among ``bodies``."""
    found: dict[Api, Mapping[str, Any]] = {}
    for body in bodies:
        if api_of(body) != ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"):
            continue
        spec = body.get("spec") or {}
        kind = (spec.get("names") or {}).get("kind", "")
        for version in spec.get("versions") or []:
            schema = (version.get("schema") or {}).get("openAPIV3Schema")
            if version.get("served") and schema:
                found[(spec.get("group", ""), version["name"], kind)] = schema
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
    try:
        kubernetes_validate.validate(dict(body), kube_version, strict=True)
    except kubernetes_validate.ValidationError as error:
        return _where(error), error.message
    except kubernetes_validate.SchemaNotFoundError:
        return None
    return None
