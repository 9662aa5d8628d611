"""The offline plan's policy report and JSON entries."""

from __future__ import annotations

from pathlib import Path

from helpers.cli import run_main
from helpers.policy_fixtures import DELETE, good_stack, patch
from ultraserver.policy import Violation, evaluate
from ultraserver.policy.engine import RULES
from ultraserver.policy.report import blocks, format_violations
from ultraserver.problems import ERROR, WARNING, Problem

IMDS = Problem("metadataOptions.httpTokens", "optional", "required", 'set http_tokens="required"')
MANDATORY = Violation("launch-template-imdsv2", "mandatory", "urn:a", IMDS)
ADVISORY = Violation(
    "eks-public-endpoint-cidrs", "advisory", "", Problem("", "open endpoint.\nList your networks.", "", "")
)


def test_mandatory_first_with_stack_marker() -> None:
    """A count line, then mandatory before advisory, stack-level violations marked, multi-line values indented, a key
    too long for the column on its own line: the report is format_problems, allowed and fix under each value."""
    text = format_violations([ADVISORY, MANDATORY], rule_count=29)
    assert text.splitlines() == [
        "Policy violations: 1 mandatory, 1 advisory (29 rules checked):",
        "MANDATORY  [launch-template-imdsv2] urn:a metadataOptions.httpTokens",
        "                                                optional",
        "                                                allowed: required",
        '                                                fix: set http_tokens="required"',
        "ADVISORY   [eks-public-endpoint-cidrs] (stack)  open endpoint.",
        "                                                List your networks.",
    ]


def test_violations_are_problems() -> None:
    """A mandatory violation is an error, an advisory one a warning; the key names the rule, resource and input."""
    assert MANDATORY.to_problem() == Problem(
        "[launch-template-imdsv2] urn:a metadataOptions.httpTokens",
        "optional",
        "required",
        'set http_tokens="required"',
        ERROR,
    )
    assert ADVISORY.to_problem().level == WARNING
    assert ADVISORY.to_problem().key == "[eks-public-endpoint-cidrs] (stack)"


def test_a_stack_check_keyed_by_the_urn_does_not_repeat_it() -> None:
    found = Violation("rule", "mandatory", "urn:b", Problem("urn:b", 3, "at most 2", "lower it"))
    assert found.message == "got 3; allowed: at most 2; fix: lower it"
    assert found.to_problem().key == "[rule] urn:b"


def test_no_violations_is_one_line() -> None:
    """A clean stack reports the rule count."""
    assert format_violations([], rule_count=29) == "Policies: 29 rules checked, no violations."


def test_only_mandatory_blocks() -> None:
    """Advisory findings alone do not fail the plan; a mandatory one does, even when downgraded elsewhere."""
    stack = patch(good_stack(), "LaunchTemplate", "gpu", {"metadataOptions": DELETE})
    assert blocks(evaluate(stack))
    assert not blocks(evaluate(stack, {"launch-template-imdsv2": "advisory"}))
    assert not blocks([ADVISORY])


def test_json_entry_shape() -> None:
    """The plan JSON's policies entries carry exactly policy, level, urn and message."""
    assert MANDATORY.to_json() == {
        "policy": "launch-template-imdsv2",
        "level": "mandatory",
        "urn": "urn:a",
        "message": "metadataOptions.httpTokens: got 'optional'; allowed: required; fix: set http_tokens=\"required\"",
    }


def test_a_config_that_disables_every_rule_does_not_claim_a_check(tmp_path: Path) -> None:
    config = tmp_path / "policy.json"
    config.write_text('{"all": "disabled"}')
    result = run_main("plan", "--stack", "gb200-x72", "--policy-config", str(config))
    assert result.code == 0, result.stderr
    assert f"Policies: no rule ran: all {len(RULES)} are disabled by the policy config." in result.stdout
    assert "rules checked" not in result.stdout
    config.write_text('{"all": "disabled", "launch-template-imdsv2": "mandatory"}')
    one = run_main("plan", "--stack", "gb200-x72", "--policy-config", str(config))
    assert f"Policies: 1 rule checked ({len(RULES) - 1} disabled by the policy config), no violations." in one.stdout
