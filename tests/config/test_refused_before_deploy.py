"""Values the stack file accepted that STS, IAM, EC2 or EKS refuse, or that silently do nothing, refused at plan time
with the key as written, the bad value, what is allowed and the fix (issue 47, section 1)."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.facts.pins import manifests
from ultraserver.problems import ConfigError

TODAY = date(2026, 11, 23)


def refused(change: Any, stack: str = "gb200-x72") -> str:
    config = copy.deepcopy(stack_config(stack))
    change(config)
    with pytest.raises(ConfigError) as info:
        parse_settings(config, today=TODAY)
    return "\n".join(str(p) for p in info.value.items)


def accepted(change: Any, stack: str = "gb200-x72") -> None:
    config = copy.deepcopy(stack_config(stack))
    change(config)
    parse_settings(config, today=TODAY)


def cluster(**values: Any) -> Any:
    return lambda c: c["ultraserver-eks:cluster"].update(values)


@pytest.mark.parametrize("arn", ["arn:aws-cn:iam::123456789012:role/Admin", "arn:aws-us-gov:iam::123456789012:user/a"])
def test_an_admin_arn_of_another_partition_is_refused(arn: str) -> None:
    text = refused(cluster(adminPrincipalArns=[arn]))
    assert "ultraserver-eks:cluster.adminPrincipalArns[0]" in text
    assert arn in text and "aws partition" in text and "arn:aws:iam::" in text


def test_the_region_decides_the_partition() -> None:
    accepted(cluster(previewPrincipalArns=["arn:aws:iam::123456789012:role/Preview"]))

    def china(c: dict[str, Any]) -> None:
        c["aws:region"] = "cn-north-1"
        c["ultraserver-eks:cluster"]["previewPrincipalArns"] = ["arn:aws:iam::123456789012:role/Preview"]

    text = refused(china)
    assert "ultraserver-eks:cluster.previewPrincipalArns[0]" in text and "aws-cn partition" in text


@pytest.mark.parametrize("cidr", ["10.0.0.0/8", "192.168.1.0/24", "100.64.0.0/16", "fd00::/8"])
def test_a_private_range_in_the_public_endpoint_cidrs_is_refused(cidr: str) -> None:
    text = refused(cluster(endpointPublicAccessCidrs=["198.18.0.0/24", cidr]))
    assert "ultraserver-eks:cluster.endpointPublicAccessCidrs[1]" in text and cidr in text
    assert "admits nobody" in text and "deployerAccess: in-vpc" in text


def test_a_public_range_holding_a_private_one_is_not_called_private() -> None:
    accepted(cluster(endpointPublicAccessCidrs=["8.0.0.0/7"]))


def test_in_vpc_without_a_vpc_is_refused_even_with_public_cidrs() -> None:
    text = refused(cluster(deployerAccess="in-vpc", endpointPublicAccessCidrs=["198.18.0.0/24"]))
    assert "ultraserver-eks:cluster.deployerAccess" in text and "'in-vpc'" in text and "network.vpcId" in text


def test_a_resource_group_of_another_region_is_refused() -> None:
    def move(c: dict[str, Any]) -> None:
        groups = c["ultraserver-eks:gpuNodeGroups"]
        arn = groups[1]["capacityReservationResourceGroupArn"]
        groups[1]["capacityReservationResourceGroupArn"] = arn.replace(":us-east-1:", ":us-west-2:")

    text = refused(move, "gb200-multi")
    assert "ultraserver-eks:gpuNodeGroups[1].capacityReservationResourceGroupArn" in text
    assert "us-west-2" in text and "region us-east-1" in text


def kubernetes(**values: Any) -> Any:
    return lambda c: c.setdefault("ultraserver-eks:kubernetes", {}).update(values)


def test_a_local_manifest_mirror_without_the_pinned_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / manifests.MPI_OPERATOR.file_name).write_bytes(b"not the pinned file\n")
    text = refused(kubernetes(manifestMirror=str(tmp_path)))
    for name in manifests.by_file_name():
        assert f"{tmp_path}/{name}" in text
    assert text.count("ultraserver-eks:kubernetes.manifestMirror") == len(manifests.by_file_name())
    assert "no such file" in text and "has sha256" in text and manifests.MPI_OPERATOR.url in text


def test_a_local_manifest_mirror_holding_every_pinned_file_is_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"kind: List\n"
    pin = dataclasses.replace(manifests.MPI_OPERATOR, sha256=hashlib.sha256(data).hexdigest())
    monkeypatch.setattr(manifests, "by_file_name", lambda: {pin.file_name: pin})
    (tmp_path / pin.file_name).write_bytes(data)
    accepted(kubernetes(manifestMirror=str(tmp_path)))


def test_the_project_namespace_typed_in_another_case_is_refused() -> None:
    def shout(c: dict[str, Any]) -> None:
        c["Ultraserver-EKS:imexCheck"] = {"nodes": 2, "thresholdGbps": 650}

    text = refused(shout)
    assert "Ultraserver-EKS:imexCheck" in text and "rename it to 'ultraserver-eks:imexCheck'" in text


@pytest.mark.parametrize(
    ("label", "owner"),
    [("ultraserver.io/ultraserver", "toolkit"), ("nvidia.com/gpu.clique", "GPU Feature Discovery")],
)
def test_a_label_the_toolkit_or_gpu_feature_discovery_owns_is_refused(label: str, owner: str) -> None:
    text = refused(lambda c: c["ultraserver-eks:gpuNodeGroups"][0].update(labels={label: "mine"}))
    assert f"ultraserver-eks:gpuNodeGroups[0].labels.{label}" in text and "'mine'" in text and owner in text


def test_a_label_of_ones_own_is_accepted() -> None:
    accepted(lambda c: c["ultraserver-eks:gpuNodeGroups"][0].update(labels={"example.com/team": "ml"}))


@pytest.mark.parametrize(
    ("section", "field", "value", "ceiling"),
    [
        ("imexCheck", "thresholdGbps", 5000.0, "at most 900 GB/s"),
        ("ncclCheck", "minBusBandwidthGbytes", 1e6, "at most 900 GB/s"),
        ("efaCheck", "minBusBandwidthGbps", 1e9, "at most 1600 Gbps"),
    ],
)
def test_a_check_floor_no_run_can_reach_is_refused(section: str, field: str, value: float, ceiling: str) -> None:
    text = refused(lambda c: c.setdefault(f"ultraserver-eks:{section}", {}).update({field: value}), "gb200-multi")
    assert f"ultraserver-eks:{section}.{field}: got {value!r}" in text and ceiling in text


@pytest.mark.parametrize(
    ("section", "field", "value"),
    [("imexCheck", "thresholdGbps", 900.0), ("ncclCheck", "minBusBandwidthGbytes", 850.0)],
)
def test_a_floor_at_the_ceiling_is_accepted(section: str, field: str, value: float) -> None:
    accepted(lambda c: c.setdefault(f"ultraserver-eks:{section}", {}).update({field: value}), "gb200-multi")
