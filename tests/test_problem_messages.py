"""What users read for a few representative bad inputs: each test pins the whole message, whose key, value,
allowed and fix every report renders the same way (``format_problems``), with the key a program or stack file
actually wrote.
"""

from __future__ import annotations

import copy

import pytest
from helpers.policy_fixtures import DELETE, good_stack, patch
from helpers.stacks import stack_config
from pydantic import ValidationError
from ultraserver.config.errors import program_problems
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.load import parse_settings
from ultraserver.policy import evaluate
from ultraserver.policy.report import format_violations
from ultraserver.problems import ERROR, ConfigError, format_problems
from ultraserver.verify.fabric import LauncherResult, judge_nvbandwidth
from ultraserver.verify.report import format_verdicts


def test_a_settings_key_is_named_as_the_stack_file_writes_it() -> None:
    """The CLI renders the fields in columns."""
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


def test_a_programs_setting_is_named_as_the_program_wrote_it() -> None:
    with pytest.raises(ValidationError) as caught:
        GpuNodeGroupSettings(name="gpu", availability_zone="us-east-1-dfw-2a", capacity_reservation_ids=("cr-123",))
    (problem,) = program_problems(caught.value)
    assert str(problem) == (
        "GpuNodeGroupSettings.capacity_reservation_ids[0]: got 'cr-123'; allowed: 'cr-' and 17 lowercase hex digits "
        "(e.g. cr-0123456789abcdef0); fix: correct capacity_reservation_ids"
    )


def test_a_policy_violation_names_rule_resource_and_input() -> None:
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
