"""Names AWS and Kubernetes check byte by byte: a trailing newline or a digit of another script is refused at plan
time, as `pulumi up` would refuse it."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.facts.kubernetes import cron
from ultraserver.problems import ConfigError

ARABIC_INDIC = "\u0661\u0662"  # Arabic-Indic one and two: str.isdigit() and \d accept them, AWS does not


def refused(change: Any) -> list[str]:
    config = copy.deepcopy(stack_config("gb200-x72"))
    change(config)
    with pytest.raises(ConfigError) as info:
        parse_settings(config, stack="gb200-x72")
    return [str(p) for p in info.value.items]


def _label(name: str, value: str) -> Any:
    return lambda c: c["ultraserver-eks:gpuNodeGroups"][0].__setitem__("labels", {name: value})


def _cluster(key: str, value: Any) -> Any:
    return lambda c: c["ultraserver-eks:cluster"].__setitem__(key, value)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (_label("team", "ml\n"), "gpuNodeGroups[0].labels"),
        (_label("team\n", "ml"), "gpuNodeGroups[0].labels"),
        (_label("example.com\n/team", "ml"), "gpuNodeGroups[0].labels"),
        (_cluster("adminPrincipalArns", [f"arn:aws:iam::1111222233{ARABIC_INDIC}:role/Admin"]), "adminPrincipalArns"),
        (_cluster("adminPrincipalArns", ["arn:aws:iam::111122223333:role/Pl\u00e4tform"]), "adminPrincipalArns"),
        (_cluster("adminPrincipalArns", ["arn:aws:iam::111122223333:role/Admin\n"]), "adminPrincipalArns"),
        (_cluster("kubernetesVersion", f"1.3{ARABIC_INDIC[0]}"), "kubernetesVersion"),
        (lambda c: c["ultraserver-eks:systemNodeGroup"].__setitem__("instanceType", "m\u0667g.xlarge"), "instanceType"),
        (lambda c: c.__setitem__("aws:region", "us-east-\u0661"), "aws:region"),
        (
            lambda c: c["ultraserver-eks:network"].__setitem__("availabilityZones", ["us-east-1a\n", "us-east-1b"]),
            "availabilityZones",
        ),
    ],
)
def test_trailing_newlines_and_other_scripts_digits_are_refused(change: Any, key: str) -> None:
    assert any(key.split(".")[-1] in line or key in line for line in refused(change)), key


@pytest.mark.parametrize(
    "schedule",
    [
        "*/0 * * * *",
        "61 * * * *",
        "* 24 * * *",
        "* * 0 * *",
        "* * * 13 *",
        "* * * * 7",
        "5-1 * * * *",
        "1/2/3 * * * *",
        "x * * * *",
        "\u0661 * * * *",
    ],
)
def test_drift_check_schedule_out_of_range_is_refused(schedule: str) -> None:
    lines = refused(lambda c: c.__setitem__("ultraserver-eks:health", {"driftCheck": {"schedule": schedule}}))
    assert any("health.driftCheck.schedule" in line and "five cron fields" in line for line in lines), lines


@pytest.mark.parametrize(
    "schedule", ["*/30 * * * *", "0 0 1 1 *", "0-59/15 0,12 1-31 jan-dec sun-sat", "? * * * ?", "5/10 23 31 12 6"]
)
def test_valid_cron_schedules_pass(schedule: str) -> None:
    assert cron.schedule_fault(schedule) is None
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:health"] = {"driftCheck": {"schedule": schedule}}
    assert parse_settings(config, stack="gb200-x72").health.drift_check_schedule == schedule


def test_cron_problem_names_the_field_and_its_part() -> None:
    assert cron.schedule_fault("61 * * * *") == "the minute field's '61' is outside 0-59"
    assert cron.schedule_fault("*/0 * * * *") == "the minute field's '*/0' is a step that is not 1 or more"
