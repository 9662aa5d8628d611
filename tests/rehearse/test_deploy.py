"""``rehearse --api real --deploy`` (issue 43 stage 3): the Kubernetes layer through a real Pulumi engine and
Kubernetes provider built from their Go modules.

The parts that need no engine are tested here always; the deploys themselves skip without the binaries (the skip
names the command that builds them) and fail instead under ULTRASERVER_REQUIRE_DEPLOY_ENGINE=1, which .ci/run sets
where the engine is built in the machine's cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import ssl
import tarfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from helpers.control_plane import require_control_plane
from helpers.render import helm_and_charts, packaged_chart
from helpers.stacks import stack_config
from ultraserver.cli import main
from ultraserver.config.settings import PROJECT
from ultraserver.facts.hardware.devices import COMPUTE_DOMAIN_CRD
from ultraserver.facts.pins import charts
from ultraserver.facts.pins.deploy_engine import KUBERNETES_PROVIDER, PULUMI_CLI
from ultraserver.facts.pins.manifests import DRA_DRIVER_CRDS, MPI_OPERATOR, by_file_name
from ultraserver.problems import ConfigError
from ultraserver.rehearse import deploy, deploy_program
from ultraserver.rehearse.binaries import (
    BUILD_COMMAND,
    cached,
    deploy_programs,
    ldflags,
    missing,
    module_replaces,
    programs,
)
from ultraserver.rehearse.chart_repo import chart_repository, relabelled
from ultraserver.rehearse.control_plane import ControlPlane
from ultraserver.rehearse.postrender import kept
from ultraserver.rehearse.tls import new_authority

REQUIRED = os.environ.get("ULTRASERVER_REQUIRE_DEPLOY_ENGINE") == "1"
"""Set by .ci/run where the engine is built in the cache (see there): the deploys then fail instead of skipping."""
DRA_CHART = f"{charts.DRA_DRIVER}-{charts.pinned(charts.DRA_DRIVER).version}.tgz"


def test_a_modules_own_replacements_of_one_module_by_another_are_repeated_and_local_ones_left_out() -> None:
    go_mod = "\n".join(
        [
            "module github.com/pulumi/pulumi/pkg/v3",
            "replace github.com/pulumi/pulumi/sdk/v3 => ../sdk",
            "replace github.com/atotto/clipboard => github.com/tgummerer/clipboard v0.0.0-20241001131231-d02d263e614e",
            "replace (",
            "\tgithub.com/a/b v1.0.0 => github.com/c/b v1.0.1 // a fork",
            "\tgithub.com/d/e => ./e",
            ")",
            "require github.com/x/y v1.2.3",
        ]
    )
    assert module_replaces(go_mod) == [
        "\tgithub.com/atotto/clipboard => github.com/tgummerer/clipboard v0.0.0-20241001131231-d02d263e614e",
        "\tgithub.com/a/b v1.0.0 => github.com/c/b v1.0.1",
    ]


def test_deploy_builds_the_control_plane_its_controller_manager_the_cli_and_the_provider() -> None:
    wanted, _ = deploy_programs("1.35")
    assert [p.name for p in wanted] == [
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "pulumi",
        "pulumi-resource-kubernetes",
    ]
    assert {p.version for p in wanted if p.module == "k8s.io/kubernetes"} == {"v1.35.4"}


def test_the_cli_and_the_provider_report_the_versions_they_are_built_at() -> None:
    assert f"-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version={PULUMI_CLI.version}" in ldflags(PULUMI_CLI)
    provider = "github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version"
    assert f"-X {provider}={KUBERNETES_PROVIDER.version}" in ldflags(KUBERNETES_PROVIDER)


def test_the_provider_version_is_the_one_the_engine_says_it_loaded() -> None:
    """Pulumi 3.274.1 records no plugin list for a provider found on the PATH; its warning names the version loaded
    (the line as the engine printed it in a --deploy run of gb200-x72)."""
    line = (
        "warning: resource plugin kubernetes is expected to have version >=4.34.2, but has "
        "4.0.0-20260115033456-f47bc2d6f199; the wrong version may be on your path, or this may be a bug in the plugin"
    )
    found = deploy.LOADED_PROVIDER.search("noise\n" + line)
    assert found is not None and found.group(1) == KUBERNETES_PROVIDER.version.lstrip("v")
    assert deploy.LOADED_PROVIDER.search(line.replace("kubernetes", "aws")) is None


def test_the_post_renderer_drops_webhooks_and_aggregated_apis_and_keeps_the_rest() -> None:
    text = yaml.safe_dump_all(
        [
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "kueue"}},
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration"},
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration"},
            {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService"},
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "kueue-controller-manager"}},
        ]
    )
    assert [d["kind"] for d in yaml.safe_load_all(kept(text))] == ["ServiceAccount", "Deployment"]


def _members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as packed:
        return {m.name: packed.extractfile(m).read() for m in packed.getmembers() if m.isfile()}  # type: ignore[union-attr]


def test_a_relabelled_chart_differs_from_the_packaged_one_in_its_version_alone(tmp_path: Path) -> None:
    source = packaged_chart(DRA_CHART)
    copy = relabelled(source, "0.4.1001", tmp_path / "relabelled")
    assert copy.name == f"{charts.DRA_DRIVER}-0.4.1001.tgz"
    before, after = _members(source), _members(copy)
    chart_yaml = f"{charts.DRA_DRIVER}/Chart.yaml"
    assert yaml.safe_load(after[chart_yaml])["version"] == "0.4.1001"
    assert {**yaml.safe_load(after[chart_yaml]), "version": "0.4.1"} == yaml.safe_load(before[chart_yaml])
    assert {k: v for k, v in after.items() if k != chart_yaml} == {k: v for k, v in before.items() if k != chart_yaml}


def test_the_step_version_is_the_pinned_charts_with_a_patch_no_release_has() -> None:
    pinned = charts.pinned(charts.DRA_DRIVER).version.lstrip("v").split(".")
    assert deploy_program.dra_step_version().split(".") == [pinned[0], pinned[1], str(int(pinned[2]) + 1000)]


def test_the_loopback_repository_serves_each_chart_and_version_over_https(tmp_path: Path) -> None:
    helm_and_charts()
    authority = new_authority()
    source = packaged_chart(DRA_CHART)
    packaged = [source, relabelled(source, deploy_program.dra_step_version(), tmp_path)]
    with chart_repository(packaged, authority, tmp_path / "repo") as url:
        context = ssl.create_default_context(cadata=authority.ca.decode())
        with urllib.request.urlopen(f"{url}/index.yaml", context=context) as answer:  # noqa: S310 - loopback
            index = yaml.safe_load(answer.read())
        entries = index["entries"][charts.DRA_DRIVER]
        assert sorted(e["version"] for e in entries) == sorted(["0.4.1", deploy_program.dra_step_version()])
        pinned = next(e for e in entries if e["version"] == "0.4.1")
        with urllib.request.urlopen(pinned["urls"][0], context=context) as answer:  # noqa: S310 - loopback
            assert hashlib.sha256(answer.read()).hexdigest() == pinned["digest"]


def test_the_settings_take_the_rehearsals_mirrors_and_the_step_version_on_every_release() -> None:
    config = stack_config("gb200-x72")
    settings = deploy_program.stack_settings_with(
        config,
        "gb200-x72",
        {"chartMirror": "https://127.0.0.1:8443/charts", "draDriver": {"version": "0.4.1001"}},
        untested=True,
    )
    assert settings.kubernetes.chart_mirror == "https://127.0.0.1:8443/charts"
    assert settings.kubernetes.dra_driver.version == "0.4.1001"
    assert settings.kubernetes.dra_driver.chart_mirror == "https://127.0.0.1:8443/charts"
    assert settings.kubernetes.kueue.chart_mirror == "https://127.0.0.1:8443/charts"
    assert settings.cluster.name == "gb200-x72"
    with pytest.raises(ConfigError, match="acceptUntestedVersions"):
        deploy_program.stack_settings_with(config, "gb200-x72", {"draDriver": {"version": "0.4.1001"}})


def test_the_manifest_mirror_takes_the_dra_crds_from_the_chart_and_asks_for_the_rest(tmp_path: Path) -> None:
    packaged_chart(DRA_CHART)
    asked: list[Any] = []

    def read_pin(pin: Any) -> bytes:
        asked.append(pin)
        return b"from the pin's own source"

    folder = deploy_program.pinned_files(helm_and_charts()[1], tmp_path, read_pin)
    assert asked == [MPI_OPERATOR]
    for pin in DRA_DRIVER_CRDS.values():
        assert hashlib.sha256((folder / pin.file_name).read_bytes()).hexdigest() == pin.sha256
    assert sorted(p.name for p in folder.iterdir()) == sorted(by_file_name())


def require_engine() -> None:
    """Skip unless the control plane and the Pulumi engine are built (fail under ULTRASERVER_REQUIRE_DEPLOY_ENGINE)."""
    absent = [p.key for p in missing(deploy_programs()[0])]
    if absent:
        message = f"not built: {', '.join(absent)}; build them: {BUILD_COMMAND} --deploy"
        if REQUIRED:
            pytest.fail(f"ULTRASERVER_REQUIRE_DEPLOY_ENGINE=1 but {message}")
        pytest.skip(message)


@pytest.mark.parametrize("stack", ["gb200-x72-dra"])
def test_the_layer_deploys_again_with_no_changes_and_keeps_the_compute_domain_crds(stack: str, tmp_path: Path) -> None:
    require_engine()
    out = tmp_path / "rehearsal.json"
    charts_dir = str(helm_and_charts()[1])
    code = main(["rehearse", "--stack", stack, "--api", "real", "--charts", charts_dir, "--deploy", "--json", str(out)])
    document = json.loads(out.read_text())["deploy"]
    steps = {s["step"]: s for s in document["steps"]}
    assert code == 0, document
    assert steps["pulumi up"]["changes"]["create"] > 0
    assert steps["second pulumi up"]["changed"] == 0
    assert document["kubernetesProvider"] == KUBERNETES_PROVIDER.version.lstrip("v")
    assert all(not s["failed"] for s in document["steps"])
    compute_domain_crd = f"CustomResourceDefinition {COMPUTE_DOMAIN_CRD} kept"
    assert any(line.startswith(compute_domain_crd) for line in steps["pulumi destroy"]["checked"])
    version_change = next(s for s in document["steps"] if s["step"].startswith("DRA driver chart"))
    assert version_change["changes"].get("update", 0) >= 1
    assert any(line.startswith("ComputeDomain ") for line in version_change["checked"])


def test_a_helm_hook_job_is_finished_as_the_api_server_accepts_and_other_jobs_are_left_alone(tmp_path: Path) -> None:
    require_control_plane()
    paths = {p.name: cached(p) for p in programs()[0]}
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "cleanup", "namespace": "default", "annotations": {deploy.HOOK: "pre-delete"}},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}},
    }
    other = {**job, "metadata": {"name": "other", "namespace": "default"}}
    finished: list[str] = []
    with ControlPlane(paths, tmp_path / "cp") as plane:  # type: ignore[arg-type]
        for body in (job, other):
            plane.call("POST", "/apis/batch/v1/namespaces/default/jobs", body)
        with deploy.hook_jobs_finished(plane, finished):
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not finished:
                time.sleep(0.5)
            time.sleep(1)
        done = plane.call("GET", "/apis/batch/v1/namespaces/default/jobs/cleanup")["status"]
        untouched = plane.call("GET", "/apis/batch/v1/namespaces/default/jobs/other").get("status") or {}
    assert finished == ["default/cleanup (pre-delete)"]
    assert {c["type"]: c["status"] for c in done["conditions"]} == {"SuccessCriteriaMet": "True", "Complete": "True"}
    assert done["succeeded"] == 1
    assert not untouched.get("conditions")


def test_the_built_cli_runs_the_standin_platform_and_a_stack_reading_it_with_no_change_the_second_time(
    tmp_path: Path,
) -> None:
    """The engine alone (no provider): the file backend, the passphrase, the SDK serving an inline program, the
    StackReference to the stand-in, a second `up` with --expect-no-changes, `destroy`."""
    cli = cached(PULUMI_CLI)
    if cli is None:
        message = f"not built: {PULUMI_CLI.key}; build it: {BUILD_COMMAND} --deploy"
        if REQUIRED:
            pytest.fail(f"ULTRASERVER_REQUIRE_DEPLOY_ENGINE=1 but {message}")
        pytest.skip(message)
    settings = deploy_program.stack_settings_with(stack_config("gb200-x72"), "gb200-x72", {})
    engine = deploy_program.Engine(
        {PULUMI_CLI.name: cli, KUBERNETES_PROVIDER.name: tmp_path / "absent"}, tmp_path, new_authority().ca
    )
    shown: dict[str, Any] = {"on_output": lambda text: None, "color": "never"}
    standin = engine.stack(PROJECT, "gb200-x72", deploy_program.standin_program(settings, "kind: Config\n"))
    assert standin.up(**shown).summary.resource_changes == {"create": 1}

    def reader() -> None:
        platform = pulumi.StackReference(f"organization/{PROJECT}/gb200-x72")
        pulumi.export("clusterName", platform.require_output("clusterName"))
        pulumi.export("warnings", platform.require_output("reclaimWarningQueueUrl"))

    layer = engine.stack(deploy.LAYER_PROJECT_NAME, "gb200-x72", reader)
    first = layer.up(**shown)
    assert first.outputs["clusterName"].value == "gb200-x72"
    assert first.outputs["warnings"].value.startswith("https://sqs.us-east-1.amazonaws.com/111122223333/")
    # The stack itself, unchanged; the StackReference is a read, which the engine does not count.
    assert layer.up(expect_no_changes=True, **shown).summary.resource_changes == {"same": 1}
    assert layer.workspace.pulumi_version == PULUMI_CLI.version.lstrip("v")
    assert layer.destroy(**shown).summary.resource_changes.get("delete", 0) >= 1
