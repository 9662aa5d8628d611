"""Capacity Blocks for UltraServers: reservation targets, group sizes and the reservation window.

EC2 reclaims an UltraServer block 60 minutes before its end (an instance block 30), so a group scales to 0 at least
``MIN_DRAIN_MINUTES`` before that reclaim (65 minutes before the end by default), and the in-cluster drain empties its
nodes in the 15 minutes before that: 20 paid minutes per block end go unused. EKS's own scale-down of a managed
group, 40 minutes before the end, comes 20 minutes after an UltraServer block's reclaim has begun and cannot be
relied on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from ultraserver.arguments import checked
from ultraserver.facts.hardware import ultraservers
from ultraserver.problems import ConfigError, Described, KeyName, Problem, under

# What EC2 does at a block's end, per kind of reservation. EC2 user guide, "Capacity Blocks for ML"
# (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-capacity-blocks.html, quoted 2026-11-27 from the checked
# reference file, aws-gb200-facts.md; the search corpus holds the page's opening only):
#   "You can use all the instances you reserved until 30 minutes (for instance types) or 60 minutes (for UltraServer
#   type) before the end time of the Capacity Block."
#   "With 30 minutes (for instance types) or 60 minutes (for UltraServer types) left in your Capacity Block
#   reservation, we begin terminating any instances that are running in the Capacity Block."
#   Considerations: "For P6e-GB200 UltraServer Capacity Blocks, you must terminate your instances at least 60 minutes
#   before the Capacity Block end time."
# Older pages still say 30 for every block (capacity-blocks-using: "Thirty minutes before the reservation expires, we
# begin to terminate"; EKS ml-node-groups: "EC2 begins shutting down instances 30 minutes before the reservation
# ends"): they predate UltraServer blocks and hold for instance blocks only.
ULTRASERVER, INSTANCE = "ultraserver", "instance"
RECLAIM_LEAD_MINUTES = {INSTANCE: 30, ULTRASERVER: 60}
"""Minutes before a block's end at which EC2 starts terminating its instances, per kind of reservation."""
# EKS user guide, ml-node-groups (awsdocs/amazon-eks-user-guide, "Manage compute for AI/ML workloads on Amazon EKS
# with node groups", read 2026-11-27): "EKS automatically creates a scheduled scaling policy named Amazon EKS Node
# Group Capacity Scaledown Before Reservation End to scale the node group down to 0 40 minutes before the reservation
# ends ... Don't edit or delete this scheduled action." On an UltraServer block that is 20 minutes after the reclaim
# began, so the toolkit's own scale-down (and drain) must come first.
EKS_MANAGED_SCALEDOWN_ACTION = "Amazon EKS Node Group Capacity Scaledown Before Reservation End"
EKS_MANAGED_SCALEDOWN_LEAD = timedelta(minutes=40)
# The end of a block, as late as is safe (an 11:30 UTC end shown; every margin counts back from EC2's reclaim):
#   10:30  reclaim: EC2 begins terminating (60 minutes before the end, above).
#   10:25  scale-down: the group's scheduled action sets it to 0 (``DEFAULT_DRAIN_MINUTES`` before the reclaim). EC2
#          Auto Scaling user guide, "Scheduled scaling", Considerations: a scheduled action may run up to two minutes
#          after its time; the instances then take "several minutes" to terminate (EC2 user guide,
#          capacity-blocks-launch). Their pods are gone by then, so an instance still shutting down at 10:30 loses
#          nothing; what EC2 does with one it finds terminating is not documented (UNVERIFIED).
#   10:20  evict-at: eviction within the PodDisruptionBudgets starts, after the checkpoint window (10 minutes,
#          ``incluster.drain.CHECKPOINT_GRACE_MINUTES``, a judgement: one checkpoint of a large model to fast storage).
#   10:10  cut-off: cordon, taint, Kueue hold, reclaim-at and evict-at on every pod, checkpoint request
#          (``DRAIN_NOTICE_MINUTES`` before the scale-down).
# Paid time thrown away per block end: cut-off to reclaim, 20 minutes (checkpoint window included; the issue's
# ceiling). EC2's expiration warning (10 minutes before the reclaim, or 40 minutes before the end by the monitoring
# page: aws-gb200-facts.md) comes after the cut-off with a correct window and starts the drain when the window is
# wrong.
MIN_DRAIN_MINUTES = 5
"""Least time between a group's scale-down and the reclaim: the scheduled action's lateness (up to 2 minutes) plus
the start of the instances' termination; the drain itself runs before the scale-down (``DRAIN_NOTICE_MINUTES``)."""
DEFAULT_DRAIN_MINUTES = 5
DRAIN_NOTICE_MINUTES = 15
"""How long before the scale-down the in-cluster drain cuts a block off (cordon, Kueue hold, reclaim and eviction
times on pods and Workloads, checkpoint request): the checkpoint window (10 minutes) and 5 minutes of evictions
within the budgets before what is left is deleted at the scale-down (``incluster/copied_facts.py`` holds a copy). A
judgement, not measured."""
DEFAULT_SCALE_DOWN_LEAD_MINUTES = RECLAIM_LEAD_MINUTES[ULTRASERVER] + DEFAULT_DRAIN_MINUTES
MIN_SCALE_DOWN_LEAD_MINUTES = RECLAIM_LEAD_MINUTES[ULTRASERVER] + MIN_DRAIN_MINUTES
MAX_SCALE_DOWN_LEAD_MINUTES = 1440
"""The longest lead a group's scale-down may take before its block's end (one day): a bound of the settings, not
of AWS."""
# A group moves to its next block this long after the scale-down, not at it: a scheduled action may run up to two
# minutes late (EC2 Auto Scaling guide, "Scheduled scaling", Considerations) and its instances then take minutes to
# terminate; a template switch before they are gone would roll nodes. Ten minutes is a judgement, not measured.
SWITCH_SETTLE_MINUTES = 10
NODE_JOIN_GRACE_MINUTES = 30
"""Minutes after a block starts before its nodes are expected Ready: the scheduled scale-up, instance launch and node
join (a judgement, not measured; EKS documents no figure), so checks on a schedule do not report a block's start."""

