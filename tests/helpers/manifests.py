"""Validating manifests: custom resources against the pinned CRD fixtures (strict), pods from templates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from ultraserver.facts.hardware import devices

CRDS = Path(__file__).resolve().parent.parent / "fixtures" / "crds"
K8S_VERSION = "1.33"


def crd(name: str) -> dict[str, Any]:
    """One CRD fixture written by scripts/regen_upstream_fixtures.py."""
    return json.loads((CRDS / f"{name}.json").read_text())


def strict(schema: Any) -> Any:
    """The schema with unknown fields rejected, as `kubectl --validate=strict` does (the API server would
    silently prune them, so a misspelt field would be lost without an error)."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) if k not in ("properties", "enum", "default") else v for k, v in schema.items()}
    if "properties" in schema:
        out["properties"] = {name: strict(sub) for name, sub in schema["properties"].items()}
        if "additionalProperties" not in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    return out


def has_crd_fixture(manifest: dict[str, Any]) -> bool:
    """Whether a pinned CRD fixture covers the manifest's group, version and kind."""
    group, _, version = str(manifest.get("apiVersion", "")).rpartition("/")
    return any(
        (f["group"], f["version"], f["kind"]) == (group, version, manifest.get("kind"))
        for f in (crd(p.stem) for p in CRDS.glob("*.json"))
    )


def validate_custom(manifest: dict[str, Any]) -> None:
    """Validate a custom resource against the CRD fixture of its kind and version."""
    fixtures = [crd(p.stem) for p in CRDS.glob("*.json")]
    group, version = manifest["apiVersion"].split("/")
    (match,) = [f for f in fixtures if (f["group"], f["version"], f["kind"]) == (group, version, manifest["kind"])]
    jsonschema.validate(manifest, strict(match["openAPIV3Schema"]))


def as_pod(template: dict[str, Any], name: str, namespace: str) -> dict[str, Any]:
    """A pod template wrapped as the Pod the controller would create from it."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, **template.get("metadata", {})},
        "spec": template["spec"],
    }


def pair_manifests(args: Any) -> list[dict[str, Any]]:
    """The ComputeDomain and the MPIJob of one nvbandwidth run, as the ImexCheck component declares them."""
    from ultraserver.builders.compute_domain import compute_domain_manifest
    from ultraserver.builders.nvbandwidth_job import compute_domain_args, mpijob_manifest

    return [compute_domain_manifest(compute_domain_args(args)), mpijob_manifest(args)]


def whole_node_gpus(spec: dict[str, Any]) -> int:
    """GPUs a DRA claim spec takes by count without a constraint (0 when it constrains its devices)."""
    if (spec.get("devices") or {}).get("constraints"):
        return 0
    return sum(
        int(r["exactly"].get("count", 1))
        for r in spec["devices"]["requests"]
        if r["exactly"]["deviceClassName"] == devices.GPU_DEVICE_CLASS
    )


def paired_requests(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(GPU request, EFA request) pairs a DRA claim spec constrains to one PCIe root."""
    return [
        (c["requests"][0], c["requests"][1])
        for c in (spec.get("devices") or {}).get("constraints") or []
        if c.get("matchAttribute") == devices.PCIE_ROOT_ATTRIBUTE and len(c.get("requests") or []) == 2
    ]
