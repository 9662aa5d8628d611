"""Rendering the shipped stacks with a real Helm and the packaged charts of ../shared/upstream/charts/.

Skipped when Helm or the charts are absent locally; .ci/run puts the toolkit's pinned Helm on the PATH and sets
ULTRASERVER_REQUIRE_HELM=1, which turns that skip into a failure. The pinned upstream manifests the render judges
beside the charts (the MPI Operator's) are read as `plan --render` reads them (rehearse/pinned_files.py: the cached
verified copy, the pinned URL, the Go module), never from the source material beside the repository; the same
variable turns their absence into a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.stacks import ROOT
from ultraserver.facts.pins.manifests import PinnedManifest
from ultraserver.offline.helm_binary import find_helm
from ultraserver.offline.stack_checks import FETCH_COMMAND, ReadPin
from ultraserver.problems import ConfigError
from ultraserver.rehearse.pinned_files import pinned_bytes

CHARTS = ROOT.parent / "shared" / "upstream" / "charts"
"""The toolkit's pinned charts, packaged (third-party: kept out of the repository)."""
REQUIRED = os.environ.get("ULTRASERVER_REQUIRE_HELM") == "1"


def packaged_chart(file_name: str) -> Path:
    """One packaged chart. Skipped in a clone with no packaged charts beside it (a new user's checkout); a failure
    under ULTRASERVER_REQUIRE_HELM=1 (.ci/run) or when the charts are there but this one is not."""
    path = CHARTS / file_name
    if path.is_file():
        return path
    message = f"{path} is missing: the packaged charts are needed (see shared/upstream/charts/SOURCE.md)"
    if REQUIRED or any(CHARTS.glob("*.tgz")):
        pytest.fail(message)
    pytest.skip(message)


def helm_and_charts() -> tuple[Path, Path]:
    """The Helm binary and the charts folder; skip (fail under ULTRASERVER_REQUIRE_HELM=1) when either is missing."""
    helm = find_helm()
    missing = []
    if helm is None:
        missing.append("no helm on the PATH or in the cache (`python -m ultraserver.offline.helm_binary` fetches it)")
    if not any(CHARTS.glob("*.tgz")):
        missing.append(f"no packaged charts in {CHARTS}")
    if missing:
        message = "; ".join(missing)
        if REQUIRED:
            pytest.fail(f"ULTRASERVER_REQUIRE_HELM=1 but {message}")
        pytest.skip(message)
    assert helm is not None
    return helm, CHARTS


def pinned_reader() -> ReadPin:
    """How `plan --render` reads the pinned manifests (rehearse/pinned_files.py pinned_bytes), but a pin it cannot
    read skips the test (fails it under ULTRASERVER_REQUIRE_HELM=1), naming the command that caches it."""

    def read(pin: PinnedManifest, where: str) -> bytes:
        try:
            return pinned_bytes(pin, where)
        except ConfigError as error:
            message = f"{pin.name} cannot be read ({error}); cache it: {FETCH_COMMAND}"
            if REQUIRED:
                pytest.fail(f"ULTRASERVER_REQUIRE_HELM=1 but {message}")
            pytest.skip(message)

    return read