# EC2 user guide, "Find and purchase Capacity Blocks" (capacity-blocks-purchase, checked 2026-11-25): durations are
# "1-day increments up to 14 days, and in 7-day increments up to 182 days" and "All Capacity Blocks end at 11:30AM
# UTC"; "Extend Capacity Blocks" (capacity-blocks-extend): extensions reach "up to 182 days (26 weeks) total".
# Starts are not fixed: a block bought to start at once starts when bought (EC2 API reference,
# CapacityBlockOffering.CapacityBlockDurationHours: "if a Capacity Block starts at 04:55 and ends at 11:30, the
# hours field would be 6"), so only the end is checked.
BLOCK_END_UTC = (11, 30)
"""Hour and minute (UTC) at which every Capacity Block ends."""
MAX_BLOCK_DAYS = 182
"""Longest Capacity Block AWS sells, extensions included; a block that starts at once runs up to a day more (its
first, partial day before 11:30 UTC)."""

# How the checks below name their keys unless the caller says otherwise: as a stack file writes them.
_STACK_KEYS, _WINDOW = under(""), under("reservationWindow")


def instances_per_ultraserver(ultraserver_type: str, key: str = "ultraserverType") -> int:
    """Instances in one UltraServer of a type, or ConfigError naming ``key``."""
    if ultraserver_type not in ultraservers.NODES:
        raise ConfigError(
            Problem(key, ultraserver_type, "one of " + ", ".join(ultraservers.NODES), "use a known UltraServer type")
        )
    return ultraservers.NODES[ultraserver_type]


def full_size(ultraserver_type: str, ultraserver_count: int, name: KeyName = _STACK_KEYS) -> int:
    """Instances in ``ultraserver_count`` UltraServers of a type, or ConfigError (keys spelt by ``name``)."""
    if not isinstance(ultraserver_count, int) or isinstance(ultraserver_count, bool) or ultraserver_count < 1:
        raise ConfigError(
            Problem(name("ultraserverCount"), ultraserver_count, "a whole number of 1 or more", "give 1 or more")
        )
    return instances_per_ultraserver(ultraserver_type, name("ultraserverType")) * ultraserver_count


