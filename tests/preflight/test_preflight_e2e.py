"""End to end: `python -m ultraserver.preflight` against moto's server on loopback, as a separate process."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer
from ultraserver.preflight.checks import PreflightGroup, PreflightTarget

REGION = "us-east-1"
COMPONENTS = Path(__file__).resolve().parents[2] / "components"
IMAGE_PARAM = "/ultraserver-e2e/eks/1.33/nvidia/recommended/image_id"


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


CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def run_cli(target_file: Path, endpoint_url: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the preflight entry point in a child process."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "ultraserver.preflight",
            "--target",
            str(target_file),
            "--region",
            REGION,
            "--endpoint-url",
            endpoint_url,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def seeded_target(endpoint_url: str, tmp_path: Path) -> Path:
    """Create a subnet and AMI parameters in the emulator; write a target naming them plus unknown reservations."""
    factory: Any = boto3.client  # a run-time service name matches no typed-stub overload

    def client(name: str) -> Any:
        keys = {k.lower(): v for k, v in CREDENTIALS.items()}
        return factory(name, region_name=REGION, endpoint_url=endpoint_url, **keys)

    ec2 = client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.20.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.20.1.0/24", AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
    ssm = client("ssm")
    ssm.put_parameter(Name=IMAGE_PARAM, Value="ami-0123456789abcdef0", Type="String", Overwrite=True)
    ssm.put_parameter(
        Name=IMAGE_PARAM.replace("image_id", "release_version"), Value="1.33.5-20251103", Type="String", Overwrite=True
    )
    target = PreflightTarget(
        region=REGION,
        kubernetes_version="1.33",
        ami_ssm_parameter=IMAGE_PARAM,
        ami_release=None,
        groups=[
            PreflightGroup(
                name="gpu",
                ultraserver_type="u-p6e-gb200x72",
                capacity_reservation_ids=["cr-0aaaaaaaaaaaaaaa1"],
                capacity_reservation_resource_group_arn=None,
                ultraserver_count=1,
                instances_per_ultraserver=18,
                # moto has no Local Zones, so the GPU subnets sit in a regional zone here.
                availability_zone="us-east-1a",
                managed=True,
            )
        ],
        existing_subnets={subnet: "us-east-1a"},
        required_free_ips={subnet: 100},
        managed_node_group_count=2,
    )
    path = tmp_path / "target.json"
    path.write_text(json.dumps(dataclasses.asdict(target)))
    return path


def rows(stdout: str) -> dict[str, str]:
    """Status by check name from the printed table (status, two spaces, name, two spaces, detail)."""
    result = {}
    for line in stdout.splitlines()[1:]:
        parts = line.split("  ")
        if parts[0] in ("PASS", "WARN", "FAIL"):
            name = next(p for p in parts[1:] if p).strip()
            result[name] = parts[0]
    return result


def test_cli_against_moto_server(endpoint: str, tmp_path: Path) -> None:
    result = run_cli(seeded_target(endpoint, tmp_path), endpoint, clean_env(**CREDENTIALS))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    status = rows(result.stdout)
    subnet = next(n.split()[1] for n in status if n.startswith("subnet "))
    # What the emulator models really passes...
    assert status["zone us-east-1a opted in"] == "PASS"
    assert status["AMI parameter"] == "PASS"
    assert status["AMI release"] == "PASS"
    assert status[f"subnet {subnet}"] == "PASS"
    assert status[f"subnet {subnet} free IPs"] == "PASS"
    assert status["managed node group quota"] == "WARN"  # moto's Service Quotas knows no EKS quota
    # ...and the reservation AWS cannot confirm is a fail line with a fix.
    assert status["gpu: reservations"] == "FAIL"
    lines = result.stdout.splitlines()
    fail_at = next(i for i, line in enumerate(lines) if line.startswith("FAIL") and "gpu: reservations" in line)
    assert "ec2:DescribeCapacityReservations" in lines[fail_at]
    assert lines[fail_at + 1].strip().startswith("fix: ec2:DescribeCapacityReservations gave no usable answer")
    assert lines[-1].endswith("failed") and " 0 failed" not in lines[-1]


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def one_line_exit_2(result: subprocess.CompletedProcess[str]) -> str:
    """Assert exit 2 with exactly one stderr line and no traceback; return that line."""
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_cli_unreachable_endpoint_exits_2(endpoint: str, tmp_path: Path) -> None:
    target = seeded_target(endpoint, tmp_path)
    line = one_line_exit_2(run_cli(target, f"http://127.0.0.1:{closed_port()}", clean_env(**CREDENTIALS)))
    assert line.startswith("preflight: cannot reach the AWS endpoint")


def test_cli_without_credentials_exits_2(endpoint: str, tmp_path: Path) -> None:
    target = seeded_target(endpoint, tmp_path)
    env = clean_env(
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
        AWS_CONFIG_FILE=str(tmp_path / "none"),
        AWS_EC2_METADATA_DISABLED="true",
    )
    line = one_line_exit_2(run_cli(target, endpoint, env))
    assert line.startswith("preflight: no usable AWS credentials")


def test_cli_bad_target_file_exits_2(endpoint: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"region": REGION}))
    line = one_line_exit_2(run_cli(bad, endpoint, clean_env(**CREDENTIALS)))
    assert "target.groups: missing" in line


def test_cli_preflight_of_a_shipped_stack_against_moto(endpoint: str) -> None:
    """`ultraserver preflight --stack` builds its checks from the stack file; moto has none of its resources."""
    root = COMPONENTS.parent
    result = subprocess.run(
        [sys.executable, "-m", "ultraserver", "preflight", "--stack", "gb200-x36", "--endpoint-url", endpoint],
        capture_output=True,
        text=True,
        env=clean_env(**CREDENTIALS),
        cwd=root,
        timeout=120,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "subnet-0ccccccccccccccc1" in result.stdout
    assert "nvl36: reservations" in result.stdout
    assert "fix:" in result.stdout
