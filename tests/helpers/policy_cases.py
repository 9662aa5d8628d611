"""Policy test cases: per rule, stacks that must pass and stacks that must fail, over either compliant base.

The bases are the recorded plan of the shipped gb200-x72 stack (the project's real components) and the
hand-written fixture (tests/policy_fixtures.py). Cases name resources by role ("gpu_lt", "efa_sg", ...);
each base says which of its resources plays the role.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from helpers.policy_fixtures import (
    DELETE,
    RESERVATION_ZONE,
    add,
    as_seen_by_preview,
    find,
    good_stack,
    patch,
    res,
    without,
)
from helpers.stacks import ROOT, stack_config
from ultraserver.facts.aws.aws_ids import RESERVATION_ZONE as ZONE_TAG
from ultraserver.facts.aws.aws_ids import UPGRADE_SAFE
from ultraserver.offline import run_plan
from ultraserver.policy import RULES, PlanResource

ROLE_TYPES = {
    "cluster": "eks:index:Cluster",
    "aws_cluster": "eks/cluster:Cluster",
    "gpu_lt": "LaunchTemplate",
    "gpu_ng": "NodeGroup",
    "gpu_subnet": "Subnet",
    "gpu_role": "Role",
    "system_lt": "LaunchTemplate",
    "system_subnet": "Subnet",
    "efa_sg": "SecurityGroup",
    "efa_self_in": "SecurityGroupIngressRule",
    "efa_self_out": "SecurityGroupEgressRule",
    "gpu_operator": "Release",
    "dra": "Release",
    "efa_plugin": "Release",
    "domain": "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain",
    "sm_group": "Group",
    "sm_lt": "LaunchTemplate",
    "extra_policy": "RolePolicy",
    "extra_attachment": "RolePolicyAttachment",
    "gpu_job": "MPIJob",
    "extra_queue_policy": "QueuePolicy",
}
"""Type suffix of the resource each role names."""

EXTRA = "node-role-extra"
"""Name of a policy a case adds to the GPU node role."""


@dataclass(frozen=True)
class Stack:
    """A stack's resources and the name of the resource playing each role in it."""

    resources: list[PlanResource]
    names: Mapping[str, str]
    self_managed: Callable[[Stack], Stack] = field(compare=False)
    """The same stack with a self-managed GB200 capacity-block group (roles sm_group and sm_lt)."""

    def name(self, role: str) -> str:
        """The name of the resource playing a role."""
        return self.names[role]

    def get(self, role: str) -> PlanResource:
        """The resource playing a role."""
        return find(self.resources, ROLE_TYPES[role], self.name(role))

    def patch(self, role: str, changes: Mapping[str | tuple[str, ...], Any]) -> Stack:
        """A copy with one resource's inputs changed (see policy_fixtures.patch)."""
        return self.using(patch(self.resources, ROLE_TYPES[role], self.name(role), changes))

    def without(self, role: str) -> Stack:
        """A copy without one resource."""
        return self.using(without(self.resources, ROLE_TYPES[role], self.name(role)))

    def swap(self, old: PlanResource, new: PlanResource) -> Stack:
        """A copy with one resource replaced."""
        return self.using([new if r is old else r for r in self.resources])

    def using(self, resources: list[PlanResource]) -> Stack:
        """The same roles over other resources."""
        return replace(self, resources=resources)


StackChange = Callable[[Stack], Stack]
"""Builds a test stack from a compliant base stack."""
Config = Callable[[Stack], dict]
"""Policy config for a stack (group names differ between bases)."""


@dataclass(frozen=True)
class Case:
    """A stack and the rule under test; for failures, the role of the resource blamed and a phrase of the message.

    The phrase may name roles as {role}, filled in with the base's names.
    """

    rule: str
    stack: StackChange
    blamed: str = ""
    says: str = ""

    def __str__(self) -> str:
        return f"{self.rule}:{self.says or 'pass'}"


def config_for(config: dict | Config | None, stack: Stack) -> dict | None:
    """The policy config a case runs with on this stack."""
    return config(stack) if callable(config) else config


# ---- the bases -------------------------------------------------------------------------------------


def fixture_self_managed(stack: Stack) -> Stack:
    """The stack plus a self-managed GB200 capacity-block group: an autoscaling group on its own template."""
    template, subnet, sg = stack.get("gpu_lt"), stack.get("gpu_subnet"), stack.get("efa_sg")
    own = res(template.type, "gpu-self", template.inputs, [sg])
    group = res(
        "aws:autoscaling/group:Group",
        "gpu-self",
        {
            "launchTemplate": {"id": "gpu-self-offline-id", "version": "1"},
            "desiredCapacity": 9,
            "minSize": 0,
            "maxSize": 9,
            "vpcZoneIdentifiers": ["gpu-subnet-offline-id"],
            "tags": [{"key": ZONE_TAG, "value": RESERVATION_ZONE, "propagateAtLaunch": True}],
        },
        [own, subnet],
    )
    return replace(
        stack.using(add(stack.resources, own, group)),
        names={**stack.names, "sm_group": "gpu-self", "sm_lt": "gpu-self"},
    )


