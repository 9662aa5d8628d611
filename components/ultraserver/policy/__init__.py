"""CrossGuard rules for GB200 EKS stacks, as pure checks shared by the policy pack and the offline plan."""

from ultraserver.policy.engine import RULES, evaluate, resolve_config
from ultraserver.policy.model import ADVISORY, DISABLED, MANDATORY, UNKNOWN, PlanResource, Rule, Violation

__all__ = [
    "ADVISORY",
    "DISABLED",
    "MANDATORY",
    "RULES",
    "UNKNOWN",
    "PlanResource",
    "Rule",
    "Violation",
    "evaluate",
    "resolve_config",
]
