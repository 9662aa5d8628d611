"""Launch template rules: IMDSv2, encrypted root, the EFA security group, the AMI (interfaces: network_interfaces)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ultraserver.facts.aws.aws_ids import AMI_RELEASE as TAG_AMI_RELEASE
from ultraserver.facts.aws.aws_ids import AMI_SSM_PARAMETER as TAG_AMI_SSM_PARAMETER
from ultraserver.facts.pins import ami
from ultraserver.policy import network_interfaces
from ultraserver.policy.model import (
    AUTOSCALING_GROUP,
    LAUNCH_TEMPLATE,
    MANAGED_NODE_GROUP_TYPES,
    SECURITY_GROUP,
    SG_EGRESS_RULE,
    SG_INGRESS_RULE,
    SG_RULE,
    PlanResource,
    Rule,
    StackIndex,
    as_bool,
    as_list,
    get_path,
    is_unknown,
    tags_of,
)
from ultraserver.policy.network_interfaces import EFA_TYPES, has_efa, is_gb200_template
from ultraserver.problems import Described, Problem

ALL_PROTOCOLS = ("-1", "all")
OPEN_EGRESS = ("0.0.0.0/0",)
NVIDIA_AMI_TYPE = ami.AMI_TYPE
CUSTOM_AMI_TYPE = "CUSTOM"
# The SSM path of the AL2023 ARM64 NVIDIA EKS AMI, for any Kubernetes version and release.
NVIDIA_SSM_PATH = re.compile(r"^/aws/service/eks/optimized-ami/[0-9.]+/amazon-linux-2023/arm64/nvidia/")
FLOATING_RELEASES = ("recommended",)


def check_imdsv2(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """Instance metadata requires session tokens (IMDSv2)."""
    tokens = get_path(props, "metadataOptions", "httpTokens")
    if tokens == "required" or is_unknown(tokens):
        return []
    return [
        Problem(
            "metadataOptions.httpTokens",
            Described("unset") if tokens is None else tokens,
            "required (anything else allows IMDSv1)",
            'set metadata_options http_tokens="required" (and http_put_response_hop_limit=2 for pods that need IMDS)',
        )
    ]


def check_encrypted_root(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """The root volume (and every EBS mapping) is encrypted."""
    roots = tuple(opts["rootDeviceNames"])
    mappings = [m for m in as_list(props.get("blockDeviceMappings")) if isinstance(m, Mapping)]
    out = []
    if not any(m.get("deviceName") in roots for m in mappings):
        out.append(
            Problem(
                "blockDeviceMappings",
                Described(f"no mapping for the root device ({', '.join(roots)}): the AMI's unencrypted default"),
                "an encrypted root volume",
                'add a mapping for the root device with ebs.encrypted="true"',
            )
        )
    for mapping in mappings:
        ebs = mapping.get("ebs")
        encrypted = ebs.get("encrypted") if isinstance(ebs, Mapping) else None
        if isinstance(ebs, Mapping) and not is_unknown(encrypted) and as_bool(encrypted) is not True:
            out.append(
                Problem(
                    f"blockDeviceMappings[{mapping.get('deviceName')}].ebs.encrypted",
                    encrypted,
                    "true (every EBS volume encrypted)",
                    'set ebs.encrypted="true" (optionally with a kms_key_id)',
                )
            )
    return out


# ---- the EFA security group --------------------------------------------------------------------


def _references_itself(rule: PlanResource, sg: PlanResource) -> bool:
    """A VPC SG rule whose own group and referenced group are both this SG.

    Per-property dependencies decide when recorded; otherwise the rule must depend on the SG and name the same
    group twice (the SG's ID is not recorded, so the two inputs are compared with each other).
    """
    own = rule.property_dependencies.get("securityGroupId")
    peer = rule.property_dependencies.get("referencedSecurityGroupId")
    if own is not None and peer is not None:
        return sg.urn in own and sg.urn in peer
    group = rule.inputs.get("securityGroupId")
    return sg.urn in rule.dependencies and group is not None and group == rule.inputs.get("referencedSecurityGroupId")


def _covers(direction: str, protocol: Any, to_self: bool, cidrs: list[Any]) -> bool:
    """An all-protocol rule that reaches the group itself (outbound, an open egress rule also does)."""
    if protocol not in ALL_PROTOCOLS:
        return False
    return to_self or (direction == "egress" and any(c in OPEN_EGRESS for c in cidrs))


def _self_directions(index: StackIndex, sg: PlanResource) -> set[str]:
    """Directions ("ingress", "egress") in which the SG allows all traffic to/from itself, in any rule form."""
    found = set()
    for direction in ("ingress", "egress"):
        for inline in as_list(sg.inputs.get(direction)):
            if isinstance(inline, Mapping) and _covers(
                direction,
                inline.get("protocol"),
                as_bool(inline.get("self")) is True,
                as_list(inline.get("cidrBlocks")),
            ):
                found.add(direction)
    for rule in index.dependents(sg, SG_INGRESS_RULE, SG_EGRESS_RULE):
        direction = "ingress" if rule.type == SG_INGRESS_RULE else "egress"
        if _covers(
            direction, rule.inputs.get("ipProtocol"), _references_itself(rule, sg), [rule.inputs.get("cidrIpv4")]
        ):
            found.add(direction)
    for rule in index.dependents(sg, SG_RULE):
        direction = str(rule.inputs.get("type"))
        if _covers(
            direction,
            rule.inputs.get("protocol"),
            as_bool(rule.inputs.get("self")) is True,
            as_list(rule.inputs.get("cidrBlocks")),
        ):
            found.add(direction)
    return found & {"ingress", "egress"}


def check_efa_security_group(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """An EFA launch template's in-stack security groups include one open to itself both ways."""
    index = StackIndex(resources)
    out = []
    for template in index.of_type(LAUNCH_TEMPLATE):
        if not has_efa(template.inputs):
            continue
        efa_nics = [
            n
            for n in as_list(template.inputs.get("networkInterfaces"))
            if isinstance(n, Mapping) and n.get("interfaceType") in EFA_TYPES
        ]
        if any(not as_list(n.get("securityGroups")) and not is_unknown(n.get("securityGroups")) for n in efa_nics):
            out.append(
                Problem(
                    template.urn,
                    Described("an EFA interface without security groups"),
                    "the EFA security group (all traffic in and out to itself) on every EFA interface",
                    "attach the EFA security group to every EFA interface",
                )
            )
            continue
        groups = index.deps(template, SECURITY_GROUP)
        if groups and not any(_self_directions(index, sg) == {"ingress", "egress"} for sg in groups):
            names = ", ".join(sg.name for sg in groups)
            out.append(
                Problem(
                    template.urn,
                    Described(f"security groups {names}, none open to itself both ways"),
                    "a security group that allows all traffic to and from itself",
                    'add a self-referencing ingress and egress rule with ip_protocol="-1" '
                    "(referenced_security_group_id = the group's own id)",
                )
            )
    return out


# ---- the AMI -----------------------------------------------------------------------------------


def release_ok(release: Any, minimum: str) -> bool:
    """A floating release, or a pinned one (vYYYYMMDD or <k8s>-YYYYMMDD) no older than the minimum."""
    if release in FLOATING_RELEASES:
        return True
    have, want = ami.release_date_in(str(release)), ami.release_date_in(minimum)
    return have is not None and want is not None and have >= want


def check_ami_release(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """A pinned AL2023 NVIDIA AMI release is at least the EKS UltraServer guide's minimum (v20251103, driver 580)."""
    minimum = str(opts["minRelease"])
    if resource_type == LAUNCH_TEMPLATE:
        if not is_gb200_template(resource_type, props):
            return []
        release, where = tags_of(props).get(TAG_AMI_RELEASE), f"tag {TAG_AMI_RELEASE}"
    elif props.get("amiType") == NVIDIA_AMI_TYPE:
        release, where = props.get("releaseVersion"), "releaseVersion"
    else:
        return []
    if release is None or is_unknown(release) or release_ok(release, minimum):
        return []
    return [
        Problem(
            where,
            release,
            f"{minimum} or later: the EKS UltraServer guide recommends it for GB200 (driver 580)",
            f'pin {minimum} or later, or use the "recommended" release',
        )
    ]


def check_ami_variant(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """GB200 groups boot the AL2023 ARM64 NVIDIA AMI."""
    index = StackIndex(resources)
    out = []
    for group in index.gpu_groups():
        template = index.launch_template_of(group)
        image = template.inputs.get("imageId") if template is not None else None
        ami_type = group.inputs.get("amiType")
        if template is not None and image is not None:
            path = tags_of(template.inputs).get(TAG_AMI_SSM_PARAMETER)
            if not isinstance(path, str) or not NVIDIA_SSM_PATH.match(path):
                out.append(
                    Problem(
                        template.urn,
                        path,
                        f"an AL2023 ARM64 NVIDIA SSM path in the {TAG_AMI_SSM_PARAMETER} tag of a GB200 launch "
                        "template that sets imageId",
                        "look the AMI up from /aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/arm64/nvidia/"
                        "... and record that path in the tag",
                    )
                )
            if group.type in MANAGED_NODE_GROUP_TYPES and ami_type not in (None, CUSTOM_AMI_TYPE):
                out.append(
                    Problem(
                        group.urn,
                        ami_type,
                        "amiType unset (EKS shows CUSTOM) while the launch template sets imageId",
                        "leave amiType unset, or drop imageId and use amiType AL2023_ARM_64_NVIDIA",
                    )
                )
        elif group.type == AUTOSCALING_GROUP:
            out.append(
                Problem(
                    group.urn,
                    Described("a launch template without imageId"),
                    "an imageId on a self-managed GB200 group's launch template",
                    "set image_id from the AL2023 ARM64 NVIDIA SSM parameter",
                )
            )
        elif ami_type != NVIDIA_AMI_TYPE and not is_unknown(ami_type):
            out.append(
                Problem(
                    group.urn,
                    ami_type,
                    f"amiType {NVIDIA_AMI_TYPE}: GB200 needs the AL2023 ARM64 NVIDIA AMI",
                    f'set ami_type="{NVIDIA_AMI_TYPE}"',
                )
            )
    return out


RULES: tuple[Rule, ...] = (
    *network_interfaces.RULES,
    Rule(
        name="efa-security-group-self-referencing",
        description="EFA interfaces use a security group that allows all traffic to and from itself.",
        fix="Add self-referencing all-traffic ingress and egress rules to the EFA security group.",
        check_stack=check_efa_security_group,
    ),
    Rule(
        name="launch-template-imdsv2",
        description="Launch templates require IMDSv2 (metadataOptions.httpTokens = required).",
        fix="Set metadata_options http_tokens=required.",
        resource_types=(LAUNCH_TEMPLATE,),
        check_resource=check_imdsv2,
    ),
    Rule(
        name="launch-template-encrypted-root-volume",
        description="Launch templates map the root volume, and every EBS volume, encrypted.",
        fix="Add a root block device mapping with ebs.encrypted=true.",
        resource_types=(LAUNCH_TEMPLATE,),
        check_resource=check_encrypted_root,
        config_schema={
            "rootDeviceNames": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Device names that count as the root volume.",
            }
        },
        defaults={"rootDeviceNames": ["/dev/xvda"]},
    ),
    Rule(
        name="gb200-ami-variant",
        description="GB200 groups boot the AL2023 ARM64 NVIDIA EKS AMI.",
        fix="Use amiType AL2023_ARM_64_NVIDIA, or an imageId from its SSM path recorded in a tag.",
        check_stack=check_ami_variant,
    ),
    Rule(
        name="gb200-ami-release",
        description="A pinned AL2023 NVIDIA AMI release is v20251103 or later (driver 580).",
        fix="Pin v20251103 or later, or use the recommended release.",
        resource_types=(LAUNCH_TEMPLATE, *MANAGED_NODE_GROUP_TYPES),
        check_resource=check_ami_release,
        config_schema={"minRelease": {"type": "string", "description": "Oldest allowed release, vYYYYMMDD."}},
        defaults={"minRelease": f"v{ami.MIN_RELEASE}"},
    ),
)
