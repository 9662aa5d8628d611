"""The parts of real scheduling and admission that need no binaries: the Kueue Configuration taken from the plan,
the sample whole-UltraServer job, the channel templates played for the DRA driver, and the pinned manifests read
and digest-checked for the real API (rehearse/pinned_files.py)."""

from __future__ import annotations

import fcntl
import hashlib
import threading
from pathlib import Path

import pytest
import yaml
from helpers.stacks import ROOT, stack_config
from ultraserver.builders.manifests import git_blob_id
from ultraserver.config.settings import parse_settings
from ultraserver.config.views import imex_targets
from ultraserver.facts.pins.control_plane import KWOK
from ultraserver.facts.pins.manifests import DRA_DRIVER_CRDS, MPI_OPERATOR, PinnedManifest
from ultraserver.offline.resource import HELM_RELEASE
from ultraserver.problems import ConfigError
from ultraserver.rehearse import binaries, pinned_files, scheduling
from ultraserver.rehearse.controllers import local_configuration, plan_configuration
from ultraserver.rehearse.run import default_moment, stack_plan
from ultraserver.rehearse.scheduling import channel_templates, sample_job
from ultraserver.verify.expect import expectation

RUNNING_OUTSIDE = {"leaderElection", "health", "metrics", "webhook", "internalCertManagement", "featureGates"}
"""The only keys of the plan's Configuration a controller outside a cluster may change."""


def plan_of(stack: str):  # noqa: ANN201 - a Plan
    settings = parse_settings(stack_config(stack))
    return settings, stack_plan(ROOT, stack, settings, default_moment(expectation(settings)))


def test_kueue_runs_with_the_plans_configuration_but_what_a_cluster_gives_it(tmp_path: Path) -> None:
    _, plan = plan_of("gb200-x72-dra")
    releases = [r.inputs for r in plan.of_type(HELM_RELEASE)]
    kueue = next(r for r in releases if str(r["chart"]).endswith("kueue"))
    planned = yaml.safe_load(kueue["values"]["managerConfig"]["controllerManagerConfigYaml"])
    config = plan_configuration(releases)
    assert config == planned
    local = local_configuration(config, tmp_path)
    assert {k: v for k, v in local.items() if k not in RUNNING_OUTSIDE} == {
        k: v for k, v in planned.items() if k not in RUNNING_OUTSIDE
    }
    assert {k: v for k, v in local["featureGates"].items() if k != "VisibilityOnDemand"} == planned.get(
        "featureGates", {}
    )
    assert local["leaderElection"] == {"leaderElect": False}
    assert local["webhook"]["certDir"] == str(tmp_path)
    assert local["health"]["healthProbeBindAddress"].startswith("127.0.0.1:")


def test_a_stack_without_kueue_has_no_configuration() -> None:
    assert plan_configuration([{"chart": "gpu-operator", "values": {}}]) is None


@pytest.mark.parametrize("stack", ["gb200-x72", "gb200-x72-dra"])
def test_the_sample_job_fills_one_ultraserver_with_one_whole_node_pod_per_node(stack: str) -> None:
    settings = parse_settings(stack_config(stack))
    target = imex_targets(settings)[0]
    objects = sample_job(settings, "sample", "default")
    job = objects[-1]
    assert job["spec"]["suspend"] is True
    assert job["spec"]["parallelism"] == job["spec"]["completions"] == target.available_nodes
    pod = job["spec"]["template"]["spec"]
    assert "nodeSelector" not in pod  # Kueue picks the UltraServer
    container = pod["containers"][0]
    if stack.endswith("-dra"):
        template = objects[0]
        requests = {
            r["exactly"]["deviceClassName"]: r["exactly"]["count"]
            for r in template["spec"]["spec"]["devices"]["requests"]
        }
        assert sum(requests.values()) == target.node_devices.gpus + target.node_devices.efa_devices
        assert pod["resourceClaims"][0]["resourceClaimTemplateName"] == template["metadata"]["name"]
        assert container["resources"]["requests"]["cpu"]
    else:
        assert len(objects) == 1
        assert int(container["resources"]["limits"]["nvidia.com/gpu"]) == target.node_devices.gpus


def test_each_compute_domain_gets_the_channel_template_its_pods_reference() -> None:
    _, plan = plan_of("gb200-x72")
    objects = [r.inputs for r in plan.resources if r.inputs.get("kind") in ("ComputeDomain", "MPIJob")]
    templates = {(t["metadata"]["namespace"], t["metadata"]["name"]) for t in channel_templates(objects)}
    referenced = {
        (job["metadata"]["namespace"], claim["resourceClaimTemplateName"])
        for job in objects
        if job["kind"] == "MPIJob"
        for claim in job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"].get("resourceClaims") or []
        if "channel" in claim["resourceClaimTemplateName"]
    }
    assert referenced and referenced <= templates


class _Stopped(Exception):
    """Raised by the stand-in ``start``: the test ends where Kueue would start."""


