"""Adapts the pure rules to pulumi-policy objects; policies/__main__.py hands these to PolicyPack."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from ultraserver.policy.engine import RULES, options_for
from ultraserver.policy.model import UNKNOWN, PlanResource, Rule, Violation

PACK_NAME = "ultraserver-gb200"


def plain(value: Any) -> Any:
    """Props as plain dicts and lists, with values unknown during preview replaced by UNKNOWN."""
    if isinstance(value, Mapping):
        return {key: _item(value, key) for key in value}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [_item(value, i) for i in range(len(value))]
    return value


def _item(container: Any, key: Any) -> Any:
    """One element; pulumi-policy's proxies raise on unknown values instead of returning them."""
    try:
        return plain(container[key])
    except UnknownValueError:
        return UNKNOWN


def to_plan_resource(resource: PolicyResource) -> PlanResource:
    """A stack policy's resource as the PlanResource the rules read."""
    parent = resource.parent.urn if resource.parent is not None else resource.opts.parent
    return PlanResource(
        urn=resource.urn,
        type=resource.resource_type,
        name=resource.name,
        parent=parent or "",
        inputs=plain(resource.props),
        dependencies=[d.urn for d in resource.dependencies],
        property_dependencies={k: [d.urn for d in v] for k, v in resource.property_dependencies.items()},
    )


def _schema(rule: Rule) -> PolicyConfigSchema | None:
    """The rule's options as a pulumi-policy config schema, defaults included."""
    if not rule.config_schema:
        return None
    properties = {
        name: {**spec, **({"default": rule.defaults[name]} if name in rule.defaults else {})}
        for name, spec in rule.config_schema.items()
    }
    return PolicyConfigSchema(properties=properties)


def _validate_resource(rule: Rule) -> Any:
    """A ResourceValidation that reports each Problem of the rule's resource check."""

    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        if rule.check_resource is None or args.resource_type not in rule.resource_types:
            return
        for problem in rule.check_resource(args.resource_type, plain(args.props), options_for(rule, args.get_config())):
            report(Violation(rule.name, rule.level, args.urn, problem).message, args.urn)

    return validate


def _validate_stack(rule: Rule) -> Any:
    """A StackValidation that reports each Problem of the rule's stack check at the URN it names."""

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        if rule.check_stack is None:
            return
        resources = [to_plan_resource(r) for r in args.resources]
        for problem in rule.check_stack(resources, options_for(rule, args.get_config())):
            report(Violation(rule.name, rule.level, problem.key, problem).message, problem.key or None)

    return validate


def to_pulumi_policy(rule: Rule) -> Policy:
    """One rule as a ResourceValidationPolicy or StackValidationPolicy."""
    common: dict[str, Any] = {
        "name": rule.name,
        "description": rule.description,
        "enforcement_level": EnforcementLevel(rule.level),
        "config_schema": _schema(rule),
        "remediation_steps": rule.fix,
    }
    if rule.check_resource is not None:
        return ResourceValidationPolicy(validate=_validate_resource(rule), **common)
    return StackValidationPolicy(validate=_validate_stack(rule), **common)


def to_pulumi_policies(rules: Sequence[Rule] = RULES) -> list[Policy]:
    """Every rule as a pulumi-policy policy, in rule order."""
    return [to_pulumi_policy(rule) for rule in rules]
