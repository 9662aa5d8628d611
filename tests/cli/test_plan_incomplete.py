"""`ultraserver plan` fails on a plan the real engine would refuse or silently lose an edge of."""

from __future__ import annotations

from pathlib import Path

from helpers.cli import run_main

PROGRAM = """
import pulumi_aws as aws

vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
# An input read from an output that turns out None: Pulumi drops vpcId (a required argument) and the edge to the VPC.
aws.ec2.Subnet("subnet", vpc_id=vpc.id.apply(lambda _: None), cidr_block="10.0.0.0/24")
"""


def test_plan_fails_on_a_dropped_required_input(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: dropped\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (tmp_path / "__main__.py").write_text(PROGRAM)
    result = run_main("plan", "--stack", "dev", "--project-dir", str(tmp_path))
    assert result.code == 1
    output = result.stdout + result.stderr
    assert "no 'vpcId'" in output and "every required argument of aws:ec2/subnet:Subnet" in output
    assert "input vpcId of aws:ec2/subnet:Subnet resolved to None" in output
    assert "exit 1: the plan is incomplete (2 input(s)" in result.stderr