GPU_JOB = "train-gpu-job"
"""Name of a multi-node GPU MPIJob a case adds."""
ADDED = {"extra_policy": EXTRA, "extra_attachment": EXTRA, "gpu_job": GPU_JOB, "extra_queue_policy": EXTRA}
"""Roles of resources the cases add."""
FIXTURE_NAMES = {
    **ADDED,
    "cluster": "gb200",
    "aws_cluster": "gb200-eksCluster",
    "gpu_lt": "gpu",
    "gpu_ng": "gpu",
    "gpu_subnet": "gpu-subnet",
    "gpu_role": "gpu-nodes",
    "system_lt": "system",
    "system_subnet": "system-subnet",
    "efa_sg": "gpu-efa",
    "efa_self_in": "gpu-efa-self-in",
    "efa_self_out": "gpu-efa-self-out",
    "gpu_operator": "gpu-operator",
    "dra": "nvidia-dra-driver-gpu",
    "efa_plugin": "aws-efa-k8s-device-plugin",
    "domain": "imex",
}


def fixture_stack() -> Stack:
    """The hand-written compliant stack."""
    return Stack(good_stack(), FIXTURE_NAMES, fixture_self_managed)


REAL_STACK = "gb200-x72"
REAL_GROUP = f"{REAL_STACK}-nvl72"
REAL_NAMES = {
    **ADDED,
    "cluster": REAL_STACK,
    "aws_cluster": f"{REAL_STACK}-eksCluster",
    "gpu_lt": REAL_GROUP,
    "gpu_ng": REAL_GROUP,
    "gpu_subnet": f"{REAL_STACK}-net-gpu-us-east-1-dfw-2a",
    "gpu_role": f"{REAL_GROUP}-node",
    "system_lt": f"{REAL_STACK}-system",
    "system_subnet": f"{REAL_STACK}-net-private-us-east-1a",
    "efa_sg": f"{REAL_STACK}-net-efa",
    "efa_self_in": f"{REAL_STACK}-net-efa-self-in",
    "efa_self_out": f"{REAL_STACK}-net-efa-self-out",
    "gpu_operator": f"{REAL_STACK}-k8s-gpu-operator",
    "dra": f"{REAL_STACK}-k8s-dra-driver",
    "efa_plugin": f"{REAL_STACK}-k8s-efa-device-plugin",
    "domain": f"{REAL_STACK}-k8s-imex-check-nvbandwidth-nvl72",
    "sm_group": REAL_GROUP,
    "sm_lt": REAL_GROUP,
}


@functools.cache
def real_self_managed_plan() -> tuple[PlanResource, ...]:
    """gb200-x72 planned with its GPU groups in self-managed mode (a settings override, once per session)."""
    groups = [{**g, "mode": "self-managed"} for g in stack_config(REAL_STACK)["ultraserver-eks:gpuNodeGroups"]]
    return tuple(run_plan(ROOT, REAL_STACK, {"ultraserver-eks:gpuNodeGroups": groups}).resources)


def real_self_managed(stack: Stack) -> Stack:
    """The real stack, planned with a self-managed GPU group instead of a managed one."""
    return stack.using(copy.deepcopy(list(real_self_managed_plan())))


def real_stack(resources: list[PlanResource]) -> Stack:
    """The recorded plan of the shipped gb200-x72 stack."""
    return Stack(copy.deepcopy(resources), REAL_NAMES, real_self_managed)


@pytest.fixture(params=["fixture", REAL_STACK])
def base(request: pytest.FixtureRequest) -> Stack:
    """The compliant stack: hand-written, and the shipped stack as the real components record it."""
    if request.param == "fixture":
        return fixture_stack()
    return real_stack(request.getfixturevalue("shipped_plan")(REAL_STACK).resources)


# ---- ways to change a stack --------------------------------------------------------------------------


def changed(role: str, changes: Mapping[str | tuple[str, ...], Any]) -> StackChange:
    """One resource's inputs changed."""
    return lambda stack: stack.patch(role, changes)


NVIDIA_IMAGE_PARAMETER = (
    "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/nvidia/"
    "amazon-eks-node-al2023-arm64-nvidia-1.33-v20251103/image_id"
)
"""The dated SSM parameter of a pinned AL2023 ARM64 NVIDIA release."""


def lt(changes: Mapping[str | tuple[str, ...], Any]) -> StackChange:
    """The GPU launch template changed."""
    return changed("gpu_lt", changes)


def gpu_ng(changes: Mapping[str | tuple[str, ...], Any]) -> StackChange:
    """The GPU node group changed."""
    return changed("gpu_ng", changes)


def running(changes: Mapping[str | tuple[str, ...], Any]) -> StackChange:
    """The GPU node group changed while it runs 18 nodes (the shipped stack waits at 0 before its block starts)."""
    update: dict[str | tuple[str, ...], Any] = {"scalingConfig.desiredSize": 18}
    return gpu_ng({**update, **changes})


def cluster(changes: Mapping[str | tuple[str, ...], Any]) -> StackChange:
    """The cluster changed."""
    return changed("cluster", changes)


def gpu_waits_for(role: str) -> StackChange:
    """The GPU node group made to wait for another resource (e.g. a Helm release)."""

    def change(stack: Stack) -> Stack:
        group = stack.get("gpu_ng")
        return stack.swap(group, replace(group, dependencies=[*group.dependencies, stack.get(role).urn]))

    return change


def public_cluster(cidrs: Any) -> StackChange:
    """A public endpoint with these allowed CIDRs (DELETE: none listed)."""
    return cluster({"endpointPublicAccess": True, "publicAccessCidrs": cidrs})


def preview(stack: Stack) -> Stack:
    """The stack as a real preview shows it: pulumi-eks's aws:eks Cluster child carries the settings."""
    return stack.using(as_seen_by_preview(stack.resources, stack.name("cluster")))


