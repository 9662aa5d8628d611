"""Stack settings: every shipped stack is valid; every bad input is one clear message naming the key."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers.stacks import STACKS, stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.pins import ami
from ultraserver.problems import ConfigError


def problems_for(stack: str, section: str, change: Any) -> list[str]:
    """Problems after applying ``change`` (a function editing the section in place) to a shipped stack."""
    config = copy.deepcopy(stack_config(stack))
    key = f"ultraserver-eks:{section}" if ":" not in section else section
    if callable(change):
        change(config[key])
    else:
        config[key] = change
    with pytest.raises(ConfigError) as info:
        parse_settings(config, stack=stack)
    return [str(p) for p in info.value.items]


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stacks_are_valid(stack: str) -> None:
    settings = parse_settings(stack_config(stack), stack=stack)
    assert settings.cluster.kubernetes_version >= "1.33"
    assert settings.gpu_node_groups, "every shipped stack plans GB200 nodes"


def test_shipped_stacks_cover_both_ultraserver_types_and_many_ultraservers() -> None:
    groups = [g for s in STACKS for g in parse_settings(stack_config(s), stack=s).gpu_node_groups]
    assert {g.ultraserver_type for g in groups} == {"u-p6e-gb200x36", "u-p6e-gb200x72"}
    assert {g.mode for g in groups} == {"managed", "self-managed"}
    assert max(g.node_groups for g in groups) > 1
    assert any(g.grouped for g in groups)


def test_defaults_fill_a_minimal_stack() -> None:
    settings = parse_settings(
        {
            "aws:region": "us-west-2",
            "ultraserver-eks:cluster": {"name": "c1", "endpointPublicAccessCidrs": ["203.0.113.0/24"]},
            "ultraserver-eks:network": {"availabilityZones": ["us-west-2a", "us-west-2b"]},
        }
    )
    assert settings.cluster.kubernetes_version == eks_versions.DEFAULT_TEXT == "1.35"
    assert settings.cluster.deployer_access == "public-endpoint"
    assert settings.cluster.deployer_runner_labels == ("ubuntu-latest",)
    assert settings.kubernetes.layer == "same-stack"
    assert settings.system_node_group.instance_type == "m7g.xlarge"
    assert settings.imex_check.threshold_gbps == 700.0
    assert settings.gpu_node_groups == ()


def test_json_strings_are_read_like_yaml() -> None:
    # The Pulumi engine hands object config to programs as JSON strings.
    config = {
        k: __import__("json").dumps(v) if not isinstance(v, str) else v for k, v in stack_config("gb200-x72").items()
    }
    assert parse_settings(config).cluster.name == "gb200-x72"


@pytest.mark.parametrize(
    ("section", "change", "expected"),
    [
        (
            "cluster",
            lambda c: c.update(kubernetesVersion="1.31"),
            ["cluster.kubernetesVersion", "'1.31'", "1.33 or newer", 'set kubernetesVersion: "1.35"'],
        ),
        (
            "cluster",
            lambda c: c.update(endpointPublicAccessCidrs=["0.0.0.0/0"]),
            ["endpointPublicAccessCidrs", "0.0.0.0/0", "allowPublicEndpointFromAnywhere"],
        ),
        (
            "cluster",
            lambda c: c.update(endpointPublicAccessCidrs=["10.0.0.300/8"]),
            ["endpointPublicAccessCidrs[0]", "10.0.0.300/8", "CIDR"],
        ),
        (
            "cluster",
            lambda c: c.update(adminPrincipalArns=["admin"]),
            ["adminPrincipalArns[0]", "'admin'", "role or user ARN"],
        ),
        ("cluster", lambda c: c.update(nmae="x"), ["cluster.nmae", "did you mean 'name'"]),
        ("cluster", lambda c: c.pop("name"), ["cluster.name", "required"]),
        ("aws:region", "mars-1", ["aws:region", "'mars-1'", "us-east-1"]),
        (
            "network",
            lambda n: n.update(availabilityZones=["us-east-1a"]),
            ["network.availabilityZones", "at least two"],
        ),
        (
            "network",
            lambda n: n.update(availabilityZones=["eu-west-1a", "us-east-1b"]),
            ["availabilityZones[0]", "eu-west-1a", "zone of us-east-1"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(capacityReservationIds=["cr-123"]),
            ["capacityReservationIds[0]", "cr-123"],
        ),
        ("gpuNodeGroups", lambda g: g[0].update(desiredSize=19), ["gpuNodeGroups[0].desiredSize", "19", "0 to 18"]),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(ultraserverType="u-p6e-gb200x144"),
            ["ultraserverType", "u-p6e-gb200x72"],
        ),
        ("gpuNodeGroups", lambda g: g[0].update(efaLayout="fastest"), ["efaLayout", "'fastest'", "one-per-nci-group"]),
        ("gpuNodeGroups", lambda g: g[0].update(amiRelease="v20250519"), ["amiRelease", "v20250519"]),
        ("gpuNodeGroups", lambda g: g[0].update(amiId="ami-0123456789abcdef0"), ["amiId", "amiRelease"]),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(amiRelease="v20251204"),
            ["gpuNodeGroups[0].amiRelease", "only with amiId", "releaseVersion (e.g. 1.35.6-20260714)"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(releaseVersion="1.34.2-20260120"),
            ["gpuNodeGroups[0].releaseVersion", "a release of the cluster's Kubernetes 1.35"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(releaseVersion="1.35.5-20250704"),
            ["gpuNodeGroups[0].releaseVersion", "release 20251103 or later"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(releaseVersion="1.35.5-29991231"),
            ["gpuNodeGroups[0].releaseVersion", "a release already published"],
        ),
        ("gpuNodeGroups", lambda g: g[0].update(releaseVersion="v20251103"), ["releaseVersion", "1.35.6-20260714"]),
        ("gpuNodeGroups", lambda g: g[0].update(imdsHopLimit=3), ["gpuNodeGroups[0].imdsHopLimit", "<= 2"]),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(
                capacityReservationIds=[],
                capacityReservationResourceGroupArn="arn:aws:resource-groups:us-east-1:111122223333:group/g",
                ultraserverCount=2,
            ),
            ["gpuNodeGroups[0].capacityReservationResourceGroupArn", "only with mode: self-managed", "one managed"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(mode="karpenter"),
            ["gpuNodeGroups[0].mode", "'karpenter'", "self-managed"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g.append(dict(g[0])),
            ["unique group names", "each capacity reservation in one group only"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(
                capacityReservationResourceGroupArn="arn:aws:resource-groups:us-east-1:111122223333:group/x"
            ),
            ["either capacityReservationIds"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(reservationWindow={"start": "2026-12-02T00:00:00Z", "end": "2026-12-01T00:00:00Z"}),
            ["reservationWindow.end", "after start"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(availabilityZone="us-west-2a"),
            ["availabilityZone", "us-west-2a", "region us-east-1"],
        ),
        ("addons", {"vpcCni": "v1.18.1-eksbuild.1"}, ["addons.vpcCni", "v1.18.5 or newer"]),
        ("imexCheck", {"nodes": 19}, ["imexCheck.nodes", "19"]),
        ("autoDeploy", "yes", ["autoDeploy", "true or false"]),
    ],
)
def test_bad_input_names_key_value_allowed_and_fix(section: str, change: Any, expected: list[str]) -> None:
    problems = problems_for("gb200-x72", section, change)
    text = "\n".join(problems)
    for fragment in expected:
        assert fragment in text, f"{fragment!r} missing from:\n{text}"
    for line in problems:
        assert line.startswith(("ultraserver-eks:", "aws:")), f"problem does not name its key: {line}"


def test_every_problem_is_reported_at_once() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:cluster"]["kubernetesVersion"] = "1.30"
    config["ultraserver-eks:gpuNodeGroups"][0]["capacityReservationIds"] = ["nope"]
    config["aws:region"] = "nowhere"
    with pytest.raises(ConfigError) as info:
        parse_settings(config)
    assert len([str(p) for p in info.value.items]) >= 3


def test_existing_vpc_needs_gpu_subnets_in_the_reservation_zone() -> None:
    problems = problems_for(
        "gb200-x36", "network", lambda n: n.update(gpuSubnetIds={"us-east-1a": ["subnet-0ccccccccccccccc1"]})
    )
    assert any("availabilityZone" in p and "gpuSubnetIds" in p for p in problems)


def test_subnet_ids_need_a_vpc_id() -> None:
    problems = problems_for("gb200-x72", "network", lambda n: n.update(privateSubnetIds=["subnet-0aaaaaaaaaaaaaaa1"]))
    assert any("network.privateSubnetIds" in p and "vpcId" in p for p in problems)


def test_public_endpoint_from_anywhere_only_when_asked() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:cluster"].update(
        endpointPublicAccessCidrs=["0.0.0.0/0"], allowPublicEndpointFromAnywhere=True
    )
    assert parse_settings(config).cluster.public_access_cidrs == ("0.0.0.0/0",)


@pytest.mark.parametrize(
    ("version", "release"), [("1.33", "1.33.13-20260714"), ("1.34", "1.34.9-20260714"), ("1.35", "1.35.6-20260714")]
)
def test_release_version_defaults_to_the_pinned_release_of_the_cluster_minor(version: str, release: str) -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:cluster"]["kubernetesVersion"] = version
    (group,) = parse_settings(config).gpu_node_groups
    assert group.release_version == release and group.imds_hop_limit == 1


def test_no_default_release_for_an_unknown_minor_names_the_ssm_parameter(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without a pinned GB200 AMI release for a minor, the version itself is refused, naming the pinned ones.
    monkeypatch.setattr(ami, "RELEASE_VERSIONS", {k: v for k, v in ami.RELEASE_VERSIONS.items() if k != "1.36"})
    problems = problems_for("gb200-x72", "cluster", lambda c: c.update(kubernetesVersion="1.36"))
    assert any(
        "cluster.kubernetesVersion: got '1.36'" in p and "pins no GB200 AMI release" in p and "1.35" in p
        for p in problems
    )


def test_custom_ami_needs_no_release_version() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:gpuNodeGroups"][0].update(amiId="ami-0123456789abcdef0", amiRelease="v20251204")
    (group,) = parse_settings(config).gpu_node_groups
    assert (group.ami_id, group.ami_release, group.release_version) == ("ami-0123456789abcdef0", "v20251204", "")


def test_imex_check_nodes_all_means_every_node() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:imexCheck"] = {"nodes": "all"}
    assert parse_settings(config, stack="gb200-x72").imex_check.nodes is None


def test_imex_check_nodes_other_words_are_rejected() -> None:
    (problem,) = problems_for("gb200-x72", "imexCheck", {"nodes": "every"})
    assert problem.startswith("ultraserver-eks:imexCheck.nodes: got 'every'; allowed: an integer 2 to 18, or \"all\"")


def test_auto_repair_is_read_and_refused_on_self_managed_groups() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:gpuNodeGroups"][0]["autoRepair"] = True
    assert parse_settings(config, stack="gb200-x72").gpu_node_groups[0].auto_repair is True
    config["ultraserver-eks:gpuNodeGroups"][0]["mode"] = "self-managed"
    with pytest.raises(ConfigError, match=r"gpuNodeGroups\[0\].autoRepair: got True; allowed: autoRepair only"):
        parse_settings(config, stack="gb200-x72")


def test_prometheus_stack_is_off_by_default_and_read_with_its_release_settings() -> None:
    assert parse_settings(stack_config("gb200-x72"), stack="gb200-x72").kubernetes.prometheus_stack_enabled is False
    config = copy.deepcopy(stack_config("gb200-x72"))
    config.setdefault("ultraserver-eks:kubernetes", {})["prometheusStack"] = {"enabled": True, "timeoutSeconds": 1200}
    kubernetes = parse_settings(config, stack="gb200-x72").kubernetes
    assert kubernetes.prometheus_stack_enabled is True and kubernetes.prometheus_stack.timeout_seconds == 1200


def test_health_settings_defaults_and_bad_schedule() -> None:
    health = parse_settings(stack_config("gb200-x72"), stack="gb200-x72").health
    assert (health.node_monitoring_agent, health.drift_check_enabled, health.drift_check_schedule) == (
        True,
        True,
        "*/30 * * * *",
    )
    (problem,) = problems_for("gb200-x72", "health", {"driftCheck": {"schedule": "hourly"}})
    assert problem.startswith("ultraserver-eks:health.driftCheck.schedule: got 'hourly'")


def test_imex_check_nodes_are_compared_with_one_ultraserver_of_a_fleet() -> None:
    def shrink_fleet(groups: list[dict[str, Any]]) -> None:
        groups[1]["desiredSize"] = 16  # 8 UltraServers, 2 nodes each on average

    problems = problems_for("gb200-multi", "gpuNodeGroups", shrink_fleet)
    assert problems == [
        "ultraserver-eks:imexCheck.nodes: got 4; allowed: at most the 2 nodes of one UltraServer of group fleet; "
        'fix: lower nodes, use nodes: "all", or disable the check'
    ]


@pytest.mark.parametrize("instance_type", ["p6e-gb200.36xlarge", "g5g.xlarge", "gr6.4xlarge", "trn2.48xlarge"])
def test_an_accelerated_instance_type_for_the_system_nodes_is_refused_with_the_fix(instance_type: str) -> None:
    """A GPU type was caught only by the gb200-ami-variant policy, whose name does not say so."""
    problems = problems_for("gb200-x72", "systemNodeGroup", lambda g: g.update(instanceType=instance_type))
    assert problems == [
        f"ultraserver-eks:systemNodeGroup.instanceType: got {instance_type!r}; allowed: a CPU instance type: system "
        "nodes run the controllers, GPU jobs run on gpuNodeGroups; fix: set instanceType: m7g.xlarge (the default), "
        "or another Graviton CPU type"
    ]


@pytest.mark.parametrize(
    ("role", "key", "allowed"),
    [
        ({"sessionName": "s" * 65}, "sessionName", "2 to 64 of letters, digits and _+=,.@- (STS AssumeRole"),
        ({"sessionName": "deploy bot"}, "sessionName", "2 to 64 of letters"),
        ({"sessionName": "d"}, "sessionName", "2 to 64 of letters"),
        ({"externalId": "x"}, "externalId", "2 to 1224 of letters, digits and _+=,.@:/- (STS AssumeRole ExternalId)"),
    ],
)
def test_assume_role_values_sts_refuses_are_refused(role: dict[str, str], key: str, allowed: str) -> None:
    chain = [{"roleArn": "arn:aws:iam::111122223333:role/Deployer", **role}]
    problems = problems_for("gb200-x72", "aws:assumeRoles", chain)
    assert len(problems) == 1 and problems[0].startswith(f"aws:assumeRoles[0].{key}: got ")
    assert f"allowed: {allowed}" in problems[0]
    fine = [{"roleArn": "arn:aws:iam::111122223333:role/Deployer", "sessionName": "ci@build-7", "externalId": "a:b/c"}]
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["aws:assumeRoles"] = fine
    parse_settings(config, stack="gb200-x72")


@pytest.mark.parametrize(
    ("tags", "allowed"),
    [({"": "x"}, "keys of 1 character or more"), ({"team": "aws:ml"}, "values without the reserved aws: prefix")],
)
def test_tags_ec2_refuses_are_refused(tags: dict[str, str], allowed: str) -> None:
    problems = problems_for("gb200-x72", "cluster", lambda c: c.update(tags=tags))
    assert len(problems) == 1 and f"allowed: {allowed}" in problems[0], problems
