"""The pinned upstream manifests a rehearsal on a real API server applies beside the charts (the MPI Operator's
MPIJob CRD), read as the program reads them: from the pinned URL, refused unless the digests of the pin match.

A verified copy is kept in ``$XDG_CACHE_HOME/ultraserver/manifests`` (else ``~/.cache/...``) under its file name and
read from there afterwards (checked again); `python -m ultraserver.rehearse.pinned_files` reads every pin once, so
`plan --render` finds them (offline/stack_checks.py). Where the pinned URL cannot be reached (a machine that reaches
only package registries), a pin that names a Go module holding the same file at the same tag is read from that module
through the Go module proxy (``go mod download``); the digests decide either way.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ultraserver.builders.manifests import digest_problem, documents
from ultraserver.facts.pins.manifests import DRA_DRIVER_CRDS, PinnedManifest, by_file_name
from ultraserver.offline.stack_checks import applied_pins
from ultraserver.problems import ConfigError, Described, Problem


def cache_dir() -> Path:
    """Where verified copies are kept, outside any repository."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ultraserver" / "manifests"


def download(url: str) -> bytes:
    """The bytes at the pinned (https) URL."""
    with urllib.request.urlopen(url, timeout=60) as response:  # noqa: S310 - a pin's https URL
        return bytes(response.read())


def _from_go_module(pin: PinnedManifest) -> bytes:
    go = shutil.which("go")
    if go is None:
        raise OSError("no `go` on the PATH")
    done = subprocess.run(
        [go, "mod", "download", "-json", pin.go_module], capture_output=True, text=True, check=False, timeout=600
    )
    info = json.loads(done.stdout or "{}")
    if done.returncode != 0 or "Dir" not in info:
        raise OSError(info.get("Error") or done.stderr.strip())
    return (Path(info["Dir"]) / pin.repository_path).read_bytes()


def pinned_bytes(pin: PinnedManifest, where: str = "") -> bytes:
    """The manifest's bytes, digest-checked: the cached copy, else ``where`` (a copy in the stack's
    ``kubernetes.manifestMirror``: a local path or an https:// URL, as the program reads it), else the pinned URL,
    else the pin's Go module; ConfigError naming each source tried when none gives the pinned bytes."""
    cached = cache_dir() / pin.file_name
    tried: list[str] = []
    sources = [(str(cached), lambda: cached.read_bytes())]
    if where and where != pin.url:
        sources.append((where, lambda: Path(where).read_bytes() if where.startswith("/") else download(where)))
    sources.append((pin.url, lambda: download(pin.url)))
    if pin.go_module:
        sources.append((f"Go module {pin.go_module}", lambda: _from_go_module(pin)))
    for where, read in sources:
        try:
            data = read()
        except (OSError, ValueError) as error:
            tried.append(f"{where}: {error}")
            continue
        problem = digest_problem(pin, data, where)
        if problem is not None:
            tried.append(str(problem))
            continue
        if where != str(cached):
            cache_dir().mkdir(parents=True, exist_ok=True)
            cached.write_bytes(data)
        return data
    raise ConfigError(
        Problem(
            pin.name,
            Described("; ".join(tried)),
            f"the pinned file (sha256 {pin.sha256})",
            f"put a verified copy at {cached}, or reach {pin.url}",
        )
    )


def manifest_crds(urls: Sequence[str], present: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """The CustomResourceDefinitions of the pinned manifests at ``urls`` (a plan's ``manifests``: what the program
    applies from its pins), but for a pin whose APIs the CRDs ``present`` already serve (the DRA driver's, which its
    chart holds at the same git blobs: rehearse/charts.py)."""
    return [
        d
        for pin, where in applied_pins(urls, present).items()
        for d in documents(pinned_bytes(pin, where))
        if d.get("kind") == "CustomResourceDefinition"
    ]


def main() -> int:
    """Read each pinned manifest no chart holds (the DRA driver's pins are its chart's crds/ files, which `plan
    --render` and the rehearsal read from the chart): a verified copy is kept in the cache, where they read it. Print
    where each is; 1 naming what was tried when one cannot be read."""
    code = 0
    for pin in by_file_name().values():
        if pin in DRA_DRIVER_CRDS.values():
            continue
        try:
            pinned_bytes(pin)
        except ConfigError as error:
            print(error, file=sys.stderr)
            code = 1
            continue
        print(cache_dir() / pin.file_name)
    return code


if __name__ == "__main__":
    sys.exit(main())