def aws_cluster(changes: Mapping[str | tuple[str, ...], Any]) -> StackChange:
    """The stack as a real preview shows it, with pulumi-eks's aws:eks Cluster child changed."""
    return lambda stack: preview(stack).patch("aws_cluster", changes)


def release(role: str, changes: Mapping[str | tuple[str, ...], Any]) -> StackChange:
    """A Helm release changed."""
    return changed(role, changes)


def card(number: int, key: str, value: Any) -> StackChange:
    """One field of the GPU template's interface on a network card changed."""

    def build(stack: Stack) -> Stack:
        cards = [n["networkCardIndex"] for n in stack.get("gpu_lt").inputs["networkInterfaces"]]
        return stack.patch("gpu_lt", {f"networkInterfaces.{cards.index(number)}.{key}": value})

    return build


def many_node_groups(count: int) -> StackChange:
    """The stack plus extra managed node groups on the same cluster."""

    def build(stack: Stack) -> Stack:
        eks = stack.get("cluster")
        extra = [
            res("aws:eks/nodeGroup:NodeGroup", f"extra-{i}", {"capacityType": "ON_DEMAND"}, [eks]) for i in range(count)
        ]
        return stack.using(add(stack.resources, *extra))

    return build


def efa_sg_id(stack: Stack) -> str:
    """The EFA security group's ID, as its self rule names it."""
    sg_id: str = stack.get("efa_self_in").inputs["securityGroupId"]
    return sg_id


def other_sg(stack: Stack) -> PlanResource:
    """Another security group in the stack's VPC."""
    return res("aws:ec2/securityGroup:SecurityGroup", "other", {"vpcId": stack.get("efa_sg").inputs["vpcId"]})


def efa_sg_without_egress(stack: Stack) -> Stack:
    """The EFA SG loses its egress rules (an all-destinations rule would also reach the group itself)."""
    sg = stack.get("efa_sg")
    return stack.using(
        [r for r in stack.resources if not (r.type.endswith(":SecurityGroupEgressRule") and sg.urn in r.dependencies)]
    )


def efa_sg_referencing_other_group(stack: Stack) -> Stack:
    """The ingress rule references a different SG, told apart by its inputs (no per-property dependencies)."""
    other, ingress = other_sg(stack), stack.get("efa_self_in")
    rewired = replace(
        ingress,
        inputs={**ingress.inputs, "referencedSecurityGroupId": "other-offline-id"},
        dependencies=[stack.get("efa_sg").urn, other.urn],
        property_dependencies={},
    )
    swapped = stack.swap(ingress, rewired)
    return swapped.using(add(swapped.resources, other))


def sg_rules_by_property(stack: Stack, referenced: str) -> Stack:
    """The ingress rule's inputs look self-referencing, but per-property dependencies say which SG each names."""
    other, sg, ingress = other_sg(stack), stack.get("efa_sg"), stack.get("efa_self_in")
    target = other if referenced == "other" else sg
    rewired = replace(
        ingress,
        dependencies=[sg.urn, other.urn],
        property_dependencies={"securityGroupId": [sg.urn], "referencedSecurityGroupId": [target.urn]},
    )
    swapped = stack.swap(ingress, rewired)
    return swapped.using(add(swapped.resources, other))


def without_self_rules(stack: Stack) -> Stack:
    """The EFA SG without its self-referencing rule resources."""
    return stack.without("efa_self_out").without("efa_self_in")


def legacy_sg_rules(stack: Stack) -> Stack:
    """The EFA SG's self rules as aws.ec2.SecurityGroupRule resources."""
    sg, sg_id = stack.get("efa_sg"), efa_sg_id(stack)
    bare = without_self_rules(stack)
    return bare.using(
        add(
            bare.resources,
            *[
                res(
                    "aws:ec2/securityGroupRule:SecurityGroupRule",
                    f"efa-{kind}",
                    {
                        "type": kind,
                        "protocol": "-1",
                        "fromPort": 0,
                        "toPort": 0,
                        "self": True,
                        "securityGroupId": sg_id,
                    },
                    [sg],
                )
                for kind in ("ingress", "egress")
            ],
        )
    )


