"""What users read for a few representative bad inputs, now that every check hands over Problems (issue 22 §2).

Each test pins the whole message. The text before this change is quoted in each docstring so the comparison can be
read: the key, value, allowed and fix are the same facts, now in fields every report renders the same way
(``format_problems``), with the key a program or stack file actually wrote.
"""

from __future__ import annotations

import copy
from datetime import datetime, timezone

import pytest
from helpers.policy_fixtures import DELETE, good_stack, patch
from helpers.stacks import stack_config
from ultraserver.config.load import parse_settings
from ultraserver.policy import evaluate
from ultraserver.policy.report import format_violations
from ultraserver.problems import ERROR, ConfigError, format_problems
from ultraserver.resources.cluster import ClusterCoreData
from ultraserver.resources.gpu_node_group_args import GpuNodeGroupArgs
from ultraserver.verify.fabric import LauncherResult, judge_nvbandwidth
from ultraserver.verify.report import format_verdicts


def test_a_settings_key_is_named_as_the_stack_file_writes_it() -> None:
    """Before: the same line; the CLI printed it as '  - <line>'. Now the CLI renders the fields in columns."""
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:gpuNodeGroups"][0]["availabilityZone"] = "eu-west-1a"
    with pytest.raises(ConfigError) as caught:
        parse_settings(config)
    (problem,) = caught.value.items
    assert str(problem) == (
        "ultraserver-eks:gpuNodeGroups[0].availabilityZone: got 'eu-west-1a'; allowed: a zone of the stack's region "
        "us-east-1; fix: use the zone of the capacity reservation"
    )
    assert format_problems(caught.value.items, {ERROR: "-"}).splitlines() == [
        "-  ultraserver-eks:gpuNodeGroups[0].availabilityZone",
        "     eu-west-1a",
        "     allowed: a zone of the stack's region us-east-1",
        "     fix: use the zone of the capacity reservation",
    ]


def test_a_component_argument_is_named_as_the_python_argument() -> None:
    """Before: 'GpuNodeGroupArgs: capacity_reservation_id: 'cr-123' is not a Capacity Reservation ID; expected 'cr-'
    followed by 17 lowercase hex digits (e.g. cr-0123456789abcdef0). Copy it from describe-capacity-blocks
    (CapacityReservationIds) or the EC2 console.' (a stack-key message rewritten by a regex)."""
    cluster = ClusterCoreData(
        "gb200", "https://x.eks.amazonaws.com", "Y2VydA==", "10.100.0.0/16", "sg-0ccccccccccccccc1"
    )
    with pytest.raises(ConfigError) as caught:
        GpuNodeGroupArgs(
            cluster=cluster,
            subnet_ids=["subnet-0aaaaaaaaaaaaaaaa"],
            capacity_reservation_id="cr-123",
            now=datetime(2026, 3, 1, tzinfo=timezone.utc),
        )
    (problem,) = caught.value.items
    assert (problem.key, problem.value) == ("GpuNodeGroupArgs.capacity_reservation_id", "cr-123")
    assert str(problem) == (
        "GpuNodeGroupArgs.capacity_reservation_id: got 'cr-123'; allowed: a Capacity Reservation ID: 'cr-' followed "
        "by 17 lowercase hex digits (e.g. cr-0123456789abcdef0); fix: copy it from describe-capacity-blocks "
        "(CapacityReservationIds) or the EC2 console"
    )


def test_a_policy_violation_names_rule_resource_and_input() -> None:
    """Before: 'MANDATORY  [launch-template-imdsv2] <urn>' then 'metadataOptions.httpTokens is None, so IMDSv1 is
    allowed. Set metadata_options http_tokens="required" (and http_put_response_hop_limit=2 for pods that need
    IMDS).' as one value."""
    stack = patch(good_stack(), "LaunchTemplate", "gpu", {"metadataOptions": DELETE})
    (found,) = [v for v in evaluate(stack) if v.policy == "launch-template-imdsv2"]
    assert found.message == (
        "metadataOptions.httpTokens: got unset; allowed: required (anything else allows IMDSv1); fix: set "
        'metadata_options http_tokens="required" (and http_put_response_hop_limit=2 for pods that need IMDS)'
    )
    urn = "urn:pulumi:dev::ultraserver::aws:ec2/launchTemplate:LaunchTemplate::gpu"
    assert format_violations([found], 30).splitlines() == [
        "Policy violations: 1 mandatory, 0 advisory (30 rules checked):",
        f"MANDATORY  [launch-template-imdsv2] {urn} metadataOptions.httpTokens",
        "             unset",
        "             allowed: required (anything else allows IMDSv1)",
        '             fix: set metadata_options http_tokens="required" (and http_put_response_hop_limit=2 for pods '
        "that need IMDS)",
    ]


def test_a_verify_failure_reads_the_parser_error_fields_not_its_text() -> None:
    """Before: '  - MPIJob nvbandwidth-nvl72: got no bandwidth matrix in the nvbandwidth output (expected a line like
    ...); expected a bandwidth matrix' (the parser's message cut at '; the log ends with')."""
    log = "ERROR: no IMEX channel available\nmpirun exited\n"
    verdict = judge_nvbandwidth(LauncherResult(log=log, phase="Failed"), "imex", "nvbandwidth-nvl72", "nvl72", 700, 4)
    (problem,) = verdict.problems
    assert (problem.key, problem.value) == ("MPIJob nvbandwidth-nvl72", "nvbandwidth output: no bandwidth matrix")
    assert format_verdicts([verdict]).splitlines()[3:9] == [
        "nvl72 nvlink FAILED:",
        "  -  MPIJob nvbandwidth-nvl72  nvbandwidth output: no bandwidth matrix",
        "                               allowed: a bandwidth matrix (a line like 'memcpy CE GPU(row) -> GPU(column) "
        "bandwidth (GB/s)')",
        "                               fix: read the launcher log tail below; common causes are ssh between launcher "
        "and workers and missing IMEX",
        "  log tail:",
        "    | ERROR: no IMEX channel available",
    ]
