"""The parts of ``--api real`` that need no control plane: which release runs for a stack's minor, how the build
stamps its version, which ServiceAccount each in-cluster script runs as, the CLI's refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli import run_main
from ultraserver.facts.pins.control_plane import KUBERNETES_RELEASES, kube_apiserver, kubernetes_release
from ultraserver.rehearse.apis import script_account
from ultraserver.rehearse.binaries import BUILD_COMMAND, cache_dir, ldflags, main, programs


def test_the_stacks_minor_runs_when_it_is_built_else_the_nearest_and_it_says_so() -> None:
    assert kubernetes_release("1.35") == (KUBERNETES_RELEASES["1.35"], "")
    version, note = kubernetes_release("1.33")
    assert version == KUBERNETES_RELEASES["1.34"] and "1.33 is not built" in note and version in note
    assert kubernetes_release("1.38")[0] == KUBERNETES_RELEASES["1.36"]


def test_kube_apiserver_is_stamped_with_its_release_so_version_reports_it() -> None:
    flags = ldflags(kube_apiserver("v1.35.4"))
    assert "-X k8s.io/component-base/version.gitVersion=v1.35.4" in flags
    assert "-X k8s.io/component-base/version.gitMinor=35" in flags
    etcd = programs("1.35")[0][0]
    assert "gitVersion" not in ldflags(etcd)


def test_the_cache_is_outside_the_repository_and_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "ultraserver" / "bin"
    assert [p.key for p in programs("1.35")[0]] == ["etcd-v3.6.16", "kube-apiserver-v1.35.4"]
    assert BUILD_COMMAND == "python -m ultraserver.rehearse.binaries"


def test_cached_builds_nothing_and_names_what_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`.ci/run` asks with --cached whether the deploy engine is built before it runs tier 3 (no Go build starts)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PATH", "")  # a build would need `go`: finding none would fail differently
    assert main(["--deploy", "--cached"]) == 1
    absent = capsys.readouterr().err
    assert "not built: pulumi-resource-kubernetes-" in absent and "not built: etcd-v3.6.16" in absent
    for program in programs("1.35")[0]:
        built = cache_dir() / program.key
        built.parent.mkdir(parents=True, exist_ok=True)
        built.write_text("")
        built.chmod(0o755)
    assert main(["--cached"]) == 1  # the scheduling programs are still missing
    assert "etcd" not in capsys.readouterr().err


def test_each_script_runs_as_the_service_account_its_cronjob_names() -> None:
    def cronjob(variable: str, account: str | None) -> dict:
        pod = {"containers": [{"name": "c", "env": [{"name": variable, "value": "[]"}]}]}
        if account:
            pod["serviceAccountName"] = account
        return {
            "kind": "CronJob",
            "metadata": {"name": variable.lower(), "namespace": "ops"},
            "spec": {"jobTemplate": {"spec": {"template": {"spec": pod}}}},
        }

    objects = [cronjob("EXPECTED", "drift"), cronjob("BLOCKS", None)]
    assert script_account(objects, "EXPECTED") == ("ops", "drift")
    assert script_account(objects, "BLOCKS") == ("ops", "default")


def test_charts_without_the_real_api_is_a_usage_error(tmp_path: Path) -> None:
    done = run_main("rehearse", "--stack", "gb200-x72", "--charts", str(tmp_path))
    assert done.code == 2
    assert "--charts/--crds" in done.stderr and "add --api real" in done.stderr
