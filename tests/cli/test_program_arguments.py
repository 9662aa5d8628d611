"""A program with a wrong component argument ends in exit 2 naming the argument: never exit 3, never coerced."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_main

PROGRAM = """
from ultraserver import ClusterCoreData, GpuNodeGroup, GpuNodeGroupArgs, GpuNodeGroupSettings

cluster = ClusterCoreData(
    name="gb200",
    endpoint="https://ABC.gr7.us-east-1.eks.amazonaws.com",
    certificate_authority="Y2VydA==",
    service_cidr="10.100.0.0/16",
    security_group_id="sg-0ccccccccccccccc1",
)
GROUP = dict(name="nvl72", availability_zone="us-east-1-dfw-2a", capacity_reservation_ids=["cr-0123456789abcdef0"])
WIRING = dict(cluster=cluster, subnet_ids=["subnet-0aaaaaaaaaaaaaaaa"])
"""


def plan_program(directory: Path, source: str) -> Any:
    """``ultraserver plan`` of a one-file Pulumi project."""
    (directory / "Pulumi.yaml").write_text("name: arguments\nruntime: python\n")
    (directory / "Pulumi.dev.yaml").write_text("config:\n  aws:region: us-east-1\n")
    (directory / "__main__.py").write_text(source)
    return run_main("plan", "--stack", "dev", "--project-dir", str(directory), "--now", "2026-11-25T10:00:00Z")


def refused_naming(result: Any, key: str, says: str) -> None:
    """Exit 2, one Problem line that starts with the argument, the fix or what is allowed in the text."""
    assert result.code == 2, result.stderr
    assert "internal error" not in result.stderr
    line = next(line for line in result.stderr.splitlines() if key in line)
    assert line.strip().startswith(f"-  {key}"), result.stderr
    assert says in result.stderr, result.stderr


@pytest.mark.parametrize(
    ("call", "key", "says"),
    [
        (
            'GpuNodeGroupArgs(settings=GpuNodeGroupSettings(**GROUP), cluster=cluster, subnet_ids="subnet-0a")',
            "GpuNodeGroupArgs.subnet_ids",
            "a list of strings",
        ),
        (
            'GpuNodeGroupArgs(settings=GpuNodeGroupSettings(**GROUP, root_volume_size_gib="200"), **WIRING)',
            "GpuNodeGroupSettings.root_volume_size_gib",
            "a whole number",
        ),
        (
            "GpuNodeGroupArgs(settings=GpuNodeGroupSettings(**GROUP, root_volume_size_gib=1), **WIRING)",
            "GpuNodeGroupSettings.root_volume_size_gib",
            ">= 50",
        ),
        (
            'GpuNodeGroupArgs(settings=GpuNodeGroupSettings(**GROUP, instance_type="p5.48xlarge"), **WIRING)',
            "GpuNodeGroupSettings.instance_type",
            "follows ultraserverType",
        ),
        ("GpuNodeGroupArgs(settings=GROUP, **WIRING)", "GpuNodeGroupArgs.settings", "GpuNodeGroupSettings"),
        (
            'GpuNodeGroupArgs(capacity_reservation_id="cr-0123456789abcdef0", **WIRING)',
            "GpuNodeGroupArgs.capacity_reservation_id",
            "capacity_reservation_ids=[<cr-...>]",
        ),
        ("GpuNodeGroupArgs(settings=GpuNodeGroupSettings(**GROUP), cluster=cluster)", "GpuNodeGroupArgs", "subnet_ids"),
        (
            "GpuNodeGroupArgs(settings=GpuNodeGroupSettings(**GROUP), tags={'team': 7}, **WIRING)",
            "GpuNodeGroupArgs.tags",
            "a mapping of strings to strings",
        ),
    ],
)
def test_a_wrong_argument_is_exit_2_naming_it(tmp_path: Path, call: str, key: str, says: str) -> None:
    refused_naming(plan_program(tmp_path, f'{PROGRAM}\nGpuNodeGroup("gpu", {call})\n'), key, says)


def test_the_same_program_with_right_arguments_plans(tmp_path: Path) -> None:
    call = "GpuNodeGroupArgs(settings=GpuNodeGroupSettings(**GROUP), **WIRING)"
    result = plan_program(tmp_path, f'{PROGRAM}\nGpuNodeGroup("gpu", {call})\n')
    assert result.code == 0, result.stderr


@pytest.mark.parametrize(
    ("statement", "key", "says"),
    [
        ('Network("net", NetworkArgs(cluster_name="gb200", subnets="10.0.0.0/24"))', "NetworkArgs.subnets", "a list"),
        (
            'Network("net", NetworkArgs(cluster_name="g", settings=NetworkSettings(private_subnet_ids="subnet-0a")))',
            "NetworkSettings.private_subnet_ids",
            "a list",
        ),
        (
            'Network("net", NetworkArgs(cluster_name="gb200", vpc_id="vpc-0a"))',
            "NetworkArgs.vpc_id",
            "settings=NetworkSettings(...): write vpc_id=",
        ),
        ('Network("net", NetworkArgs(cluster_name=["gb200"]))', "NetworkArgs.cluster_name", "a string"),
        (
            'Network("net", NetworkArgs(cluster_name="g", settings=NetworkSettings(vpc_cidr="10.0.0.0/16", '
            'secondary_vpc_cidrs=["10.0.128.0/17"])))',
            "NetworkArgs.settings.secondaryVpcCidrs[0]",
            "a block apart from the VPC's other blocks",
        ),
        ('NodeRole("role", NodeRoleArgs(instance_profile="yes"))', "NodeRoleArgs.instance_profile", "true or false"),
        (
            'KubernetesLayer("k8s", KubernetesLayerArgs(provider=None, settings=None, devices="dra"))',
            "KubernetesLayerArgs.devices",
            "settings=Settings(kubernetes=KubernetesSettings(...)): write kubernetes=KubernetesSettings(devices=",
        ),
        (
            'KubernetesLayer("k8s", KubernetesLayerArgs(provider=None, settings=None, system_node_selector={}))',
            "KubernetesLayerArgs.system_node_selector",
            "remove it: the layer runs its controllers on the system node group's labels",
        ),
        (
            'KubernetesLayer("k8s", KubernetesLayerArgs(provider=None, settings=None, kueue=None))',
            "KubernetesLayerArgs.kueue",
            "the layer derives Kueue and its quota from settings",
        ),
        (
            'KubernetesLayer("k8s", KubernetesLayerArgs(provider="k8s", settings=None))',
            "KubernetesLayerArgs.provider",
            "Provider",
        ),
        ("from ultraserver import KueueArgs", "ultraserver.KueueArgs", "KubernetesSettings(kueue=KueueSettings(...))"),
    ],
)
def test_every_components_arguments_are_checked(tmp_path: Path, statement: str, key: str, says: str) -> None:
    prelude = (
        "from ultraserver import KubernetesLayer, KubernetesLayerArgs, Network, NetworkArgs, NetworkSettings, "
        "NodeRole, NodeRoleArgs\n"
    )
    refused_naming(plan_program(tmp_path, f"{prelude}{statement}\n"), key, says)


@pytest.mark.parametrize(
    ("statement", "key", "says"),
    [
        # A component called wrongly: arguments misplaced, opts as a dict, one missing.
        ('Network(NetworkArgs(cluster_name="g"), "net")', "Network.name", "a string"),
        ('Network(NetworkArgs(cluster_name="g"), "net")', "Network.args", "NetworkArgs"),
        ('Network("net", NetworkArgs(cluster_name="g"), {"protect": True})', "Network.opts", "ResourceOptions"),
        ('NodeRole("role")', "NodeRole", "missing a required argument: 'args'"),
        # The public functions: a wrong type, or a count below zero (ips_needed(-18, ...) answered -1183).
        ('ips_needed("18", 110, 17)', "ips_needed.nodes", "a whole number >= 0"),
        ("ips_needed(-18, 110, 17)", "ips_needed.nodes", "a whole number >= 0"),
        ("ips_needed(18, None, 17)", "ips_needed.pods_per_node", "a whole number >= 0"),
        ('plan_subnets("10.0.0.0/16", "us-east-1a", {}, 2, 110)', "plan_subnets.regional_zones", "a list of zone"),
        ('plan_subnets(10, ["us-east-1a"], {}, 2, 110)', "plan_subnets.vpc_cidr", "an IPv4 CIDR block"),
        ('plan_subnets("10.0.0.0/16", ["us-east-1a"], [1], 2, 110)', "plan_subnets.gpu_ip_needs", "a mapping"),
        ('plan_subnets("10.0.0.0/16", ["us-east-1a"], {}, -2, 110)', "plan_subnets.system_nodes", ">= 0"),
        ("summarize_layout(1, [])", "summarize_layout.instance_type", "an instance type name"),
        ('summarize_layout("p6e-gb200.36xlarge", "efa")', "summarize_layout.interfaces", "a list of EfaInterface"),
    ],
)
def test_components_and_functions_called_wrongly_name_the_argument(
    tmp_path: Path, statement: str, key: str, says: str
) -> None:
    prelude = (
        "from ultraserver import Network, NetworkArgs, NodeRole, NodeRoleArgs\n"
        "from ultraserver.config.subnets import ips_needed, plan_subnets\n"
        "from ultraserver.facts.hardware.efa import summarize_layout\n"
    )
    refused_naming(plan_program(tmp_path, f"{prelude}{statement}\n"), key, says)


CLUSTER = 'Cluster("c", ClusterArgs(vpc_id="vpc-0a", private_subnet_ids=["subnet-0a", "subnet-0b"], {}))'


@pytest.mark.parametrize(
    ("statement", "key", "says"),
    [
        # What the stack file refuses, the components refuse too, before anything is declared.
        (CLUSTER.format('name="a" * 101'), "ClusterArgs.name", "at most 100 characters"),
        (CLUSTER.format('name="gb 200"'), "ClusterArgs.name", "letters, digits, - and _"),
        (
            'Cluster("c", ClusterArgs(name="gb200", vpc_id="vpc-0a", private_subnet_ids=["subnet-0a"]))',
            "ClusterArgs.private_subnet_ids",
            "at least two subnets",
        ),
        (CLUSTER.format('name="gb200", tags={"aws:team": "ml"}'), "ClusterArgs.tags.aws:team", "reserved aws:"),
        ('Network("net", NetworkArgs(cluster_name=""))', "NetworkArgs.cluster_name", "an EKS cluster name"),
        (
            'Network("net", NetworkArgs(cluster_name="g", tags={"team": "aws:ml"}))',
            "NetworkArgs.tags.team",
            "values without the reserved aws: prefix",
        ),
        (
            'GpuNodeGroup("gpu", GpuNodeGroupArgs(settings=GpuNodeGroupSettings(**GROUP), cluster=cluster, '
            "subnet_ids=[]))",
            "GpuNodeGroupArgs.subnet_ids",
            "one subnet or more",
        ),
        (
            'GpuNodeGroup("gpu", GpuNodeGroupArgs(settings=GpuNodeGroupSettings(**GROUP), tags={"": "x"}, **WIRING))',
            "GpuNodeGroupArgs.tags.",
            "keys of 1 character or more",
        ),
    ],
)
def test_the_components_refuse_what_the_stack_file_refuses(tmp_path: Path, statement: str, key: str, says: str) -> None:
    prelude = f"{PROGRAM}\nfrom ultraserver import Cluster, ClusterArgs, Network, NetworkArgs\n"
    refused_naming(plan_program(tmp_path, f"{prelude}{statement}\n"), key, says)
