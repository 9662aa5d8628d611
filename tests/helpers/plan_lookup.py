"""Finding one resource in a recorded plan."""

from __future__ import annotations

from ultraserver.offline import Plan, PlanResource
from ultraserver.offline.placeholders import resource_outputs


def one(plan: Plan, type_: str, name_part: str = "", exact: bool = False) -> PlanResource:
    """The single resource of `type_` whose name contains `name_part` (is `name_part` when `exact`)."""
    found = [r for r in plan.of_type(type_) if (r.name == name_part if exact else name_part in r.name)]
    assert len(found) == 1, f"{len(found)} {type_} resources match {name_part!r}: {[r.name for r in found]}"
    return found[0]


def offline_arn(resource: PlanResource, region: str = "us-east-1") -> str:
    """The ARN the offline engine gives a recorded resource (a placeholder made from its resource name)."""
    return str(resource_outputs(resource.type, resource.name, resource.inputs, region)["arn"])