@checked()
@dataclass(frozen=True)
class ReservationWindow:
    """When a Capacity Block runs, and how long before its end to scale to 0."""

    start: datetime
    end: datetime
    scale_down_lead_minutes: int = DEFAULT_SCALE_DOWN_LEAD_MINUTES

    @property
    def scale_down_at(self) -> datetime:
        """When the group scales to 0 and its drain starts: the end minus the lead."""
        return self.end - timedelta(minutes=self.scale_down_lead_minutes)

    @property
    def reclaim_at(self) -> datetime:
        """When EC2 starts terminating the block's instances (every block this toolkit makes is an UltraServer's)."""
        return reclaim_at(self.end)


def reclaim_at(end: datetime, kind: str = ULTRASERVER) -> datetime:
    """When EC2 starts terminating the instances of a block of ``kind`` that ends at ``end``."""
    return end - timedelta(minutes=RECLAIM_LEAD_MINUTES[kind])


@checked()
@dataclass(frozen=True)
class CapacityBlock:
    """One Capacity Block run of a group: its reservations (one per UltraServer) and when it runs."""

    reservation_ids: tuple[str, ...]
    window: ReservationWindow | None

    @property
    def usable_end(self) -> datetime | None:
        """When the group scales to 0 for this block (end minus the lead); None without a window."""
        return None if self.window is None else self.window.scale_down_at

    @property
    def switch_at(self) -> datetime | None:
        """When the group may move on to the next block: the scale-down plus the settling time."""
        end = self.usable_end
        return None if end is None else end + timedelta(minutes=SWITCH_SETTLE_MINUTES)


FUTURE, ACTIVE, ENDED = "future", "active", "ended"


# What AWS does with a block once it has ended (checked 2026-11-25):
# - Launches: EC2 API reference (botocore 1.44.5, ec2 2016-11-15 service-2.json), CapacityReservation.EndDate: "When a
#   Capacity Reservation expires, the reserved capacity is released and you can no longer launch instances into it.";
#   EC2 user guide, capacity-reservations-launch: "You can only launch an instance into a Capacity Reservation that:
#   ... Is in the active state". So a group whose template names an expired block can never launch a node.
# - The launch template itself: EC2 user guide, launch-template-restrictions: "Launch template parameters are not fully
#   validated when you create the launch template. If you specify incorrect values or use unsupported parameter
#   combinations, instances will fail to launch using this launch template." Whether CreateLaunchTemplate, EKS
#   CreateNodegroup or CreateAutoScalingGroup refuses (or only warns, CreateLaunchTemplateResult.Warning) an expired
#   CapacityReservationTarget is not documented: UNVERIFIED, not tried against AWS.
# - Auto Scaling after the end: "When a Capacity Block expires ... Amazon EC2 terminates the instances running in it.
#   The Auto Scaling health checker detects the termination and attempts to launch a replacement instance" (EC2 Auto
#   Scaling user guide, capacity-reservation-create-asg-procedure, "Operational guidelines").
# Hence the plan makes nothing for an ended block (config/expiry.py) rather than a group that can only fail to launch.


def has_ended(block: CapacityBlock, now: datetime) -> bool:
    """Whether the block has a window and it has ended at ``now`` (its reservation is expired)."""
    return block.window is not None and window_state(block.window, now) == ENDED


def window_state(window: ReservationWindow, now: datetime) -> str:
    """future (not started), active (started, not ended: paid for, though the group is at 0 after its scale-down)
    or ended, at ``now``."""
    if now < window.start:
        return FUTURE
    return ACTIVE if now < window.end else ENDED


def require_aware(moment: datetime, name: str = "now") -> datetime:
    """``moment`` if it has a time zone; a ValueError that says so otherwise.

    EC2 answers with time-zone-aware timestamps (botocore parses them to UTC) and the stack file's windows are made
    aware when parsed, so a naive moment would only fail later, inside a comparison, as a bare TypeError.
    """
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(
            f"{name}: got {moment.isoformat()} without a time zone; allowed: an aware datetime; fix: pass e.g. "
            "datetime.now(timezone.utc) or 2026-12-01T11:30:00+00:00"
        )
    return moment