def inline_self_sg(stack: Stack) -> Stack:
    """The EFA SG's self rules written inline on the group instead of as rule resources."""
    return without_self_rules(stack).patch(
        "efa_sg",
        {
            "ingress": [{"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}],
            "egress": [{"protocol": "-1", "fromPort": 0, "toPort": 0, "cidrBlocks": ["0.0.0.0/0"]}],
        },
    )


def role_ref(stack: Stack) -> str:
    """How the GPU node role's policy attachments name it."""
    role = stack.get("gpu_role")
    attachments = [
        r for r in stack.resources if r.type.endswith(":RolePolicyAttachment") and role.urn in r.dependencies
    ]
    name: str = attachments[0].inputs["role"]
    return name


def extra_attachment(arn: str) -> StackChange:
    """The GPU node role gets one more managed policy."""

    def build(stack: Stack) -> Stack:
        return stack.using(
            add(
                stack.resources,
                res(
                    "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
                    EXTRA,
                    {"role": role_ref(stack), "policyArn": arn},
                    [stack.get("gpu_role")],
                ),
            )
        )

    return build


def gpu_job(
    claim: bool = True,
    queue: bool = True,
    exempt: bool = False,
    workers: int = 2,
    topology: bool = True,
    claims_only: bool = False,
) -> StackChange:
    """The stack gets an MPIJob of `workers` 4-GPU workers in the namespace of the stack's ComputeDomain
    (`claims_only`: the workers request nothing but their claims)."""

    def build(stack: Stack) -> Stack:
        domain = stack.get("domain").inputs
        namespace = domain.get("metadata", {}).get("namespace", "default")
        template = domain["spec"]["channel"]["resourceClaimTemplate"]["name"]
        resources = {} if claims_only else {"resources": {"limits": {"nvidia.com/gpu": 4}}}
        worker: dict[str, Any] = {"containers": [{"name": "w", "image": "x", **resources}]}
        if claim:
            worker["resourceClaims"] = [{"name": "cd", "resourceClaimTemplateName": template}]
        metadata: dict[str, Any] = {"name": GPU_JOB, "namespace": namespace}
        if queue:
            metadata["labels"] = {"kueue.x-k8s.io/queue-name": "gb200"}
        if exempt:
            metadata["annotations"] = {"ultraserver.io/kueue-exempt": "a test"}
        required = {"kueue.x-k8s.io/podset-required-topology": "nvidia.com/gpu.clique"}
        worker_meta: dict[str, Any] = {"annotations": required} if topology else {}
        job = res(
            "kubernetes:kubeflow.org/v2beta1:MPIJob",
            GPU_JOB,
            {
                "apiVersion": "kubeflow.org/v2beta1",
                "kind": "MPIJob",
                "metadata": metadata,
                "spec": {
                    "mpiReplicaSpecs": {
                        "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{"name": "l"}]}}},
                        "Worker": {"replicas": workers, "template": {"metadata": worker_meta, "spec": worker}},
                    }
                },
            },
        )
        return stack.using(add(stack.resources, job))

    return build


def queued_on_kueue(mapped: bool, claims_only: bool = False) -> StackChange:
    """The queued GPU job plus a Kueue install: its Configuration maps the channel DeviceClass (or not) and the
    ClusterQueue behind the job's LocalQueue holds channel quota."""
    from ultraserver.facts.hardware import devices
    from ultraserver.facts.kubernetes import kueue

    channel = kueue.quota_resource(devices.CHANNEL_DEVICE_CLASS)
    config: dict[str, Any] = {"resources": {}}
    if mapped:
        config["resources"]["deviceClassMappings"] = [
            {"name": channel, "deviceClassNames": [devices.CHANNEL_DEVICE_CLASS]}
        ]

    def build(stack: Stack) -> Stack:
        values = {"managerConfig": {"controllerManagerConfigYaml": json.dumps(config)}}
        release = res(
            "kubernetes:helm.sh/v3:Release",
            "kueue",
            {"chart": "oci://registry.k8s.io/kueue/charts/kueue", "values": values},
        )
        quota = [{"name": channel, "nominalQuota": 8}]
        queue = res(
            "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
            "gb200",
            {
                "metadata": {"name": "gb200"},
                "spec": {
                    "resourceGroups": [{"coveredResources": [channel], "flavors": [{"name": "f", "resources": quota}]}]
                },
            },
        )
        namespace = stack.get("domain").inputs.get("metadata", {}).get("namespace", "default")
        local = res(
            "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
            "gb200-local",
            {"metadata": {"name": "gb200", "namespace": namespace}, "spec": {"clusterQueue": "gb200"}},
        )
        # Stand in for the base's own Kueue and queued jobs (the real stack has both), so the case decides.
        others = [
            r
            for r in stack.resources
            if "kueue.x-k8s.io" not in r.type
            and not str(r.inputs.get("chart", "")).endswith("/kueue")
            and not (r.inputs.get("metadata") or {}).get("labels", {}).get("kueue.x-k8s.io/queue-name")
        ]
        return gpu_job(claims_only=claims_only)(stack.using(add(others, release, queue, local)))

    return build


QUEUE_REQUIRED = {"gb200-multi-node-job-placement": {"requireQueueName": True}}
"""Policy config requiring the queue label even on the fixture base, which declares no Kueue objects."""


def role_policy(actions: list[str]) -> StackChange:
    """The GPU node role gets an inline policy."""

    def build(stack: Stack) -> Stack:
        document = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
        return stack.using(
            add(
                stack.resources,
                res(
                    "aws:iam/rolePolicy:RolePolicy",
                    EXTRA,
                    {"role": role_ref(stack), "policy": json.dumps(document)},
                    [stack.get("gpu_role")],
                ),
            )
        )

    return build


def events_queue_policy(condition: Mapping[str, Any] | None) -> StackChange:
    """A queue policy letting EventBridge send, with this condition."""
    statement = {
        "Effect": "Allow",
        "Principal": {"Service": "events.amazonaws.com"},
        "Action": "sqs:SendMessage",
        "Resource": "arn:aws:sqs:us-east-1:111122223333:q",
        **({"Condition": condition} if condition else {}),
    }
    document = {"Version": "2012-10-17", "Statement": [statement]}
    inputs = {"queueUrl": "https://sqs.us-east-1.amazonaws.com/111122223333/q", "policy": json.dumps(document)}
    policy = res("aws:sqs/queuePolicy:QueuePolicy", EXTRA, inputs)
    return lambda stack: stack.using(add(stack.resources, policy))


def wrong_zone_subnet(stack: Stack) -> Stack:
    """The GPU node group also gets a subnet in another zone."""
    group = stack.get("gpu_ng")
    return stack.swap(group, replace(group, dependencies=[*group.dependencies, stack.get("system_subnet").urn]))


def auto_mode(stack: Stack) -> Stack:
    """Auto Mode on the GB200 cluster."""
    return stack.patch("cluster", {"autoMode": {"enabled": True}})


def auto_mode_without_gb200(stack: Stack) -> Stack:
    """Auto Mode on a cluster without GB200 groups is not this rule's concern."""
    return auto_mode(stack).without("gpu_ng")


def without_efa_plugin(stack: Stack) -> Stack:
    """No EFA device plugin release."""
    return stack.without("efa_plugin")


def dra_mode(stack: Stack) -> Stack:
    """The stack in DRA device mode: DRANET (chart aws-dranet) in place of the EFA device plugin."""
    return release("efa_plugin", {"chart": "aws-dranet"})(stack)


def dra_mode_gpu_job(stack: Stack) -> Stack:
    """DRA mode plus a job that still asks for nvidia.com/gpu (the stack's own plugins-mode jobs left out)."""
    converted = dra_mode(stack)
    return gpu_job()(converted.using([r for r in converted.resources if not r.type.endswith(":MPIJob")]))


def without_efa_anywhere(stack: Stack) -> Stack:
    """No EFA interfaces and no EFA device plugin."""
    return without_efa_plugin(stack).patch(
        "gpu_lt",
        {
            "networkInterfaces": [
                {
                    "networkCardIndex": 0,
                    "deviceIndex": 0,
                    "interfaceType": "interface",
                    "securityGroups": [efa_sg_id(stack)],
                }
            ]
        },
    )


def self_managed(stack: Stack) -> Stack:
    """The base's variant with a self-managed GB200 capacity-block group."""
    return stack.self_managed(stack)


def self_managed_with(role: str, changes: Mapping[str | tuple[str, ...], Any]) -> StackChange:
    """The self-managed group ("sm_group") or its template ("sm_lt") changed."""
    return lambda stack: self_managed(stack).patch(role, changes)


def self_managed_tag(key: str, value: str, **changes: Any) -> StackChange:
    """The self-managed group with one tag set (and other inputs changed)."""

    def build(stack: Stack) -> Stack:
        variant = self_managed(stack)
        tags = [t for t in variant.get("sm_group").inputs["tags"] if t["key"] != key]
        update: dict[str | tuple[str, ...], Any] = dict(changes.items())
        update["tags"] = [*tags, {"key": key, "value": value, "propagateAtLaunch": True}]
        return variant.patch("sm_group", update)

    return build


def with_pulumi_eks_group(stack: Stack) -> Stack:
    """The stack plus a pulumi-eks ManagedNodeGroup and the aws:eks NodeGroup it creates (one group, not two)."""
    eks = stack.get("cluster")
    component = res("eks:index:ManagedNodeGroup", "extra", {"capacityType": "ON_DEMAND"}, [eks])
    child = res("aws:eks/nodeGroup:NodeGroup", "extra", {"capacityType": "ON_DEMAND"}, [eks], parent=component)
    return stack.using(add(stack.resources, component, child))


def deployed(**before: str) -> Config:
    """Upgrade rule config with the GPU group's deployed settings."""
    return lambda stack: {"capacity-block-upgrade-at-zero": {"deployed": {stack.name("gpu_ng"): before}}}


PASSING: list[tuple[Case, dict | Config | None]] = [
    (Case("helm-release-wait", release("gpu_operator", {"skipAwait": True, "atomic": False})), None),
    (Case("kueue-dra-admission", queued_on_kueue(mapped=True)), None),
    (Case("kueue-tas-placement", queued_on_kueue(mapped=True)), None),
    (Case("gb200-multi-node-job-placement", gpu_job()), QUEUE_REQUIRED),
    (Case("gb200-multi-node-job-placement", gpu_job(claim=False, queue=False, exempt=True)), QUEUE_REQUIRED),
    (Case("gb200-multi-node-job-placement", gpu_job(claim=False, queue=False, workers=1)), QUEUE_REQUIRED),
    *[(Case(rule.name, lambda stack: stack), None) for rule in RULES],
    (Case("eks-authentication-mode", cluster({"authenticationMode": "API_AND_CONFIG_MAP"})), None),
    # pulumi-eks's CoreDNS off (the shipped wiring); explicitly enabled, it would gate every node group.
    (Case("node-groups-before-node-workloads", cluster({"corednsAddonOptions": {"enabled": False}})), None),
    (Case("eks-public-endpoint-cidrs", cluster({"endpointPublicAccess": False, "publicAccessCidrs": DELETE})), None),
    (Case("eks-public-endpoint-cidrs", public_cluster(["0.0.0.0/0"])), {"eks-public-endpoint-cidrs": "disabled"}),
    (Case("eks-no-auto-mode-with-gb200", auto_mode_without_gb200), None),
    (Case("eks-kubernetes-version", cluster({"version": "1.34"})), None),
    *[(Case(rule.name, preview), None) for rule in RULES],
    *[(Case(rule.name, self_managed), None) for rule in RULES],
    (Case("eks-managed-node-group-quota", with_pulumi_eks_group), {"eks-managed-node-group-quota": {"quota": 3}}),
    (
        Case(
            "eks-public-endpoint-cidrs",
            aws_cluster({"vpcConfig.endpointPublicAccess": False, "vpcConfig.publicAccessCidrs": DELETE}),
        ),
        None,
    ),
    (Case("gb200-ami-release", lt({("tags", "ultraserver.io/ami-release"): "recommended"})), None),
    (Case("gb200-ami-release", gpu_ng({"amiType": "AL2023_ARM_64_NVIDIA", "releaseVersion": "1.33.5-20251120"})), None),
    (
        Case(
            "gb200-ami-variant",
            lambda stack: lt({"imageId": DELETE})(stack).patch("gpu_ng", {"amiType": "AL2023_ARM_64_NVIDIA"}),
        ),
        None,
    ),
    (Case("efa-security-group-self-referencing", inline_self_sg), None),
    (Case("efa-security-group-self-referencing", legacy_sg_rules), None),
    (Case("efa-security-group-self-referencing", lambda stack: sg_rules_by_property(stack, "self")), None),
    (Case("efa-device-plugin-present", without_efa_anywhere), None),
    (Case("efa-device-plugin-present", dra_mode), None),
    (Case("dra-mode-no-plugin-resources", gpu_job()), None),
    (Case("capacity-block-upgrade-at-zero", gpu_ng({"scalingConfig.desiredSize": 0})), deployed(version="1.32")),
    (Case("capacity-block-upgrade-at-zero", running({"version": "1.33"})), deployed(version="1.33")),
    (
        Case(
            "dra-driver-gpu-allocation-disabled",
            release("dra", {"values.resources.gpus.enabled": True, "values.gpuResourcesEnabledOverride": True}),
        ),
        None,
    ),
    (Case("dra-driver-version", release("dra", {"version": "0.5.0"})), None),
    (Case("eks-managed-node-group-quota", many_node_groups(28)), None),
    (
        Case("node-role-managed-policies", extra_attachment("arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore")),
        {
            "node-role-managed-policies": {
                "allowedPolicyArns": [
                    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
                    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
                    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
                    "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
                ]
            }
        },
    ),
    (Case("iam-no-wildcard-actions", role_policy(["ec2:DescribeInstances", "ec2:Describe*"])), None),
    (
        Case(
            "sqs-queue-events-source-arn",
            events_queue_policy({"ArnEquals": {"AWS:SourceArn": ["arn:aws:events:us-east-1:111122223333:rule/r"]}}),
        ),
        None,
    ),
    (
        Case(
            "launch-template-encrypted-root-volume",
            lt({"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": True, "volumeSize": 200}}]}),
        ),
        None,
    ),
]

