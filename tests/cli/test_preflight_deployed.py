"""``preflight --deployed FILE``: the access entries of the stack's `pulumi stack export` reach the checks; a file
of another stack, or one that is no state, is a usage error naming the option."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_main
from ultraserver.config.access_entries import DeployedEntry
from ultraserver.preflight import checks

A = "arn:aws:iam::111122223333:role/PlatformAdmin"
ENTRY_URN = (
    "urn:pulumi:{stack}::ultraserver-eks::ultraserver:index:Platform$ultraserver:index:Cluster$eks:index:Cluster"
    "$aws:eks/accessEntry:AccessEntry::gb200-x72-admin-0"
)


def export(path: Path, stack: str) -> Path:
    """A `pulumi stack export` file with one positional access entry and one other resource."""
    urn = ENTRY_URN.format(stack=stack)
    resources = [
        {"urn": urn, "type": "aws:eks/accessEntry:AccessEntry", "inputs": {"principalArn": A}},
        {"urn": f"urn:pulumi:{stack}::ultraserver-eks::aws:s3/bucket:Bucket::b", "type": "aws:s3/bucket:Bucket"},
    ]
    path.write_text(json.dumps({"version": 3, "deployment": {"resources": resources}}))
    return path


def test_the_deployed_entries_reach_preflight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(checks, "run_preflight", lambda target, clients: seen.append(target) or [])
    run = run_main("preflight", "--stack", "gb200-x72", "--deployed", str(export(tmp_path / "s.json", "gb200-x72")))
    assert run.code == 0, run.stderr
    assert seen[0].deployed_entries == (DeployedEntry(ENTRY_URN.format(stack="gb200-x72"), A),)


def test_without_deployed_the_target_says_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(checks, "run_preflight", lambda target, clients: seen.append(target) or [])
    assert run_main("preflight", "--stack", "gb200-x72").code == 0
    assert seen[0].deployed_entries is None


def test_another_stacks_state_is_refused(tmp_path: Path) -> None:
    run = run_main("preflight", "--stack", "gb200-x72", "--deployed", str(export(tmp_path / "s.json", "prod")))
    assert run.code == 2
    assert "--deployed" in run.stderr and "the state of stack prod" in run.stderr
    assert "pulumi stack export --stack gb200-x72" in run.stderr


def test_a_file_that_is_no_state_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("[1, 2]")
    run = run_main("preflight", "--stack", "gb200-x72", "--deployed", str(tmp_path / "x.json"))
    assert run.code == 2 and "deployment.resources" in run.stderr


def test_plan_deployed_refuses_an_admin_list_changed_in_the_migrating_update(tmp_path: Path) -> None:
    # gb200-x72 lists arn:aws:iam::111122223333:role/PlatformAdmin first; the state's admin-0 is another principal.
    state = export(tmp_path / "s.json", "gb200-x72")
    state.write_text(state.read_text().replace(A, "arn:aws:iam::111122223333:role/Oncall"))
    run = run_main("plan", "--stack", "gb200-x72", "--deployed", str(state))
    assert run.code == 2, run.stderr
    assert "cluster.adminPrincipalArns" in run.stderr
    assert "first run `pulumi up` with the list as deployed (arn:aws:iam::111122223333:role/Oncall)" in run.stderr


def test_plan_deployed_passes_the_list_as_deployed(tmp_path: Path) -> None:
    run = run_main("plan", "--stack", "gb200-x72", "--deployed", str(export(tmp_path / "s.json", "gb200-x72")))
    assert run.code == 0, run.stderr
    assert "with the list as deployed" not in run.stderr + run.stdout
