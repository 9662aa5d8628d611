"""The launch template both GPU node-group modes share: which AMI, which user data, which tags.

Three ways to boot a GB200 node (EKS user guide, launch-templates):
- managed, EKS AMI (default): no ``ImageId`` in the template; the node group's ``amiType`` AL2023_ARM_64_NVIDIA and
  pinned ``releaseVersion`` pick the AMI and EKS merges its bootstrap (cluster, labels, taints) into the user data,
  so the NodeConfig carries only ``instance`` and ``kubelet``;
- self-managed: ``ImageId`` of the pinned release, read from its dated SSM parameter (the same id on every run),
  and a NodeConfig with the cluster section, because nothing bootstraps these nodes;
- custom AMI (``image_id`` + ``ami_release``, either mode): that ``ImageId``; EKS merges nothing, so the NodeConfig
  names the cluster too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from ultraserver.builders.nodeconfig import ClusterDetails, NodeConfigSpec, kubelet_flags, user_data
from ultraserver.facts.efa import EfaInterface
from ultraserver.facts.instances import LocalStorage
from ultraserver.facts.scheduling import GPU_TAINT_EFFECT, GPU_TAINT_KEY, GPU_TAINT_VALUE
from ultraserver.facts.tags import AMI_RELEASE, AMI_SSM_PARAMETER
from ultraserver.resources.launch_template import LaunchTemplateSpec, launch_template_args


@dataclass(frozen=True)
class NodeImage:
    """How a group's nodes get their AMI."""

    release_version: str
    """Pinned EKS AMI release version (1.35.6-20260714)."""
    managed: bool
    """Managed node group (EKS can pick the AMI) or self-managed."""
    ssm_parameter: str | None = None
    """The dated SSM parameter of the pinned release, when the template's ImageId comes from SSM (NodeGroupSpec)."""
    image_id: pulumi.Input[str] | None = None
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


@dataclass(frozen=True)
class GpuTemplateSpec:
    """Everything the shared GPU launch template is built from."""

    instance_type: str
    interfaces: Sequence[EfaInterface]
    security_group_ids: Sequence[pulumi.Input[str]]
    image: NodeImage
    cluster_name: pulumi.Input[str]
    cluster_endpoint: pulumi.Input[str]
    cluster_certificate_authority: pulumi.Input[str]
    service_cidr: pulumi.Input[str]
    labels: dict[str, str]
    local_storage: LocalStorage
    capacity_reservation_id: pulumi.Input[str] | None
    capacity_reservation_resource_group_arn: pulumi.Input[str] | None
    iam_instance_profile_arn: pulumi.Input[str] | None
    root_volume_size_gib: int
    kms_key_id: pulumi.Input[str] | None
    imds_hop_limit: int
    tags: dict[str, str]


def node_user_data(spec: GpuTemplateSpec) -> pulumi.Input[str]:
    """MIME NodeConfig: instance and kubelet, plus the cluster section for nodes EKS does not bootstrap.

    The kubelet flags register the GPU taint and the labels at start. With EKS's bootstrap merged in, EKS passes
    the same labels and taint from the node-group API; the flags agree with them.
    """
    flags = kubelet_flags(spec.labels, [(GPU_TAINT_KEY, GPU_TAINT_VALUE, GPU_TAINT_EFFECT)])
    if spec.image.eks_picks_the_ami:
        return user_data(NodeConfigSpec(local_storage=spec.local_storage, kubelet_flags=flags))
    return pulumi.Output.all(
        spec.cluster_name, spec.cluster_endpoint, spec.cluster_certificate_authority, spec.service_cidr
    ).apply(
        lambda v: user_data(
            NodeConfigSpec(local_storage=spec.local_storage, kubelet_flags=flags, cluster=ClusterDetails(*v))
        )
    )


def gpu_launch_template(name: str, spec: GpuTemplateSpec, opts: pulumi.ResourceOptions) -> aws.ec2.LaunchTemplate:
    """The capacity-block EFA launch template of one GPU node group."""
    image_id, image_tags = spec.image.resolve(), spec.image.tags()
    return aws.ec2.LaunchTemplate(
        name,
        **launch_template_args(
            LaunchTemplateSpec(
                instance_type=spec.instance_type,
                interfaces=spec.interfaces,
                security_group_ids=list(spec.security_group_ids),
                user_data=node_user_data(spec),
                capacity_reservation_id=spec.capacity_reservation_id,
                capacity_reservation_resource_group_arn=spec.capacity_reservation_resource_group_arn,
                image_id=image_id,
                iam_instance_profile_arn=spec.iam_instance_profile_arn,
                root_volume_size_gib=spec.root_volume_size_gib,
                kms_key_id=spec.kms_key_id,
                metadata_hop_limit=spec.imds_hop_limit,
                tags={**spec.tags, **image_tags},
            )
        ),
        opts=opts,
    )
