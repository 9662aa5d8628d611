"""What the real engine would refuse or silently lose in a recorded plan (issue 23 §8).

- A provider resource without a required argument of its SDK Args class: the provider refuses it at deploy time
  ("Missing required property"), so the plan refuses it first.
- An input the program declared as an Output that resolved to None: Pulumi drops it, and the dependency edge
  with it (pulumi/runtime/rpc.py ``serialize_properties``), so the resource may be created before what it reads.
"""

from __future__ import annotations

from ultraserver.offline import sdk_schema
from ultraserver.offline.engine import Plan


def missing_arguments(plan: Plan) -> list[str]:
    """One line per required argument absent from a provider resource's inputs."""
    return [
        f"{plan.stack}: {r.urn} ({r.type}) has no {name!r}, a required argument of {r.type}"
        for r in plan.resources
        if r.custom
        for name in sdk_schema.required_arguments(r.type)
        if r.inputs.get(name) is None
    ]


def unresolved_inputs(plan: Plan) -> list[str]:
    """One line per input declared as another resource's Output that resolved to None."""
    return [
        f"{plan.stack}: {r.urn} ({r.type}) input {path} was an Output that resolved to None, so Pulumi drops it "
        "and its dependency edge"
        for r in plan.resources
        for path in r.unresolved_inputs
    ]


def gaps(plan: Plan) -> list[str]:
    """Everything above, for the plan command to fail on."""
    return missing_arguments(plan) + unresolved_inputs(plan)