def current_block(blocks: Sequence[CapacityBlock], now: datetime) -> int:
    """Index of the block a group runs on at ``now``: the first whose switch time is ahead, else the last.

    A group switches to block N+1 once block N's scale-down has passed and settled (``switch_at``), so the switch
    (a launch template change) always happens while the group is at 0 nodes.
    """
    for index, block in enumerate(blocks):
        if block.switch_at is None or block.switch_at > now:
            return index
    return len(blocks) - 1


# Auto Scaling scheduled actions (EC2 Auto Scaling user guide, "Scheduled scaling", Limitations,
# https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-scheduled-scaling.html): names are unique per
# group, "a scheduled action must have a unique time value" (a second action at the same time is rejected), and a group
# holds at most 125 of them. A time in the past is refused: PutScheduledUpdateGroupAction (botocore 1.44.5, autoscaling
# 2011-01-01 service-2.json, operation documentation): "If you try to schedule your action in the past, Amazon EC2
# Auto Scaling returns an error message." (checked 2026-11-25). Its EndTime and Recurrence bound recurring actions
# only; the toolkit's actions are one-time (StartTime only), so that sentence is the one that binds.
ACTION_PREFIX = "capacity-block"
ACTION_DEPLOY_MARGIN_MINUTES = 30
"""An action due within this many minutes of the plan may be in the past by the time ``pulumi up`` creates it: a first
deploy makes the cluster before any group (a judgement, not measured; EKS documents no creation time)."""


def action_stem(start: datetime) -> str:
    """Name stem of a block's scheduled actions: its start in UTC, so a name stays put when earlier blocks are
    removed from the list (an index would shift and replace every later action)."""
    return f"{ACTION_PREFIX}-{start.astimezone(timezone.utc):%Y%m%dT%H%MZ}"


@dataclass(frozen=True)
class ScheduledAction:
    """One Auto Scaling scheduled action: sizes to apply at a moment."""

    name: str
    start_time: datetime
    min_size: int
    max_size: int
    desired_capacity: int

    @property
    def start_time_iso(self) -> str:
        """The start time as Auto Scaling wants it: UTC, ISO 8601, seconds precision."""
        return self.start_time.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def window_problems(window: ReservationWindow, name: KeyName = _WINDOW) -> list[Problem]:
    """Why a reservation window cannot be scheduled, keys spelt by ``name``; empty when it can."""
    problems = [
        Problem(
            name(field),
            moment.isoformat(),
            "a time with its time zone (e.g. 2026-01-05T11:30:00Z)",
            f"write {moment:%Y-%m-%dT%H:%M:%S}Z if it is UTC, as describe-capacity-blocks prints it",
            suggestion=f"{moment:%Y-%m-%dT%H:%M:%S}Z",
        )
        for field, moment in (("start", window.start), ("end", window.end))
        if moment.tzinfo is None
    ]
    if problems:
        return problems
    lead = scale_down_lead_problem(window.scale_down_lead_minutes, name("scaleDownLeadMinutes"))
    problems += [lead] if lead else []
    if window.scale_down_at <= window.start:
        problems.append(
            Problem(
                name(""),
                Described(f"end {window.end.isoformat()} minus {window.scale_down_lead_minutes} minutes"),
                f"a time after start {window.start.isoformat()}",
                "check the dates or shorten the lead",
            )
        )
    return problems


def scale_down_lead_problem(lead_minutes: object, key: str = "scaleDownLeadMinutes") -> Problem | None:
    """A scale-down lead that leaves less than ``MIN_DRAIN_MINUTES`` before the UltraServer reclaim, as a Problem at
    ``key``, or None. The one check of the floor: the stack settings and a component's arguments both call it."""
    if isinstance(lead_minutes, int) and not isinstance(lead_minutes, bool):
        if lead_minutes >= MIN_SCALE_DOWN_LEAD_MINUTES:
            return None
    reclaim = RECLAIM_LEAD_MINUTES[ULTRASERVER]
    return Problem(
        key,
        lead_minutes,
        f"{MIN_SCALE_DOWN_LEAD_MINUTES} or more: EC2 starts terminating an UltraServer block's instances {reclaim} "
        f"minutes before its end (EC2 user guide, ec2-capacity-blocks), and the drain needs at least "
        f"{MIN_DRAIN_MINUTES} minutes before that",
        f"set {MIN_SCALE_DOWN_LEAD_MINUTES} or more ({DEFAULT_SCALE_DOWN_LEAD_MINUTES} by default: "
        f"{DEFAULT_DRAIN_MINUTES} minutes to drain)",
    )


