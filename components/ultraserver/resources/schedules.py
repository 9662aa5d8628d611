"""The Auto Scaling scheduled actions of a GPU node group: up at each Capacity Block's start, to 0 before its end.

Managed node groups get them too, on the Auto Scaling group EKS made for the group (its name is an output of the node
group), which is how EKS's own capacity-block support scales: the group is an Auto Scaling group underneath.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from ultraserver.facts.capacity.capacity_blocks import ACTION_PREFIX, CapacityBlock, ScheduledAction, action_stem


def declare_schedules(
    name: str,
    actions: Sequence[ScheduledAction],
    current: CapacityBlock,
    group_name: pulumi.Input[str],
    child: pulumi.ResourceOptions,
) -> list[aws.autoscaling.Schedule]:
    """One aws.autoscaling.Schedule per action, on the group named ``group_name``.

    Auto Scaling refuses two actions of a group at one time, so a replaced action is deleted before its successor is
    made; and the current block's actions take over the undated ones of a single reservationWindow (the names before
    the group moved to capacityBlocks), so that move replaces them instead of adding a second action at their time.
    """
    stem = action_stem(current.window.start) if current.window else None
    legacy = {f"{stem}-start": f"{ACTION_PREFIX}-start", f"{stem}-end": f"{ACTION_PREFIX}-end"} if stem else {}
    schedules = []
    for action in actions:
        before = legacy.get(action.name)
        schedules.append(
            aws.autoscaling.Schedule(
                f"{name}-{action.name}",
                autoscaling_group_name=group_name,
                scheduled_action_name=action.name,
                start_time=action.start_time_iso,
                min_size=action.min_size,
                max_size=action.max_size,
                desired_capacity=action.desired_capacity,
                opts=pulumi.ResourceOptions.merge(
                    child,
                    pulumi.ResourceOptions(
                        delete_before_replace=True, aliases=[pulumi.Alias(name=f"{name}-{before}")] if before else None
                    ),
                ),
            )
        )
    return schedules
