"""The launch template of a capacity-block GPU node group, shared by both modes, and what every node template sets.

The instance type lives here, not on the node group (EKS rejects both). Security defaults: IMDSv2
required with hop limit 1, so only host-network pods (aws-node, kube-proxy, the Pod Identity agent) reach
the instance metadata and pods cannot borrow the node role (EKS best practices, security: "Metadata response
hop limit - 1"; with a custom launch template EKS does not set it), an encrypted gp3 root volume,
and the given security groups (EFA self-referencing group plus cluster group) on every
interface, because EFA traffic needs the EFA group on each EFA device.

Three ways to boot a GB200 node (EKS user guide, launch-templates):
- managed, EKS AMI (default): no ``ImageId`` in the template; the node group's ``amiType`` AL2023_ARM_64_NVIDIA and
  pinned ``releaseVersion`` pick the AMI and EKS merges its bootstrap (cluster, labels, taints) into the user data,
  so the NodeConfig carries only ``instance`` and ``kubelet``;
- self-managed: ``ImageId`` of the pinned release, read from its dated SSM parameter (the same id on every run),
  and a NodeConfig with the cluster section, because nothing bootstraps these nodes;
- custom AMI (``amiId`` + ``amiRelease``, either mode): that ``ImageId``; EKS merges nothing, so the NodeConfig
  names the cluster too.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import pulumi
import pulumi_aws as aws

from ultraserver.builders.nodeconfig import ClusterDetails, NodeConfigSpec, kubelet_flags, user_data
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.node_group_spec import NodeGroupSpec
from ultraserver.facts.aws.aws_ids import AMI_RELEASE, AMI_SSM_PARAMETER
from ultraserver.facts.kubernetes.scheduling import GPU_TAINT_EFFECT, GPU_TAINT_KEY, GPU_TAINT_VALUE

ROOT_DEVICE = "/dev/xvda"
TAGGED_RESOURCES = ("instance", "volume", "network-interface")


@dataclass(frozen=True)
class NodeImage:
    """How a group's nodes get their AMI."""

    release_version: str
    """Pinned EKS AMI release version (1.35.6-20260714)."""
    managed: bool
    """Managed node group (EKS can pick the AMI) or self-managed."""
    ssm_parameter: str | None = None
    """The dated SSM parameter of the pinned release, when the template's ImageId comes from SSM (NodeGroupSpec)."""
    image_id: str | None = None
    """Custom AMI; overrides the pinned EKS AMI."""
    ami_release: str | None = None
    """Release of the custom AMI (vYYYYMMDD), so its driver can be checked."""

    @property
    def eks_picks_the_ami(self) -> bool:
        """No ImageId in the template: the managed group's amiType + releaseVersion choose it, EKS bootstraps."""
        return self.managed and self.image_id is None

    def resolve(self) -> pulumi.Input[str] | None:
        """The template's ImageId: the custom AMI, the pinned release's AMI from SSM, or none."""
        if self.image_id is not None:
            return self.image_id
        parameter = self.ssm_parameter
        return aws.ssm.get_parameter_output(name=parameter).value if parameter is not None else None

    def tags(self) -> dict[str, str]:
        """Where the template's AMI came from, for the policy pack (image ids alone do not say)."""
        if self.eks_picks_the_ami:
            return {}  # The group's releaseVersion says it; a tag would only churn the template.
        found = {AMI_RELEASE: self.ami_release if self.image_id is not None else self.release_version}
        parameter = self.ssm_parameter
        if parameter is not None:
            found[AMI_SSM_PARAMETER] = parameter
        return {k: v for k, v in found.items() if v}


def _base64(value: pulumi.Input[str]) -> pulumi.Input[str]:
    """Base64 of a string, or of an Output's value."""
    if isinstance(value, str):
        return base64.b64encode(value.encode()).decode()
    return pulumi.Output.from_input(cast(pulumi.Output[str], value)).apply(
        lambda text: base64.b64encode(text.encode()).decode()
    )


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


def node_user_data(
    group: GpuNodeGroupSettings, spec: NodeGroupSpec, image: NodeImage, cluster: pulumi.Output[ClusterDetails]
) -> pulumi.Input[str]:
    """MIME NodeConfig: instance and kubelet, plus the cluster section for nodes EKS does not bootstrap.

    The kubelet flags register the GPU taint and the labels at start. With EKS's bootstrap merged in, EKS passes
    the same labels and taint from the node-group API; the flags agree with them.
    """
    flags = kubelet_flags(dict(spec.labels), [(GPU_TAINT_KEY, GPU_TAINT_VALUE, GPU_TAINT_EFFECT)])
    if image.eks_picks_the_ami:
        return user_data(NodeConfigSpec(local_storage=group.local_storage, kubelet_flags=flags))
    return cluster.apply(
        lambda details: user_data(
            NodeConfigSpec(local_storage=group.local_storage, kubelet_flags=flags, cluster=details)
        )
    )


def _target(group: GpuNodeGroupSettings, spec: NodeGroupSpec) -> dict[str, Any]:
    """The capacity reservation target: the current block's reservation, or the resource group (grouped)."""
    if spec.reservation_id is not None:
        return {"capacity_reservation_id": spec.reservation_id}
    return {"capacity_reservation_resource_group_arn": group.capacity_reservation_resource_group_arn or None}


def gpu_launch_template(
    name: str,
    group: GpuNodeGroupSettings,
    spec: NodeGroupSpec,
    *,
    image: NodeImage,
    cluster: pulumi.Output[ClusterDetails],
    security_group_ids: Sequence[pulumi.Input[str]],
    instance_profile_arn: pulumi.Input[str] | None,
    kms_key_id: pulumi.Input[str] | None,
    tags: Mapping[str, str],
    opts: pulumi.ResourceOptions,
) -> aws.ec2.LaunchTemplate:
    """The capacity-block EFA launch template of one GPU node group (``cluster`` names it in the user data of nodes
    EKS does not bootstrap)."""
    image_id = image.resolve()
    all_tags = {**tags, **image.tags()}
    args: dict[str, Any] = {
        "instance_type": group.instance_type,
        "instance_market_options": {"market_type": "capacity-block"},
        "capacity_reservation_specification": {"capacity_reservation_target": _target(group, spec)},
        **secure_node_args(group.root_volume_size_gib, kms_key_id, group.imds_hop_limit),
        "network_interfaces": [
            {
                "network_card_index": item.network_card_index,
                "device_index": item.device_index,
                "interface_type": item.interface_type,
                "security_groups": list(security_group_ids),
                "delete_on_termination": "true",
            }
            for item in spec.interfaces
        ],
        "user_data": _base64(node_user_data(group, spec, image, cluster)),
        "update_default_version": True,
        "tags": all_tags,
    }
    if all_tags:
        args["tag_specifications"] = [{"resource_type": kind, "tags": dict(all_tags)} for kind in TAGGED_RESOURCES]
    if image_id is not None:
        args["image_id"] = image_id
    if instance_profile_arn is not None:
        args["iam_instance_profile"] = {"arn": instance_profile_arn}
    return aws.ec2.LaunchTemplate(name, **args, opts=opts)


def system_launch_template_args(disk_size_gib: int, tags: Mapping[str, str]) -> dict:
    """Launch template settings for system nodes: IMDSv2 only, encrypted gp3 root volume.

    No image id, so EKS still merges its own bootstrap into the user data.
    """
    return {
        **secure_node_args(disk_size_gib),
        "tag_specifications": [{"resource_type": kind, "tags": dict(tags)} for kind in ("instance", "volume")],
        "tags": dict(tags),
    }
