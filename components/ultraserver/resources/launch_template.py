"""Launch template arguments for capacity-block GPU nodes, as plain data for ``aws.ec2.LaunchTemplate``.

The instance type lives here, not on the node group (EKS rejects both). Security defaults: IMDSv2
required with hop limit 1, so only host-network pods (aws-node, kube-proxy, the Pod Identity agent) reach
the instance metadata and pods cannot borrow the node role (EKS best practices, security: "Metadata response
hop limit - 1"; with a custom launch template EKS does not set it), an encrypted gp3 root volume,
and the given security groups (EFA self-referencing group plus cluster group) on every
interface, because EFA traffic needs the EFA group on each EFA device.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import pulumi

from ultraserver.facts.efa import EfaInterface
from ultraserver.facts.instances import GPU_ROOT_VOLUME_GIB

ROOT_DEVICE = "/dev/xvda"
TAGGED_RESOURCES = ("instance", "volume", "network-interface")


@dataclass
class LaunchTemplateSpec:
    """Everything a capacity-block GPU launch template is built from."""

    instance_type: str
    """EC2 instance type, e.g. p6e-gb200.36xlarge."""
    interfaces: Sequence[EfaInterface]
    """Network interfaces from the EFA layout engine, primary first."""
    security_group_ids: pulumi.Input[Sequence[pulumi.Input[str]]]
    """Security groups attached to every interface (EFA group and cluster group)."""
    user_data: pulumi.Input[str]
    """MIME multipart user data in plain text; base64-encoded here."""
    capacity_reservation_id: pulumi.Input[str] | None = None
    """The UltraServer's Capacity Reservation (cr-...); or set the resource group ARN instead."""
    capacity_reservation_resource_group_arn: pulumi.Input[str] | None = None
    """A capacity-reservation resource group (grouped mode); or set the reservation ID instead."""
    image_id: pulumi.Input[str] | None = None
    """AMI ID for self-managed nodes and custom AMIs; unset, a managed group's amiType and releaseVersion pick it."""
    iam_instance_profile_arn: pulumi.Input[str] | None = None
    """Instance profile ARN; self-managed nodes only (EKS rejects it in a managed node group template)."""
    root_volume_size_gib: int = GPU_ROOT_VOLUME_GIB
    """Root volume size; container images and kubelet data go to the RAID0 instance store instead."""
    kms_key_id: pulumi.Input[str] | None = None
    """KMS key for the root volume; the account's default EBS key when unset."""
    metadata_hop_limit: int = 1
    """IMDSv2 PUT response hop limit: 1, or 2 for pods that must reach IMDS from their own network namespace."""
    tags: dict[str, str] = field(default_factory=dict)
    """Tags for the template and, through tag specifications, its instances, volumes and interfaces."""


def _base64(value: pulumi.Input[str]) -> pulumi.Input[str]:
    """Base64 of a string, or of an Output's value."""
    if isinstance(value, str):
        return base64.b64encode(value.encode()).decode()
    return pulumi.Output.from_input(cast(pulumi.Output[str], value)).apply(
        lambda text: base64.b64encode(text.encode()).decode()
    )


def _target(spec: LaunchTemplateSpec) -> dict[str, Any]:
    """The capacity reservation target (GpuNodeGroupArgs or the settings checked that exactly one is set)."""
    if spec.capacity_reservation_id is not None:
        return {"capacity_reservation_id": spec.capacity_reservation_id}
    return {"capacity_reservation_resource_group_arn": spec.capacity_reservation_resource_group_arn}


def secure_node_args(
    root_volume_size_gib: int, kms_key_id: pulumi.Input[str] | None = None, metadata_hop_limit: int = 1
) -> dict[str, Any]:
    """What every node launch template sets: IMDSv2 only and an encrypted gp3 root volume."""
    ebs: dict[str, Any] = {
        "volume_size": root_volume_size_gib,
        "volume_type": "gp3",
        "encrypted": "true",
        "delete_on_termination": "true",
    }
    if kms_key_id is not None:
        ebs["kms_key_id"] = kms_key_id
    return {
        "metadata_options": {
            "http_endpoint": "enabled",
            "http_tokens": "required",
            "http_put_response_hop_limit": metadata_hop_limit,
        },
        "block_device_mappings": [{"device_name": ROOT_DEVICE, "ebs": ebs}],
    }


def launch_template_args(spec: LaunchTemplateSpec) -> dict[str, Any]:
    """Keyword arguments for ``aws.ec2.LaunchTemplate``; Inputs pass through unchanged."""
    args: dict[str, Any] = {
        "instance_type": spec.instance_type,
        "instance_market_options": {"market_type": "capacity-block"},
        "capacity_reservation_specification": {"capacity_reservation_target": _target(spec)},
        **secure_node_args(spec.root_volume_size_gib, spec.kms_key_id, spec.metadata_hop_limit),
        "network_interfaces": [
            {
                "network_card_index": item.network_card_index,
                "device_index": item.device_index,
                "interface_type": item.interface_type,
                "security_groups": spec.security_group_ids,
                "delete_on_termination": "true",
            }
            for item in spec.interfaces
        ],
        "user_data": _base64(spec.user_data),
        "update_default_version": True,
        "tags": dict(spec.tags),
    }
    if spec.tags:
        args["tag_specifications"] = [{"resource_type": kind, "tags": dict(spec.tags)} for kind in TAGGED_RESOURCES]
    if spec.image_id is not None:
        args["image_id"] = spec.image_id
    if spec.iam_instance_profile_arn is not None:
        args["iam_instance_profile"] = {"arn": spec.iam_instance_profile_arn}
    return args
