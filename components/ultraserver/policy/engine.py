"""Runs the rules over recorded resources, with enforcement levels and options from the pack's config."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ultraserver.policy import (
    charts,
    cluster,
    device_mode,
    helm_waits,
    iam,
    kueue,
    launch_templates,
    node_groups,
    workloads,
)
from ultraserver.policy.model import DISABLED, LEVELS, PlanResource, Rule, Violation
from ultraserver.problems import ConfigError, Problem

RULES: tuple[Rule, ...] = (
    *cluster.RULES,
    *node_groups.RULES,
    *launch_templates.RULES,
    *charts.RULES,
    *helm_waits.RULES,
    *iam.RULES,
    *workloads.RULES,
    *device_mode.RULES,
    *kueue.RULES,
)
ALL = "all"
"""Config key that sets the level of every rule at once (as in Pulumi's policy config)."""
ENFORCEMENT_LEVEL = "enforcementLevel"
JSON_TYPES: Mapping[str, type | tuple[type, ...]] = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
}


@dataclass(frozen=True)
class RuleSettings:
    """A rule's effective level and options."""

    level: str
    options: Mapping[str, Any]


def options_for(rule: Rule, entry: Any) -> dict[str, Any]:
    """The rule's defaults overlaid with one config entry (a level string or a dict); the level key is dropped."""
    options = dict(rule.defaults)
    if isinstance(entry, Mapping):
        options.update({k: v for k, v in entry.items() if k != ENFORCEMENT_LEVEL})
    return options


def _problems(rule: Rule, entry: Any) -> list[Problem]:
    """What is wrong with one rule's config entry, keyed by the rule's entry in the policy config."""
    key = f"policy config {rule.name}"
    level = entry.get(ENFORCEMENT_LEVEL) if isinstance(entry, Mapping) else entry
    problems = []
    if level is not None and level not in LEVELS:
        problems.append(Problem(f"{key}.{ENFORCEMENT_LEVEL}", level, "one of " + ", ".join(LEVELS), "use one of those"))
    if not isinstance(entry, (Mapping, str)):
        problems.append(Problem(key, entry, "a level string or an object", 'use e.g. {"enforcementLevel": "advisory"}'))
        return problems
    for option, value in entry.items() if isinstance(entry, Mapping) else []:
        if option == ENFORCEMENT_LEVEL:
            continue
        schema = rule.config_schema.get(option)
        if schema is None:
            known = ", ".join(sorted(rule.config_schema)) or "none"
            problems.append(Problem(f"{key}.{option}", value, f"an option of the rule: {known}", "remove it"))
            continue
        want = JSON_TYPES.get(str(schema.get("type")), object)
        if not isinstance(value, want) or (isinstance(value, bool) and schema.get("type") != "boolean"):
            problems.append(
                Problem(f"{key}.{option}", value, f"a JSON {schema.get('type')}", "correct the option's value")
            )
    return problems


def resolve_config(config: Mapping[str, Any] | None, rules: Sequence[Rule] = RULES) -> dict[str, RuleSettings]:
    """Each rule's level and options from a policy config dict; ConfigError names every bad entry."""
    config = dict(config or {})
    by_name = {rule.name: rule for rule in rules}
    problems = [
        Problem(f"policy config {name}", name, "a rule: " + ", ".join(sorted(by_name)), "name a rule of the pack")
        for name in config
        if name not in by_name and name != ALL
    ]
    default_level = config.get(ALL)
    if default_level is not None and default_level not in LEVELS:
        problems.append(
            Problem(f"policy config {ALL}", default_level, "one of " + ", ".join(LEVELS), "use one of those")
        )
    settings = {}
    for rule in rules:
        entry = config.get(rule.name)
        problems += _problems(rule, entry) if entry is not None else []
        level = entry.get(ENFORCEMENT_LEVEL) if isinstance(entry, Mapping) else entry
        settings[rule.name] = RuleSettings(
            level=str(level or default_level or rule.level), options=options_for(rule, entry)
        )
    if problems:
        raise ConfigError(problems)
    return settings


def evaluate(
    resources: Sequence[PlanResource], config: Mapping[str, Any] | None = None, rules: Sequence[Rule] = RULES
) -> list[Violation]:
    """Every violation of every enabled rule, in rule order then resource order."""
    settings = resolve_config(config, rules)
    out = []
    for rule in rules:
        level, options = settings[rule.name].level, settings[rule.name].options
        if level == DISABLED:
            continue
        if rule.check_resource is not None:
            for resource in resources:
                if resource.type in rule.resource_types:
                    out += [
                        Violation(rule.name, level, resource.urn, problem)
                        for problem in rule.check_resource(resource.type, resource.inputs, options)
                    ]
        elif rule.check_stack is not None:
            out += [Violation(rule.name, level, p.key, p) for p in rule.check_stack(resources, options)]
    return out


def disabled_count(config: Mapping[str, Any] | None, rules: Sequence[Rule] = RULES) -> int:
    """How many rules the policy config turns off (they report nothing, so the plan must not count them as checked)."""
    return sum(1 for settings in resolve_config(config, rules).values() if settings.level == DISABLED)