def aws_schedule_problems(window: ReservationWindow, key: str) -> list[Problem]:
    """Why a window is not one a Capacity Block can have (its end not at 11:30 UTC, longer than AWS sells); ``key``
    names the window as the stack writes it. Windows without a time zone are refused when the stack is read."""
    found = []
    end = window.end.astimezone(timezone.utc)
    if (end.hour, end.minute, end.second, end.microsecond) != (*BLOCK_END_UTC, 0, 0):
        on_schedule = end.replace(hour=BLOCK_END_UTC[0], minute=BLOCK_END_UTC[1], second=0, microsecond=0)
        found.append(
            Problem(
                f"{key}.end",
                window.end.isoformat(),
                "11:30 UTC, when every Capacity Block ends (EC2 user guide, capacity-blocks-purchase)",
                f"copy EndDate from aws ec2 describe-capacity-blocks (e.g. {on_schedule:%Y-%m-%dT%H:%M:%SZ})",
            )
        )
    longest = timedelta(days=MAX_BLOCK_DAYS + 1)
    if window.end - window.start > longest:
        found.append(
            Problem(
                key,
                f"{(window.end - window.start).days} days",
                f"at most {MAX_BLOCK_DAYS} days (plus a block's partial first day), the longest Capacity Block "
                "AWS sells, extensions included (EC2 user guide, capacity-blocks-purchase, capacity-blocks-extend)",
                "copy StartDate and EndDate from aws ec2 describe-capacity-blocks; list successive blocks under "
                "capacityBlocks",
            )
        )
    return found


def scheduled_actions(
    window: ReservationWindow, desired_size: int, *, now: datetime | None = None, dated: bool = False
) -> list[ScheduledAction]:
    """Scale to full size when the block starts and to 0 the lead time before it ends.

    Actions at or before ``now`` are left out, because Auto Scaling rejects start times in the past.
    """
    problems = window_problems(window)
    if problems:
        raise ConfigError(problems)
    down_at = window.scale_down_at
    stem = action_stem(window.start) if dated else ACTION_PREFIX
    actions = [
        ScheduledAction(f"{stem}-start", window.start, 0, desired_size, desired_size),
        ScheduledAction(f"{stem}-end", down_at, 0, desired_size, 0),
    ]
    return [a for a in actions if now is None or a.start_time > now]


def size_now(window: ReservationWindow | None, desired_size: int, now: datetime) -> int:
    """Desired size at ``now``: full inside the usable window (or with no window), 0 outside it."""
    if window is None:
        return desired_size
    return desired_size if window.start <= now < window.scale_down_at else 0


def block_schedule(blocks: Sequence[CapacityBlock], desired_size: int, now: datetime) -> list[ScheduledAction]:
    """Scheduled actions of the current block and every later one: up at each start, to 0 at each usable end.

    Blocks before the current one are over (their actions are in the past, which Auto Scaling rejects). Actions are
    named by their block's start (``action_stem``), so they are unique per group: blocks never share a start.
    """
    if not blocks:
        return []
    actions = []
    for block in blocks[current_block(blocks, now) :]:
        if block.window is not None:
            actions += scheduled_actions(block.window, desired_size, now=now, dated=True)
    return actions


def switch_window(blocks: Sequence[CapacityBlock], index: int) -> tuple[datetime, datetime] | None:
    """When the group can move from block ``index`` to the next: from its settled scale-down to the next start.

    A ``pulumi up`` in that span points the launch template at the next reservation while the group is at 0; without
    one, the next block's scale-up launches against the expired reservation. None when there is no next block.
    """
    if index + 1 >= len(blocks):
        return None
    before, after = blocks[index], blocks[index + 1]
    if before.switch_at is None or after.window is None:
        return None
    return before.switch_at, after.window.start
