"""Pinned upstream manifests (MPI operator, DRA ComputeDomain CRD): digest-checked, placeholders offline (item 8)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
from helpers.plan_lookup import one
from helpers.stacks import ROOT, stack_config
from ultraserver.builders.manifests import PATCH_FORCE, git_blob_id
from ultraserver.config.settings import parse_settings
from ultraserver.facts.pins import charts, manifests
from ultraserver.facts.pins.manifests import PinnedManifest
from ultraserver.offline import Plan, record, served_apis
from ultraserver.problems import ConfigError
from ultraserver.resources import pinned_manifest
from ultraserver.resources.mpi_operator import MpiOperator, MpiOperatorArgs
from ultraserver.resources.pinned_manifest import ManifestIntegrityError, PinnedManifestArgs, PinnedManifestGroup

GROUP = "kubernetes:yaml/v2:ConfigGroup"
CONTENT = (
    b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n---\n"
    b"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.example.com\n"
)
TAMPERED = CONTENT + b"# tampered\n"
URL = "https://raw.githubusercontent.com/example/repo/0123456789abcdef0123456789abcdef01234567/demo.yaml"


def pin(sha256: str = hashlib.sha256(CONTENT).hexdigest(), blob: str = git_blob_id(CONTENT)) -> PinnedManifest:
    return PinnedManifest(name="demo manifest", url=URL, sha256=sha256, git_blob=blob)


def apply(manifest: PinnedManifest, fetch: Callable[[str], bytes | None], **kwargs: object) -> Plan:
    """Declare one pinned manifest with `fetch` standing in for the download (the real program path)."""

    def program() -> None:
        pinned_manifest.set_fetcher(fetch)  # record() restores its own afterwards
        PinnedManifestGroup("demo", PinnedManifestArgs(manifest, **kwargs))  # type: ignore[arg-type]

    return record(program)


def test_matching_download_is_applied_with_crds_taken_over() -> None:
    seen: list[str] = []
    plan = apply(pin(), lambda url: seen.append(url) or CONTENT, force_kinds=("CustomResourceDefinition",))
    assert seen == [URL]
    objs = one(plan, GROUP).inputs["objs"]
    assert [o["kind"] for o in objs] == ["Namespace", "CustomResourceDefinition"]
    assert objs[1]["metadata"]["annotations"] == {PATCH_FORCE: "true"}
    assert "annotations" not in objs[0]["metadata"]


@pytest.mark.parametrize(
    ("manifest", "digest"),
    [
        (pin(sha256="0" * 64), "sha256"),
        # Both digests are checked: a pin whose git blob id disagrees is refused even when the sha256 agrees.
        (pin(sha256=hashlib.sha256(TAMPERED).hexdigest(), blob="f" * 40), "git blob id"),
    ],
)
def test_mismatch_fails_with_a_clear_message_and_applies_nothing(manifest: PinnedManifest, digest: str) -> None:
    with pytest.raises(ManifestIntegrityError) as info:
        apply(manifest, lambda url: TAMPERED)
    text = str(info.value)
    assert URL in text and f"has {digest}" in text and "nothing was applied" in text
    assert "ultraserver.facts.pins.manifests" in text


def test_download_failure_names_the_url_and_what_the_deployer_must_reach() -> None:
    def offline(url: str) -> bytes:
        raise OSError("Name or service not known")

    with pytest.raises(ManifestIntegrityError, match="could not read .*demo.yaml.*kubernetes.manifestMirror"):
        apply(pin(), offline)


@pytest.mark.parametrize(
    ("mirror", "read"),
    [
        ("https://mirror.example.com/ultraserver/", "https://mirror.example.com/ultraserver/demo.yaml"),
        ("https://mirror.example.com/ultraserver", "https://mirror.example.com/ultraserver/demo.yaml"),
        ("/opt/manifests", "/opt/manifests/demo.yaml"),
    ],
)
def test_a_mirror_is_read_instead_of_github_under_the_pinned_file_name(mirror: str, read: str) -> None:
    seen: list[str] = []
    plan = apply(pin(), lambda where: seen.append(where) or CONTENT, mirror=mirror)
    assert seen == [read]
    assert len(one(plan, GROUP).inputs["objs"]) == 2


def test_a_local_copy_is_checked_against_the_pin_like_a_download(tmp_path: Path) -> None:
    (tmp_path / "demo.yaml").write_bytes(CONTENT)
    assert pinned_manifest.download(str(tmp_path / "demo.yaml")) == CONTENT
    assert len(one(apply(pin(), pinned_manifest.download, mirror=str(tmp_path)), GROUP).inputs["objs"]) == 2
    (tmp_path / "demo.yaml").write_bytes(TAMPERED)
    with pytest.raises(ManifestIntegrityError, match=f"{tmp_path}/demo.yaml has sha256 .*nothing was applied"):
        apply(pin(), pinned_manifest.download, mirror=str(tmp_path))
    with pytest.raises(ManifestIntegrityError, match="could not read"):
        apply(pin(), pinned_manifest.download, mirror=str(tmp_path / "missing"))


def test_only_https_and_absolute_paths_are_read() -> None:
    with pytest.raises(ManifestIntegrityError, match="only https:// URLs and absolute local paths"):
        pinned_manifest.download("http://mirror.example.com/demo.yaml")


def test_the_stack_mirror_reaches_the_dra_driver_crds_and_the_mpi_operator(plan_with: Callable[..., Plan]) -> None:
    kubernetes = dict(stack_config("gb200-x72-dra")["ultraserver-eks:kubernetes"])
    kubernetes["manifestMirror"] = "https://mirror.example.com/m"
    plan = plan_with("gb200-x72-dra", {"kubernetes": json.dumps(kubernetes)})
    pins = [*manifests.DRA_DRIVER_CRDS.values(), manifests.MPI_OPERATOR]
    # The offline plan notes where each manifest would be read, and still knows the APIs each adds (--render).
    assert plan.manifests == sorted(f"https://mirror.example.com/m/{p.file_name}" for p in pins)
    assert served_apis.manifest_apis(plan.manifests) == served_apis.manifest_apis(p.url for p in pins)


@pytest.mark.parametrize("mirror", ["http://mirror.example.com", "relative/dir", "ftp://x"])
def test_a_mirror_that_is_neither_https_nor_an_absolute_directory_is_refused(mirror: str) -> None:
    config = dict(stack_config("gb200-x72-dra"))
    config["ultraserver-eks:kubernetes"] = {**config["ultraserver-eks:kubernetes"], "manifestMirror": mirror}
    with pytest.raises(ConfigError, match="kubernetes.manifestMirror: got .*an https:// URL prefix or an absolute"):
        parse_settings(config, today=date(2026, 11, 23))


def test_offline_plan_never_downloads_and_shows_a_placeholder() -> None:
    def forbidden(url: str) -> bytes:
        raise AssertionError(f"the offline plan downloaded {url}")

    previous = pinned_manifest.set_fetcher(forbidden)
    try:
        plan = record(lambda: MpiOperator("mpi", MpiOperatorArgs()))
        assert pinned_manifest.set_fetcher(forbidden) is forbidden  # record() restored the caller's fetcher
    finally:
        pinned_manifest.set_fetcher(previous)
    assert one(plan, GROUP).inputs["objs"] == []
    assert one(plan, "ultraserver:index:PinnedManifest").name == "mpi"


def test_mpi_operator_pin_is_a_fixed_commit_of_the_release_manifest() -> None:
    mpi = manifests.MPI_OPERATOR
    # The same commit (the pinned tag) as the MPIJob CRD the job manifests are validated against.
    fixture = json.loads((ROOT / "tests" / "fixtures" / "crds" / "mpijob-v2beta1.json").read_text())
    assert mpi.url.startswith(f"https://raw.githubusercontent.com/kubeflow/mpi-operator/{fixture['source']['commit']}/")
    assert mpi.url.endswith("/deploy/v2beta1/mpi-operator.yaml")
    assert len(mpi.sha256) == 64 and len(mpi.git_blob) == 40


@pytest.mark.parametrize("crd", sorted(manifests.DRA_DRIVER_CRDS))
def test_dra_crd_pins_are_the_pinned_charts_crds(crd: str) -> None:
    """Each CRD of the pinned DRA driver chart's crds/ has a pin at the chart's own commit, with the same bytes (git
    blob) as the CRD fixture the manifests are validated against: a chart bump without its CRDs fails here."""
    chart = charts.pinned(charts.DRA_DRIVER)
    assert set(manifests.DRA_DRIVER_CRDS) == chart.crds
    pin = manifests.DRA_DRIVER_CRDS[crd]
    kind = crd.partition(".")[0].removesuffix("s")
    fixture = json.loads((ROOT / "tests" / "fixtures" / "crds" / f"{kind}-v1beta1.json").read_text())
    assert pin.git_blob == fixture["source"]["blob"]
    assert f"/{chart.source_commit}/" in pin.url and pin.url.endswith(fixture["source"]["path"])
    assert fixture["source"]["commit"] == chart.source_commit
    assert len(pin.sha256) == 64