def test_the_channel_templates_exist_before_kueue_starts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Kueue marks a workload whose claim template is missing inadmissible and retries it with a doubling backoff,
    watching no templates (kueue v0.19.2 workload_controller.go): a template made after Kueue starts left a check
    MPIJob unadmitted for minutes on a loaded machine (CI). So they are served before Kueue runs."""
    settings, plan = plan_of("gb200-x72-dra")
    objects = [r.inputs for r in plan.resources if r.inputs.get("kind") in ("ComputeDomain", "MPIJob")]
    releases = [r.inputs for r in plan.of_type(HELM_RELEASE)]
    put: list[dict] = []
    served_when_started: list[dict] = []

    class Served:
        def put(self, more: list[dict]) -> None:
            put.extend(more)

    class Plane:
        folder = tmp_path

        def call(self, method: str, path: str, *_: object) -> dict:
            return {"items": []}

    def start(*_: object) -> None:
        served_when_started.extend(put)
        raise _Stopped

    monkeypatch.setattr(scheduling, "start", start)
    monkeypatch.setattr(binaries, "ensure", lambda wanted, out: {})
    with pytest.raises(_Stopped):
        scheduling.admission_stage(Plane(), Served(), settings, objects, releases, None)  # type: ignore[arg-type]
    assert served_when_started == channel_templates(objects) != []


def _pin(data: bytes) -> PinnedManifest:
    return PinnedManifest(
        name="test manifest",
        url="https://example.invalid/owner/repo/0123456789012345678901234567890123456789/deploy/file.yaml",
        sha256=hashlib.sha256(data).hexdigest(),
        git_blob=git_blob_id(data),
    )


def test_a_pinned_manifest_is_read_verified_and_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    data = b"kind: CustomResourceDefinition\n"
    monkeypatch.setattr(pinned_files, "download", lambda url: data)
    assert pinned_files.pinned_bytes(_pin(data)) == data
    assert (tmp_path / "ultraserver" / "manifests" / "file.yaml").read_bytes() == data


def test_a_tampered_copy_is_refused_and_every_source_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    pin = _pin(b"the pinned bytes\n")
    cached = tmp_path / "ultraserver" / "manifests" / "file.yaml"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"tampered\n")
    monkeypatch.setattr(pinned_files, "download", lambda url: b"also tampered\n")
    with pytest.raises(ConfigError) as raised:
        pinned_files.pinned_bytes(pin)
    message = str(raised.value.items[0])
    assert str(cached) in message and pin.url in message and pin.sha256 in message


def test_the_mpi_operator_pin_names_the_go_module_of_its_tag_and_the_files_path() -> None:
    assert MPI_OPERATOR.go_module.endswith("@" + "v0.8.0")
    assert MPI_OPERATOR.repository_path == "deploy/v2beta1/mpi-operator.yaml"


def test_a_built_program_is_used_while_another_build_holds_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A rehearsal must not wait behind another program's build (the Kueue build holds the lock for many minutes).
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    program = KWOK
    built = binaries.cache_dir() / program.key
    built.parent.mkdir(parents=True)
    built.write_text("#!/bin/sh\n")
    built.chmod(0o755)
    with (binaries.cache_dir() / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found: list[Path] = []
        worker = threading.Thread(target=lambda: found.append(binaries.build(program)), daemon=True)
        worker.start()
        worker.join(timeout=10)
        fcntl.flock(lock, fcntl.LOCK_UN)
    assert found == [built]


def test_the_module_caches_each_pin_no_chart_holds_and_fails_naming_one_it_cannot_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    data = b"kind: Deployment\n"
    pin = _pin(data)
    # The DRA driver's pins are its chart's crds/: the render and the rehearsal read them from the chart.
    dra = next(iter(DRA_DRIVER_CRDS.values()))
    monkeypatch.setattr(pinned_files, "by_file_name", lambda: {pin.file_name: pin, dra.file_name: dra})
    read: list[str] = []
    monkeypatch.setattr(pinned_files, "download", lambda url: read.append(url) or data)
    assert pinned_files.main() == 0
    assert read == [pin.url]
    assert capsys.readouterr().out.split() == [str(tmp_path / "ultraserver" / "manifests" / "file.yaml")]

    def offline(url: str) -> bytes:
        raise OSError("no network")

    (tmp_path / "ultraserver" / "manifests" / "file.yaml").unlink()
    monkeypatch.setattr(pinned_files, "download", offline)
    assert pinned_files.main() == 1
    error = capsys.readouterr().err
    assert "test manifest" in error and "no network" in error and pin.url in error


def test_the_copy_in_the_stacks_manifest_mirror_is_read_where_the_pinned_url_is_not_reached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    data = b"kind: Deployment\n"
    pin = _pin(data)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / pin.file_name).write_bytes(data)

    def offline(url: str) -> bytes:
        raise OSError("no route to GitHub")

    monkeypatch.setattr(pinned_files, "download", offline)
    assert pinned_files.pinned_bytes(pin, str(mirror / pin.file_name)) == data
    (mirror / pin.file_name).write_bytes(b"changed\n")
    (tmp_path / "cache" / "ultraserver" / "manifests" / pin.file_name).unlink()
    with pytest.raises(ConfigError) as raised:
        pinned_files.pinned_bytes(pin, str(mirror / pin.file_name))
    assert f"{mirror / pin.file_name} has sha256" in str(raised.value)
