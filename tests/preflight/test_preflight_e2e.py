"""End to end: `python -m ultraserver preflight --stack` against moto's server on loopback, as a separate process."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from helpers.preflight import REGION, closed_port
from helpers.stacks import ROOT
from moto.server import ThreadedMotoServer

COMPONENTS = ROOT / "components"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
STACK = "e2e"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    """A moto server on a free loopback port."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without AWS settings, plus extra."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["PYTHONPATH"] = str(COMPONENTS)
    env.update(extra)
    return env


def run_cli(project: Path, endpoint_url: str, env: dict[str, str], stack: str = STACK) -> subprocess.CompletedProcess:
    """Run `ultraserver preflight` in a child process from the project directory."""
    return subprocess.run(
        [sys.executable, "-m", "ultraserver", "preflight", "--stack", stack, "--endpoint-url", endpoint_url],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=120,
    )


def write_project(directory: Path, config: dict[str, Any]) -> Path:
    """A Pulumi project directory holding one stack file with this config."""
    (directory / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (directory / "stacks").mkdir()
    (directory / "stacks" / f"Pulumi.{STACK}.yaml").write_text(yaml.safe_dump({"config": config}))
    return directory


def seeded_project(endpoint_url: str, directory: Path) -> Path:
    """Create a VPC and subnets in the emulator; write a stack naming them plus a reservation moto cannot model."""
    factory: Any = boto3.client  # a run-time service name matches no typed-stub overload
    keys = {k.lower(): v for k, v in CREDENTIALS.items()}
    ec2 = factory("ec2", region_name=REGION, endpoint_url=endpoint_url, **keys)
    vpc = ec2.create_vpc(CidrBlock="10.20.0.0/16")["Vpc"]["VpcId"]

    def subnet(cidr: str, zone: str) -> str:
        return str(ec2.create_subnet(VpcId=vpc, CidrBlock=cidr, AvailabilityZone=zone)["Subnet"]["SubnetId"])

    private = [subnet("10.20.0.0/23", "us-east-1a"), subnet("10.20.2.0/23", "us-east-1b")]
    gpu = subnet("10.20.4.0/22", "us-east-1a")
    config = {
        "aws:region": REGION,
        "ultraserver-eks:cluster": {
            "name": STACK,
            "kubernetesVersion": "1.33",
            "endpointPublicAccessCidrs": ["203.0.113.0/24"],
        },
        "ultraserver-eks:network": {"vpcId": vpc, "privateSubnetIds": private, "gpuSubnetIds": {"us-east-1a": [gpu]}},
        "ultraserver-eks:gpuNodeGroups": [
            {
                "name": "gpu",
                "ultraserverType": "u-p6e-gb200x36",
                # moto has no Local Zones, so the GPU subnets sit in a regional zone here.
                "availabilityZone": "us-east-1a",
                # moto's zones are regional ones: outside the toolkit's catalog, so preflight asks EC2.
                "zoneNotInCatalog": True,
                "capacityReservationIds": ["cr-0aaaaaaaaaaaaaaa1"],
                # A pinned image: the EKS AMI parameters live under /aws/service/, which moto cannot seed.
                "amiId": "ami-0123456789abcdef0",
                "amiRelease": "v20251103",
            }
        ],
    }
    return write_project(directory, config)


def rows(stdout: str) -> dict[str, str]:
    """Status by check name from the printed table (status, two spaces, name, two spaces, detail)."""
    result = {}
    for line in stdout.splitlines():
        parts = line.split("  ")
        if parts[0] in ("PASS", "WARN", "FAIL"):
            name = next(p for p in parts[1:] if p).strip()
            result[name] = parts[0]
    return result


def test_cli_against_moto_server(endpoint: str, tmp_path: Path) -> None:
    result = run_cli(seeded_project(endpoint, tmp_path), endpoint, clean_env(**CREDENTIALS))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    status = rows(result.stdout)
    subnets = [n for n in status if n.startswith("subnet ") and not n.endswith("free IPs")]
    assert len(subnets) == 3
    # What the emulator models really passes...
    assert status["zone us-east-1a opted in"] == "PASS"
    # moto's offering catalog has no p6e-gb200: the live check of zoneNotInCatalog runs and refuses the zone.
    assert status["gpu: us-east-1a offers p6e-gb200.36xlarge"] == "FAIL"
    assert status["AMI release"] == "PASS"
    assert all(status[s] == "PASS" and status[f"{s} free IPs"] == "PASS" for s in subnets)
    assert status["managed node group quota"] == "WARN"  # moto's Service Quotas knows no EKS quota
    # ...and the reservation AWS cannot confirm is a fail line with a fix.
    assert status["gpu: reservations"] == "FAIL"
    lines = result.stdout.splitlines()
    fail_at = next(i for i, line in enumerate(lines) if line.startswith("FAIL") and "gpu: reservations" in line)
    assert "ec2:DescribeCapacityReservations" in lines[fail_at]
    assert lines[fail_at + 1].strip().startswith("fix: ec2:DescribeCapacityReservations gave no usable answer")
    assert lines[-2].endswith("failed") and " 0 failed" not in lines[-2]
    # The run ends with the reason for its exit code, on stderr too when stdout is piped.
    assert lines[-1] == "ultraserver preflight: exit 1: checks failed (the failures are listed above)"
    assert result.stderr.splitlines()[-1] == lines[-1]


def one_line_exit_2(result: subprocess.CompletedProcess) -> str:
    """Assert exit 2 with exactly one stderr line and no traceback; return that line."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_cli_unreachable_endpoint_exits_2(endpoint: str, tmp_path: Path) -> None:
    project = seeded_project(endpoint, tmp_path)
    line = one_line_exit_2(run_cli(project, f"http://127.0.0.1:{closed_port()}", clean_env(**CREDENTIALS)))
    assert line.startswith("preflight: cannot reach the AWS endpoint")


def test_cli_without_credentials_exits_2(endpoint: str, tmp_path: Path) -> None:
    project = seeded_project(endpoint, tmp_path)
    env = clean_env(
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        AWS_CONFIG_FILE=str(tmp_path / "none"),
        AWS_EC2_METADATA_DISABLED="true",
    )
    line = one_line_exit_2(run_cli(project, endpoint, env))
    assert line.startswith("preflight: no usable AWS credentials")


def test_cli_invalid_stack_exits_2_before_asking_aws(tmp_path: Path) -> None:
    config = {
        "aws:region": REGION,
        "ultraserver-eks:gpuNodeGroups": [{"name": "gpu", "ultraserverType": "x99", "availabilityZone": "us-east-1a"}],
    }
    project = write_project(tmp_path, config)
    # The endpoint is closed: the stack must be rejected before any AWS call is attempted.
    result = run_cli(project, f"http://127.0.0.1:{closed_port()}", clean_env(**CREDENTIALS))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    assert "ultraserver-eks:gpuNodeGroups[0].ultraserverType" in result.stderr
    assert "x99" in result.stderr


def test_cli_preflight_of_a_shipped_stack_against_moto(endpoint: str) -> None:
    """`ultraserver preflight --stack` builds its checks from the stack file; moto has none of its resources."""
    result = run_cli(ROOT, endpoint, clean_env(**CREDENTIALS), stack="gb200-x36")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "subnet-0ccccccccccccccc1" in result.stdout
    assert "nvl36: reservations" in result.stdout
    assert "fix:" in result.stdout
