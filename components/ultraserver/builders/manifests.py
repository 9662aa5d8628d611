"""Pure checks and shaping of downloaded upstream manifests (pins in facts/pins/manifests.py)."""

from __future__ import annotations

import hashlib
from typing import Any

import yaml

from ultraserver.facts.pins.manifests import PinnedManifest
from ultraserver.problems import Described, Problem

# pulumi-kubernetes: take over fields another manager (e.g. Helm, which created the CRD from the chart's crds/)
# set, instead of failing the server-side apply with a conflict.
PATCH_FORCE = "pulumi.com/patchForce"


def git_blob_id(data: bytes) -> str:
    """Git's blob id of some bytes (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


_TAMPERED = (
    "nothing was applied: the file changed upstream or the download was tampered with; check the file, then update "
    "the pin if the change is expected"
)


def source(pin: PinnedManifest, mirror: str = "") -> str:
    """Where a pinned manifest is read: its pinned URL, or in `mirror` (an https:// URL prefix or a local directory)
    the file of the same name (the last part of the pinned URL)."""
    if not mirror:
        return pin.url
    return f"{mirror.rstrip('/')}/{pin.file_name}"


def digest_problem(pin: PinnedManifest, data: bytes, where: str = "") -> Problem | None:
    """The bytes read from `where` (default the pinned URL) not matching the pin, as a Problem keyed by the manifest,
    or None when they match."""
    where = where or pin.url
    seen = hashlib.sha256(data).hexdigest()
    if seen != pin.sha256:
        return Problem(
            pin.name,
            Described(f"{where} has sha256 {seen}"),
            f"sha256 {pin.sha256}, the pin in ultraserver.facts.pins.manifests",
            _TAMPERED,
        )
    blob = git_blob_id(data)
    if blob != pin.git_blob:
        return Problem(
            pin.name,
            Described(f"{where} has git blob id {blob}"),
            f"git blob id {pin.git_blob}, the pin in ultraserver.facts.pins.manifests",
            _TAMPERED,
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
