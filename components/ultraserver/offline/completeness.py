"""What the real engine would refuse or silently lose in a recorded plan.

- A provider resource without a required argument of its SDK Args class: the provider refuses it at deploy time
  ("Missing required property"), so the plan refuses it first.
- An input the program declared as an Output that resolved to None: Pulumi drops it, and the dependency edge
  with it (pulumi/runtime/rpc.py ``serialize_properties``, pulumi 3.272.0), so the resource may be created before
  what it reads.
"""

from __future__ import annotations

from ultraserver.offline import sdk_schema
from ultraserver.offline.engine import Plan
from ultraserver.problems import Described, Problem


def missing_arguments(plan: Plan) -> list[Problem]:
    """One Problem per required argument absent from a provider resource's inputs, keyed by the resource's URN."""
    return [
        Problem(
            r.urn,
            Described(f"no {name!r}"),
            f"every required argument of {r.type} (its SDK Args class has no default for {name!r})",
            f"pass {name}; if it is read from another resource, that value resolved to None (see its input's line)",
        )
        for r in plan.resources
        if r.custom
        for name in sdk_schema.required_arguments(r.type)
        if r.inputs.get(name) is None
    ]


def unresolved_inputs(plan: Plan) -> list[Problem]:
    """One Problem per input declared as another resource's Output that resolved to None."""
    return [
        Problem(
            r.urn,
            Described(f"input {path} of {r.type} resolved to None"),
            "a value: Pulumi drops an input that resolves to None, and its dependency edge with it",
            "give the output it reads a value the offline engine knows (offline/placeholders.py), or pass none",
        )
        for r in plan.resources
        for path in r.unresolved_inputs
    ]


def completeness_problems(plan: Plan) -> list[Problem]:
    """Everything above, for the plan command to fail on."""
    return missing_arguments(plan) + unresolved_inputs(plan)
