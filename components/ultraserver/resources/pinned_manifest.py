"""Upstream YAML applied from a pinned URL after a digest check: the MPI operator, the DRA driver's CRD.

The program downloads the file itself (on preview and on up), refuses it unless it matches the pin in
``ultraserver.facts.manifests``, and hands the parsed objects to ``k8s.yaml.v2.ConfigGroup`` (server-side apply,
CRDs ordered before their users). Nothing upstream is copied into the repository. The offline plan swaps the
download for a placeholder (``set_fetcher``), so it never touches the network and applies no objects.
"""

from __future__ import annotations

import hashlib
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.builders.manifests import digest_problem, documents
from ultraserver.facts.manifests import PinnedManifest
from ultraserver.resources.arguments import checked
from ultraserver.resources.child_options import child_options

Fetch = Callable[[str], "bytes | None"]
"""Returns a URL's bytes, or None when no download happens (offline plan)."""


def download(url: str) -> bytes:
    """The bytes at a URL (https only)."""
    if not url.startswith("https://"):
        raise ManifestIntegrityError(f"{url}: only https:// URLs are downloaded")
    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - https only, checked above
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
    """URL and digests (ultraserver.facts.manifests)."""
    force_kinds: tuple[str, ...] = ()
    """Kinds whose fields this stack takes over from other managers (e.g. a CRD Helm created)."""


class PinnedManifestGroup(pulumi.ComponentResource):
    """The objects of one pinned upstream manifest, applied server-side once its digest is checked."""

    group: k8s.yaml.v2.ConfigGroup
    sha256: str | None
    """SHA-256 of what was applied; None in the offline plan."""

    def __init__(self, name: str, args: PinnedManifestArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:PinnedManifest", name, None, opts)
        pin = args.manifest
        try:
            data = _fetch(pin.url)
        except (OSError, ValueError) as err:
            raise ManifestIntegrityError(
                f"{pin.name}: could not download {pin.url} ({err}); the deployer must reach raw.githubusercontent.com "
                "(docs/deploy.md 'Reachability')."
            ) from None
        objects = []
        self.sha256 = None
        if data is not None:
            problem = digest_problem(pin, data)
            if problem:
                raise ManifestIntegrityError(str(problem))
            self.sha256 = hashlib.sha256(data).hexdigest()
            objects = documents(data, args.force_kinds)
        self.group = k8s.yaml.v2.ConfigGroup(name, objs=objects, opts=child_options(self, opts))
        self.register_outputs({"url": pin.url, "sha256": self.sha256})