FAILING: list[tuple[Case, dict | Config | None]] = [
    (
        Case(
            "helm-release-wait",
            release("gpu_operator", {"skipAwait": True, "atomic": True}),
            "gpu_operator",
            "is atomic",
        ),
        None,
    ),
    (
        Case("helm-release-wait", release("efa_plugin", {"skipAwait": DELETE}), "efa_plugin", "on every GPU node"),
        None,
    ),
    (Case("kueue-dra-admission", queued_on_kueue(mapped=False), "gpu_job", "is not mapped in DRA configuration"), None),
    (
        Case("kueue-tas-placement", queued_on_kueue(mapped=True, claims_only=True), "gpu_job", "only DRA claims"),
        None,
    ),
    (Case("gb200-multi-node-job-placement", gpu_job(claim=False), "gpu_job", "ComputeDomain claim"), None),
    (
        Case("gb200-multi-node-job-placement", gpu_job(queue=False), "gpu_job", "kueue.x-k8s.io/queue-name"),
        QUEUE_REQUIRED,
    ),
    (
        Case("gb200-multi-node-job-placement", gpu_job(topology=False), "gpu_job", "podset-required-topology or"),
        None,
    ),
    (Case("eks-kubernetes-version", cluster({"version": "1.32"}), "cluster", ">= 1.33"), None),
    (Case("eks-kubernetes-version", cluster({"version": DELETE}), "cluster", "None"), None),
    (Case("eks-authentication-mode", cluster({"authenticationMode": "CONFIG_MAP"}), "cluster", "CONFIG_MAP"), None),
    (Case("eks-no-auto-mode-with-gb200", auto_mode, "cluster", "Auto Mode"), None),
    (Case("eks-secrets-encryption", cluster({"encryptionConfigKeyArn": DELETE}), "cluster", "KMS key"), None),
    (
        Case("eks-public-endpoint-cidrs", public_cluster(DELETE), "cluster", "none with the public API endpoint on"),
        None,
    ),
    (Case("eks-public-endpoint-cidrs", public_cluster(["0.0.0.0/0"]), "cluster", "0.0.0.0/0"), None),
    (Case("eks-kubernetes-version", aws_cluster({"version": "1.31"}), "aws_cluster", ">= 1.33"), None),
    (
        Case(
            "eks-authentication-mode",
            aws_cluster({"accessConfig.authenticationMode": "CONFIG_MAP"}),
            "aws_cluster",
            "CONFIG_MAP",
        ),
        None,
    ),
    (
        Case(
            "eks-no-auto-mode-with-gb200", aws_cluster({"computeConfig": {"enabled": True}}), "aws_cluster", "Auto Mode"
        ),
        None,
    ),
    (Case("eks-secrets-encryption", aws_cluster({"encryptionConfig.resources": []}), "aws_cluster", "KMS key"), None),
    (
        Case(
            "eks-public-endpoint-cidrs",
            aws_cluster({"vpcConfig.endpointPublicAccess": True, "vpcConfig.publicAccessCidrs": ["::/0"]}),
            "aws_cluster",
            "::/0",
        ),
        None,
    ),
    (Case("capacity-block-node-group", gpu_ng({"launchTemplate": DELETE}), "gpu_ng", "custom launch template"), None),
    (Case("capacity-block-node-group", gpu_ng({"capacityType": "ON_DEMAND"}), "gpu_ng", "CAPACITY_BLOCK"), None),
    (
        Case("capacity-block-node-group", gpu_ng({"instanceTypes": ["p6e-gb200.36xlarge"]}), "gpu_ng", "instanceTypes"),
        None,
    ),
    (Case("capacity-block-launch-template", lt({"instanceMarketOptions": DELETE}), "gpu_lt", "marketType"), None),
    (
        Case(
            "capacity-block-launch-template",
            lt({"capacityReservationSpecification": DELETE}),
            "gpu_lt",
            "reservation target",
        ),
        None,
    ),
    (
        Case("capacity-block-upgrade-at-zero", running({"version": "1.33"}), "gpu_ng", "version changes"),
        deployed(version="1.32"),
    ),
    (
        Case(
            "capacity-block-upgrade-at-zero",
            lambda stack: running({})(lt({("tags", "ultraserver.io/ami-release"): "v20251201"})(stack)),
            "gpu_ng",
            "amiRelease changes",
        ),
        deployed(amiRelease="v20251103"),
    ),
    (Case("capacity-block-upgrade-at-zero", running({("tags", UPGRADE_SAFE): "true"}), "gpu_ng", "upgrade-safe"), None),
    (Case("eks-managed-node-group-quota", many_node_groups(29), "cluster", "at most 30, the default EKS quota"), None),
    (
        Case(
            "node-groups-before-node-workloads",
            lambda stack: gpu_waits_for("dra")(release("dra", {"skipAwait": DELETE})(stack)),
            "gpu_ng",
            "waits for {dra} (a Helm release",
        ),
        None,
    ),
    (
        Case("eks-managed-node-group-quota", many_node_groups(1), "cluster", "at most 2, the default EKS quota"),
        {"eks-managed-node-group-quota": {"quota": 2}},
    ),
    (Case("gpu-subnets-in-reservation-zone", wrong_zone_subnet, "gpu_ng", "{system_subnet}"), None),
    (Case("gpu-subnets-in-reservation-zone", self_managed_tag(ZONE_TAG, "us-east-1b"), "sm_group", "us-east-1b"), None),
    (
        Case("eks-managed-node-group-quota", with_pulumi_eks_group, "cluster", "at most 2, the default EKS quota"),
        {"eks-managed-node-group-quota": {"quota": 2}},
    ),
    (
        Case(
            "gb200-ami-variant",
            self_managed_with("sm_lt", {"imageId": DELETE}),
            "sm_group",
            "a launch template without imageId",
        ),
        None,
    ),
    (
        Case(
            "capacity-block-launch-template",
            self_managed_with("sm_lt", {"capacityReservationSpecification": DELETE}),
            "sm_lt",
            "reservation target",
        ),
        None,
    ),
    (
        Case(
            "capacity-block-upgrade-at-zero",
            self_managed_tag(UPGRADE_SAFE, "true", desiredCapacity=9),
            "sm_group",
            "got desired size 9 with the tag",
        ),
        None,
    ),
    (Case("gb200-ena-primary", card(0, "interfaceType", "efa"), "gpu_lt", "'efa' interface"), None),
    (Case("gb200-ena-primary", card(0, "networkCardIndex", 2), "gpu_lt", "no interface"), None),
    (Case("gb200-no-efa-only-primary", card(0, "interfaceType", "efa-only"), "gpu_lt", "efa-only"), None),
    (Case("gb200-network-card-range", card(1, "networkCardIndex", 17), "gpu_lt", "[17]"), None),
    (Case("gb200-network-card-range", card(5, "networkCardIndex", 1), "gpu_lt", "allowed: each pair once"), None),
    (Case("gb200-odd-cards-efa-only", card(5, "interfaceType", "efa"), "gpu_lt", "[5]"), None),
    (Case("efa-security-group-self-referencing", efa_sg_without_egress, "gpu_lt", "{efa_sg}"), None),
    (Case("efa-security-group-self-referencing", efa_sg_referencing_other_group, "gpu_lt", "{efa_sg}"), None),
    (
        Case(
            "efa-security-group-self-referencing",
            lambda stack: sg_rules_by_property(stack, "other"),
            "gpu_lt",
            "{efa_sg}",
        ),
        None,
    ),
    (
        Case(
            "efa-security-group-self-referencing",
            card(1, "securityGroups", []),
            "gpu_lt",
            "an EFA interface without security groups",
        ),
        None,
    ),
    (Case("launch-template-imdsv2", lt({"metadataOptions.httpTokens": "optional"}), "gpu_lt", "IMDSv1"), None),
    (Case("launch-template-imdsv2", changed("system_lt", {"metadataOptions": DELETE}), "system_lt", "got unset"), None),
    (Case("launch-template-encrypted-root-volume", lt({"blockDeviceMappings": DELETE}), "gpu_lt", "root device"), None),
    (
        Case(
            "launch-template-encrypted-root-volume",
            lt({"blockDeviceMappings.0": {"deviceName": "/dev/xvda", "ebs": {"encrypted": "false"}}}),
            "gpu_lt",
            "allowed: true (every EBS volume encrypted)",
        ),
        None,
    ),
    (
        Case(
            "gb200-ami-variant",
            lambda stack: lt(
                {
                    "imageId": "ami-0123456789abcdef0",
                    (
                        "tags",
                        "ultraserver.io/ami-ssm-parameter",
                    ): "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/nvidia/recommended/image_id",
                }
            )(stack).patch("gpu_ng", {"amiType": DELETE, "releaseVersion": DELETE}),
            "gpu_lt",
            "allowed: an AL2023 ARM64 NVIDIA SSM path",
        ),
        None,
    ),
    (
        Case(
            "gb200-ami-variant",
            lambda stack: lt({"imageId": DELETE})(stack).patch("gpu_ng", {"amiType": "AL2023_ARM_64_STANDARD"}),
            "gpu_ng",
            "AL2023_ARM_64_STANDARD",
        ),
        None,
    ),
    (
        Case(
            "gb200-ami-variant",
            lambda stack: lt(
                {
                    "imageId": "ami-0123456789abcdef0",
                    ("tags", "ultraserver.io/ami-ssm-parameter"): NVIDIA_IMAGE_PARAMETER,
                }
            )(stack).patch("gpu_ng", {"amiType": "AL2023_ARM_64_NVIDIA"}),
            "gpu_ng",
            "sets imageId",
        ),
        None,
    ),
    (Case("gb200-ami-release", lt({("tags", "ultraserver.io/ami-release"): "v20250519"}), "gpu_lt", "v20250519"), None),
    (
        Case(
            "gb200-ami-release",
            gpu_ng({"amiType": "AL2023_ARM_64_NVIDIA", "releaseVersion": "1.33.0-20250519"}),
            "gpu_ng",
            "releaseVersion",
        ),
        None,
    ),
    (Case("gpu-operator-version", release("gpu_operator", {"version": "v25.3.1"}), "gpu_operator", "v25.3.1"), None),
    (Case("gpu-operator-version", release("gpu_operator", {"version": DELETE}), "gpu_operator", "None"), None),
    (
        Case(
            "gpu-operator-host-driver",
            release("gpu_operator", {"values.driver": DELETE}),
            "gpu_operator",
            "driver.enabled=false",
        ),
        None,
    ),
    (
        Case(
            "gpu-operator-host-driver",
            release("gpu_operator", {"values.toolkit.enabled": True}),
            "gpu_operator",
            "toolkit.enabled=false",
        ),
        None,
    ),
    (
        Case(
            "gpu-operator-mig-manager-disabled",
            release("gpu_operator", {"values.migManager": DELETE}),
            "gpu_operator",
            "migManager.enabled=false",
        ),
        None,
    ),
    (
        Case(
            "gpu-operator-no-dra-driver",
            release("gpu_operator", {"values.gpuCluster.deployCR": True}),
            "gpu_operator",
            "its own DRA driver",
        ),
        None,
    ),
    (Case("dra-driver-version", release("dra", {"version": "25.12.0"}), "dra", "cannot go back to 25.x"), None),
    (Case("dra-driver-version", release("dra", {"version": "0.3.0"}), "dra", "0.4.0 or later"), None),
    (
        Case(
            "dra-driver-version",
            release("dra", {"chart": "nvidia-dra-driver-gpu", "version": "25.8.0"}),
            "dra",
            "the pre-0.4 name",
        ),
        None,
    ),
    (Case("dra-driver-version", release("dra", {"version": DELETE}), "dra", "pin an exact version"), None),
    (
        Case(
            "dra-driver-compute-domains-enabled",
            release("dra", {"values.resources.computeDomains.enabled": False}),
            "dra",
            "computeDomains.enabled=true",
        ),
        None,
    ),
    (
        Case(
            "dra-driver-gpu-allocation-disabled",
            release("dra", {"values.resources.gpus": DELETE}),
            "dra",
            "gpus.enabled=false",
        ),
        None,
    ),
    (Case("efa-device-plugin-present", without_efa_plugin, "gpu_lt", "aws-efa-k8s-device-plugin"), None),
    (Case("dra-mode-no-plugin-resources", dra_mode_gpu_job, "gpu_job", "requests nvidia.com/gpu"), None),
    (
        Case(
            "efa-device-plugin-tolerates-gpu",
            release("efa_plugin", {"values.tolerations": []}),
            "efa_plugin",
            "nvidia.com/gpu",
        ),
        None,
    ),
    (
        Case(
            "efa-device-plugin-tolerates-gpu",
            release(
                "efa_plugin",
                {"values.tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}]},
            ),
            "efa_plugin",
            "nvidia.com/gpu",
        ),
        None,
    ),
    (Case("iam-no-wildcard-actions", role_policy(["s3:*"]), "extra_policy", "s3:*"), None),
    (Case("iam-no-wildcard-actions", role_policy(["*"]), "extra_policy", "['*']"), None),
    (
        Case("sqs-queue-events-source-arn", events_queue_policy(None), "extra_queue_policy", "aws:SourceArn condition"),
        None,
    ),
    (
        Case(
            "sqs-queue-events-source-arn",
            events_queue_policy({"StringEquals": {"aws:SourceAccount": "111122223333"}}),
            "extra_queue_policy",
            "naming the queue's rules",
        ),
        None,
    ),
    (
        Case(
            "node-role-managed-policies",
            extra_attachment("arn:aws:iam::aws:policy/AdministratorAccess"),
            "extra_attachment",
            "AdministratorAccess",
        ),
        None,
    ),
]
