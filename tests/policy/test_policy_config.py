"""Policy config: enforcement overrides, options, and clear errors for bad entries."""

from __future__ import annotations

import pytest
from helpers.policy_fixtures import DELETE, good_stack, patch
from ultraserver.policy import RULES, evaluate, resolve_config
from ultraserver.problems import ConfigError

BROKEN = patch(good_stack(), "LaunchTemplate", "gpu", {"metadataOptions": DELETE})


def test_defaults_when_unconfigured() -> None:
    """Every rule gets its own default level and options."""
    settings = resolve_config(None)
    assert {name: s.level for name, s in settings.items()} == {r.name: r.level for r in RULES}
    assert settings["eks-managed-node-group-quota"].options == {"quota": 30}


def test_level_as_string_or_object() -> None:
    """Both Pulumi config shapes set the level: "advisory" and {"enforcementLevel": "advisory"}."""
    for entry in ("advisory", {"enforcementLevel": "advisory"}):
        [violation] = evaluate(BROKEN, {"launch-template-imdsv2": entry})
        assert violation.level == "advisory"


def test_disabled_rule_reports_nothing() -> None:
    """A disabled rule is skipped."""
    assert evaluate(BROKEN, {"launch-template-imdsv2": "disabled"}) == []


def test_all_sets_every_level_and_rules_override_it() -> None:
    """ "all" sets the pack-wide level; a rule's own entry wins."""
    settings = resolve_config({"all": "advisory", "eks-kubernetes-version": "mandatory"})
    assert settings["launch-template-imdsv2"].level == "advisory"
    assert settings["eks-kubernetes-version"].level == "mandatory"


def test_options_keep_defaults_they_do_not_name() -> None:
    """An option overrides its default; the level key is not an option."""
    settings = resolve_config({"gb200-network-card-range": {"enforcementLevel": "advisory", "networkCards": 9}})
    assert settings["gb200-network-card-range"].options == {"networkCards": 9}


def test_every_bad_entry_is_named_at_once() -> None:
    """Unknown rules, bad levels, unknown options and wrong types all come back in one ConfigError."""
    with pytest.raises(ConfigError) as caught:
        resolve_config(
            {
                "no-such-rule": "advisory",
                "eks-kubernetes-version": {"enforcementLevel": "warn", "minVersion": 1.33},
                "eks-managed-node-group-quota": {"quota": True, "limit": 3},
            }
        )
    problems = [str(p) for p in caught.value.items]
    assert len(problems) == 5
    assert "policy config no-such-rule: got 'no-such-rule'; allowed: a rule: " in problems[0]
    assert (
        "policy config eks-kubernetes-version.enforcementLevel: got 'warn'; allowed: one of mandatory, advisory, "
        "disabled; fix: use one of those"
    ) in problems
    assert "policy config eks-kubernetes-version.minVersion: got 1.33; allowed: a JSON string" in str(caught.value)
    assert "policy config eks-managed-node-group-quota.quota: got True; allowed: a JSON integer" in str(caught.value)
    assert (
        "policy config eks-managed-node-group-quota.limit: got 3; allowed: an option of the rule: quota; fix: remove it"
    ) in problems
