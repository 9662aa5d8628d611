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
from ultraserver.problems import ConfigError

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


def _problems(rule: Rule, entry: Any) -> list[str]:
    """What is wrong with one rule's config entry."""
    key = f"policy config {rule.name!r}"
    level = entry.get(ENFORCEMENT_LEVEL) if isinstance(entry, Mapping) else entry
    problems = []
    if level is not None and level not in LEVELS:
        problems.append(f"{key}: enforcementLevel {level!r} is not one of {', '.join(LEVELS)}; use one of those.")
    if not isinstance(entry, (Mapping, str)):
        problems.append(
            f'{key}: {entry!r} must be a level string or an object; use e.g. {{"enforcementLevel": "advisory"}}.'
        )
        return problems
    for option, value in entry.items() if isinstance(entry, Mapping) else []:
        if option == ENFORCEMENT_LEVEL:
            continue
        schema = rule.config_schema.get(option)
        if schema is None:
            known = ", ".join(sorted(rule.config_schema)) or "none"
            problems.append(f"{key}: unknown option {option!r}; options: {known}.")
            continue
        want = JSON_TYPES.get(str(schema.get("type")), object)
        if not isinstance(value, want) or (isinstance(value, bool) and schema.get("type") != "boolean"):
            problems.append(f"{key}: option {option!r} is {value!r}; it must be a JSON {schema.get('type')}.")
    return problems


def resolve_config(config: Mapping[str, Any] | None, rules: Sequence[Rule] = RULES) -> dict[str, RuleSettings]:
    """Each rule's level and options from a policy config dict; ConfigError names every bad entry."""
    config = dict(config or {})
    by_name = {rule.name: rule for rule in rules}
    problems = [
        f"policy config {name!r}: no such rule; rules: {', '.join(sorted(by_name))}."
        for name in config
        if name not in by_name and name != ALL
    ]
    default_level = config.get(ALL)
    if default_level is not None and default_level not in LEVELS:
        problems.append(f"policy config 'all': {default_level!r} is not one of {', '.join(LEVELS)}.")
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
                        Violation(rule.name, level, resource.urn, message)
                        for message in rule.check_resource(resource.type, resource.inputs, options)
                    ]
        elif rule.check_stack is not None:
            out += [Violation(rule.name, level, urn, message) for urn, message in rule.check_stack(resources, options)]
    return out
