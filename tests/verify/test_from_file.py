"""`ultraserver verify --from-file`: a log the user already has gets the verdict a cluster run of it would get."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.fake_cluster import FakeCluster, healthy_cluster
from helpers.stacks import ROOT
from ultraserver import cli
from ultraserver.verify import clients, from_file
from ultraserver.verify.checks import run_checks
from ultraserver.verify.expect import StackExpectation, expectation
from ultraserver.verify.verdict import Verdict

SAMPLES = ROOT / "tests" / "fixtures" / "samples"


def expected_of(stack: str) -> StackExpectation:
    return expectation(cli.stack_settings(ROOT, stack))


def judged(verdict: Verdict) -> tuple[bool, list[tuple[object, str, str]]]:
    """What a verdict decides, without the job or file name in its keys."""
    return verdict.passed, [(p.value, p.allowed, p.fix) for p in verdict.problems]


def in_cluster(stack: str, check: str, log: str) -> Verdict:
    """The verdict of `check` when the cluster's launcher log of that check is `log`."""
    expected = expected_of(stack)
    cluster = healthy_cluster(expected, nvlink_nodes=2)
    namespace = expected.imex_namespace if check == "nvlink" else expected.efa_namespace
    key = next(k for k in cluster.logs if k[0] == namespace)
    # Keep the node report the launcher writes before the run, so the cluster knows the cliques.
    report = "".join(line for line in cluster.logs[key].splitlines(keepends=True) if line.startswith("ultraserver"))
    cluster.logs[key] = report + log
    return next(v for v in run_checks(cluster, expected) if v.check == check)


@pytest.mark.parametrize(
    ("stack", "check", "name"),
    [
        ("gb200-x72", "nvlink", "nvbandwidth-gb200-2nodes-nvidia-docs.txt"),
        ("gb200-x72", "nvlink", "nvbandwidth-failures-github-issues.txt"),
        ("gb200-multi", "efa", "nccl-allreduce-2x-p5-eks-mpijob.txt"),
        ("gb200-multi", "efa", "nccl-debug-ofi-efa-p4d-eks.txt"),
        ("gb200-multi", "efa", "nccl-debug-socket-fallback-eks.txt"),
    ],
)
def test_a_file_gets_the_cluster_verdict(stack: str, check: str, name: str) -> None:
    path = SAMPLES / name
    from_log = from_file.judge_log_file(path, expected_of(stack))
    assert from_log.check == check
    assert judged(from_log) == judged(in_cluster(stack, check, path.read_text()))


def verify_file(*extra: str) -> int:
    return cli.main(["verify", "--stack", "gb200-x72", "--project-dir", str(ROOT), "--from-file", *extra])


def test_exit_codes_follow_the_verdict_and_the_cluster_is_not_read(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(clients, "connect", lambda kubeconfig: pytest.fail("the cluster was read"))
    assert verify_file(str(SAMPLES / "nvbandwidth-gb200-2nodes-nvidia-docs.txt")) == 0
    assert "lowest 797.65 GB/s" in capsys.readouterr().out
    assert verify_file(str(SAMPLES / "nvbandwidth-failures-github-issues.txt")) == 1


def test_a_file_of_no_known_tool_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "notes.txt"
    log.write_text("hello\n")
    assert verify_file(str(log)) == 2
    assert "neither nvbandwidth nor nccl-tests output" in capsys.readouterr().err
    # Named explicitly, the same file is judged (and fails: no matrix) instead.
    assert verify_file(str(log), "--log-kind", "nvbandwidth") == 1


def test_files_are_bounded_and_decoded_safely(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    big = tmp_path / "big.log"
    big.write_bytes(b"x" * 2048)
    monkeypatch.setattr(from_file, "MAX_LOG_BYTES", 1024)
    assert verify_file(str(big)) == 2
    assert "larger than" in capsys.readouterr().err
    latin = tmp_path / "latin.log"
    latin.write_bytes(b"# Avg bus bandwidth : 1\n\xff")
    assert verify_file(str(latin)) == 2
    assert "not UTF-8 at byte 24" in capsys.readouterr().err
    assert verify_file(str(tmp_path / "missing.log")) == 2
    assert "cannot be read" in capsys.readouterr().err


def test_an_unreachable_api_is_exit_4_like_status(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(clients, "connect", lambda kubeconfig: FakeCluster(down=True))
    code = cli.main(["verify", "--stack", "gb200-x72", "--project-dir", str(ROOT), "--kubeconfig", "k"])
    assert code == 4
    assert "not judged: the Kubernetes API did not answer" in capsys.readouterr().out
