"""Pure checks and shaping of downloaded upstream manifests (pins in facts/manifests.py)."""

from __future__ import annotations

import hashlib
from typing import Any

import yaml

from ultraserver.facts.manifests import PinnedManifest

# pulumi-kubernetes: take over fields another manager (e.g. Helm, which created the CRD from the chart's crds/)
# set, instead of failing the server-side apply with a conflict.
PATCH_FORCE = "pulumi.com/patchForce"


def git_blob_id(data: bytes) -> str:
    """Git's blob id of some bytes (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def digest_problem(pin: PinnedManifest, data: bytes) -> str | None:
    """Why the downloaded bytes do not match the pin, or None when they do."""
    seen = hashlib.sha256(data).hexdigest()
    if seen != pin.sha256:
        return (
            f"{pin.name}: {pin.url} has sha256 {seen}, but {pin.sha256} is pinned (ultraserver.facts.manifests). "
            "The file changed upstream or the download was tampered with; nothing was applied. Check the file, "
            "then update the pin if the change is expected."
        )
    blob = git_blob_id(data)
    if blob != pin.git_blob:
        return (
            f"{pin.name}: {pin.url} has git blob id {blob}, but {pin.git_blob} is pinned "
            "(ultraserver.facts.manifests). The file changed upstream or the download was tampered with; nothing "
            "was applied. Check the file, then update the pin if the change is expected."
        )
    return None


def documents(data: bytes, force_kinds: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The YAML documents of a manifest; objects of `force_kinds` get the patch-force annotation."""
    found = [doc for doc in yaml.safe_load_all(data.decode()) if isinstance(doc, dict)]
    for doc in found:
        if doc.get("kind") in force_kinds:
            annotations = doc.setdefault("metadata", {}).setdefault("annotations", {}) or {}
            annotations[PATCH_FORCE] = "true"
            doc["metadata"]["annotations"] = annotations
    return found
