"""Upstream YAML applied from a pinned URL after a digest check: the MPI operator, the DRA driver's CRD.

The program downloads the file itself (on preview and on up), or reads it from a mirror (an https:// URL prefix or a
local directory: ``kubernetes.manifestMirror``) for deployers with no route to GitHub, refuses it unless it matches
the pin in ``ultraserver.facts.pins.manifests``, and hands the parsed objects to ``k8s.yaml.v2.ConfigGroup``
(server-side apply, CRDs ordered before their users). Nothing upstream is copied into the repository. The offline
plan swaps the download for a placeholder (``set_fetcher``), so it never touches the network and applies no objects.
"""

from __future__ import annotations

import hashlib
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.arguments import checked, checked_component
from ultraserver.builders.manifests import digest_problem, documents, source
from ultraserver.facts.pins.manifests import PinnedManifest
from ultraserver.resources.child_options import child_options

Fetch = Callable[[str], "bytes | None"]
"""Returns a URL's bytes, or None when no download happens (offline plan)."""


def download(where: str) -> bytes:
    """The bytes at an https:// URL or in a local file (an absolute path)."""
    if where.startswith("/"):
        return Path(where).read_bytes()
    if not where.startswith("https://"):
        raise ManifestIntegrityError(f"{where}: only https:// URLs and absolute local paths are read")
    with urllib.request.urlopen(where, timeout=60) as response:  # noqa: S310 - https only, checked above
        data: bytes = response.read()
    return data


_fetch: Fetch = download


def set_fetcher(fetch: Fetch) -> Fetch:
    """Replace how manifests are downloaded (the offline plan uses a placeholder); returns the previous one."""
    global _fetch
    previous, _fetch = _fetch, fetch
    return previous


class ManifestIntegrityError(pulumi.RunError):
    """A pinned manifest could not be downloaded or does not match its pin: nothing is applied."""


@checked()
@dataclass
class PinnedManifestArgs:
    """Inputs of a pinned manifest."""

    manifest: PinnedManifest
    """URL and digests (ultraserver.facts.pins.manifests)."""
    force_kinds: tuple[str, ...] = ()
    """Kinds whose fields this stack takes over from other managers (e.g. a CRD Helm created)."""
    mirror: str = ""
    """Where to read the file instead of its pinned URL: an https:// URL prefix or a local directory holding it under
    the same name (builders/manifests.source); the digests are checked all the same."""
    retain_kinds: tuple[str, ...] = ()
    """Kinds Pulumi never deletes from the cluster (retain_on_delete): their objects stay when they leave the
    program, are renamed or replaced."""


def retaining(kinds: tuple[str, ...]) -> pulumi.ResourceTransform:
    """A transform marking every object of `kinds` that a ConfigGroup declares retain_on_delete. The ConfigGroup
    builds its objects in the Kubernetes provider, where a component's own retain_on_delete does not reach them
    (pulumi/pulumi-kubernetes#3065, closed as won't fix, points at transforms); transforms reach them."""

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if not args.custom or args.type_.rsplit(":", 1)[-1] not in kinds:
            return None
        return pulumi.ResourceTransformResult(
            args.props, pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(retain_on_delete=True))
        )

    return transform


@checked_component
class PinnedManifestGroup(pulumi.ComponentResource):
    """The objects of one pinned upstream manifest, applied server-side once its digest is checked."""

    group: k8s.yaml.v2.ConfigGroup
    url: str
    """Where the file was read (the pinned URL or the mirror's copy)."""
    sha256: str | None
    """SHA-256 of what was applied; None in the offline plan."""

    def __init__(self, name: str, args: PinnedManifestArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:PinnedManifest", name, None, opts)
        pin = args.manifest
        where = self.url = source(pin, args.mirror)
        try:
            data = _fetch(where)
        except (OSError, ValueError) as err:
            raise ManifestIntegrityError(
                f"{pin.name}: could not read {where} ({err}); the deployer must reach it, or set "
                "kubernetes.manifestMirror to a mirror or local directory holding the file (docs/deploy.md "
                "'Reachability')."
            ) from None
        objects = []
        self.sha256 = None
        if data is not None:
            problem = digest_problem(pin, data, where)
            if problem:
                raise ManifestIntegrityError(str(problem))
            self.sha256 = hashlib.sha256(data).hexdigest()
            objects = documents(data, args.force_kinds)
        retain = (
            pulumi.ResourceOptions(retain_on_delete=True, transforms=[retaining(args.retain_kinds)])
            if args.retain_kinds
            else None
        )
        self.group = k8s.yaml.v2.ConfigGroup(name, objs=objects, opts=child_options(self, opts, retain))
        self.register_outputs({"url": where, "sha256": self.sha256})
