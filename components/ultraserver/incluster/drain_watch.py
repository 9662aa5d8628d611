"""What the reclaim drain's run learns that a person must hear about, and what it undoes when EC2's end moves: pure
decisions, standard library only (mounted beside ``drain_main.py``).

Each minute's run gathers findings (a failed call, EC2's dates differing from the stack's, an active block with no
node, a fabric check failing or never run, the drift check failing), each with a key, a subject and a message naming
the stack, the block, what failed and the fix. A finding is published once while it lasts: the keys sent are kept in
the ConfigMap ``<drain>-alerted`` (``alert_state``) and a key that clears is forgotten, so it is sent again if it
comes back. When EC2's end lies after the stack's, ``regrow`` scales the block's Auto Scaling group back up if its
scale-down already ran and puts the scale-down again at the new end minus the lead (``aws_query``).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

try:
    from ultraserver.incluster.drain import GROUP_LABEL, Block, timeline
    from ultraserver.incluster.recheck import CHECKED_BLOCK, JOIN_GRACE, block_key, job_node_groups
except ImportError:  # in the cluster: the mounted directory is on sys.path
    from drain import GROUP_LABEL, Block, timeline  # type: ignore[no-redef]
    from recheck import CHECKED_BLOCK, JOIN_GRACE, block_key, job_node_groups  # type: ignore[no-redef]

CHECKS_DUE = timedelta(hours=2)
"""How long after a block's start its fabric checks must have run before 'never ran' is reported: the join grace
(30 minutes), the checks' own run (minutes; the EFA and NCCL runs take longest) and Kueue admitting them (a
judgement, not measured)."""
ALERTED_KEY = "alerted.json"
"""Key of the ConfigMap that holds the findings already sent."""
REGROWN_KEY = "regrown.json"
"""In the alert ConfigMap: UltraServer -> when the drain last scaled its group back up after an extension."""
RESEND_WITHOUT_STATE_MINUTES = 30
"""With the ConfigMap unreadable, a finding is sent at most once every this many minutes (on the minutes divisible by
it), not every minute."""

_FIX_STATUS = "run `ultraserver status --stack {stack}` for the whole picture"


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def as_ec2_holds(blocks: list[Block], reservations: dict[str, dict[str, str]]) -> list[Block]:
    """The blocks with the start and end EC2 holds for their reservations (``aws_query.capacity_reservations``): an
    extension, a block cut short or a date typed wrong in the stack file is followed with nobody deploying. A block
    over several reservations takes the earliest end among them; one EC2 did not answer for keeps the stack's."""
    known = []
    for block in blocks:
        held = [reservations[r] for r in block.reservations if reservations.get(r, {}).get("end")]
        if not held:
            known.append(block)
            continue
        start = min(_utc(h["start"]) for h in held if h.get("start")) if any(h.get("start") for h in held) else None
        known.append(replace(block, start=start or block.start, end=min(_utc(h["end"]) for h in held)))
    return known


def finding(key: str, subject: str, message: str) -> dict[str, str]:
    """One thing a person must hear about: ``key`` identifies it across runs."""
    return {"key": key, "subject": subject, "message": message}


def _block_name(block: Block) -> str:
    return f"{block.ultraserver} ({', '.join(block.reservations) or 'no reservation id'})"


def _call_fix(step: str, status: int | None, role: str, aws: bool) -> str:
    if aws:  # an AWS call through the IAM role EKS Pod Identity gives the drain's account
        if status in (401, 403):
            return (
                f"give the IAM role of {role} (EKS Pod Identity) the AWS action of {step}: the stack grants it, so "
                "run `pulumi up`, or restore the role's policy if it was edited"
            )
        return (
            "check that the drain's pod gets its Pod Identity credentials and reaches AWS (NAT or VPC endpoints); "
            "the drain tries again every minute"
        )
    if status in (401, 403):
        return (
            f"give the drain's account ({role}) the RBAC verb for {step} (its ClusterRole is deployed by the stack: "
            "run `pulumi up`, or restore the role if it was edited)"
        )
    if status == 404:
        return "the object is gone; nothing to do unless it repeats"
    return "check the API server's health (`kubectl get --raw /readyz`); the drain tries again every minute"


def call_findings(stack: str, failures: list[dict[str, Any]], role: str) -> list[dict[str, str]]:
    """One finding per failed step and HTTP status, naming every target that failed that way."""
    grouped: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for fail in failures:
        grouped.setdefault((fail["step"], fail.get("status")), []).append(fail)
    found = []
    for (step, status), fails in sorted(grouped.items(), key=lambda item: (item[0][0], str(item[0][1]))):
        targets = ", ".join(sorted({f["target"] for f in fails}))
        message = (
            f"Stack {stack}: the reclaim drain's call '{step}' failed ({status or 'no answer'}) for {targets}: "
            f"{fails[0]['error']}. The drain's other steps ran. "
            f"Fix: {_call_fix(step, status, role, bool(fails[0].get('aws')))}."
        )
        found.append(finding(f"call:{step}:{status}", f"{stack}: drain call {step} failed ({status})", message))
    return found


def run_finding(stack: str, error: BaseException) -> dict[str, str]:
    """The whole run failed before it could act (e.g. the GB200 nodes could not be read)."""
    message = (
        f"Stack {stack}: the reclaim drain's run failed: {error}. Nothing was drained this minute; it runs again "
        f"next minute. Fix: check `kubectl -n <drain namespace> logs job/<latest reclaim-drain job>`; "
        f"{_FIX_STATUS.format(stack=stack)}."
    )
    return finding(f"run:{type(error).__name__}", f"{stack}: reclaim drain run failed", message)


def ec2_findings(stack: str, blocks: list[Block], held: dict[str, dict[str, str]]) -> list[dict[str, str]]:
    """Where EC2's start, end or state of a listed reservation differs from the stack's block (the drain follows EC2
    already; the stack file must follow too, or the next ``pulumi up`` puts the old schedule back)."""
    found = []
    for block in blocks:
        for rid in block.reservations:
            ec2 = held.get(rid)
            if ec2 is None:
                continue
            state = ec2.get("state", "")
            if state in ("cancelled", "failed", "payment-failed", "unsupported", "cancelling"):
                message = (
                    f"Stack {stack}: EC2 says reservation {rid} of {block.ultraserver} is {state}; the stack runs a "
                    f"block on it from {iso(block.start)} to {iso(block.end)}. Fix: buy a replacement Capacity Block "
                    f"and put its reservation id in the stack file, then `pulumi up`."
                )
                found.append(finding(f"state:{rid}:{state}", f"{stack}: reservation {rid} is {state}", message))
            moved = [
                (what, ec2[what], iso(getattr(block, what)))
                for what in ("start", "end")
                if ec2.get(what) and _utc(ec2[what]) != getattr(block, what)
            ]
            if moved:
                said = "; ".join(
                    f"{what} {stack_value} in the stack, {value} at EC2" for what, value, stack_value in moved
                )
                fix = ", ".join(f"{what}: {value}" for what, value, _ in moved)
                message = (
                    f"Stack {stack}: {block.ultraserver}'s block on {rid} differs from EC2: {said}. The in-cluster "
                    f"drain follows EC2's dates already (cut-off, release, scale-down). Fix: write {fix} for {rid} in "
                    f"the stack file (aws ec2 describe-capacity-reservations --capacity-reservation-ids {rid}) and run "
                    f"`pulumi up`, or the next deploy puts the old schedule back."
                )
                key = f"dates:{rid}:" + ",".join(f"{w}={v}" for w, v, _ in moved)
                found.append(finding(key, f"{stack}: {rid} dates differ from EC2", message))
    return found


def _ready(node: dict[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def empty_block_findings(
    stack: str, blocks: list[Block], nodes: list[dict[str, Any]], now: datetime, regrown: dict[str, datetime]
) -> list[dict]:
    """An active block (past its join grace, before its scale-down) on whose UltraServer no GB200 node is Ready. A
    block whose group the drain scaled back up (``regrown``: UltraServer -> when) gets the join grace again from then:
    its nodes were released at the old end and are launching, which is no loss to page anyone about."""
    found = []
    for block in blocks:
        since = max(block.start, regrown.get(block.ultraserver, block.start))
        if not since + JOIN_GRACE <= now < timeline(block).scale_down:
            continue
        mine = [
            n for n in nodes if ((n.get("metadata") or {}).get("labels") or {}).get(GROUP_LABEL) == block.ultraserver
        ]
        if any(_ready(n) for n in mine):
            continue
        lost = block.nodes * (now - block.start).total_seconds() / 3600
        message = (
            f"Stack {stack}: {_block_name(block)} is active since {iso(block.start)} and has no Ready GB200 node "
            f"({len(mine)} joined, {block.nodes} expected); about {lost:.0f} paid node-hours so far. Fix: check the "
            f"group's desired size and scheduled actions (`aws autoscaling describe-scheduled-actions`), a missed "
            f"`pulumi up` between blocks (handover: switch), and the node group's health; "
            f"{_FIX_STATUS.format(stack=stack)}."
        )
        key = f"empty:{block.ultraserver}:{block_key(block)}"
        found.append(finding(key, f"{stack}: {block.ultraserver} has no nodes in its paid block", message))
    return found


def switch_findings(stack: str, blocks: list[Block], now: datetime) -> list[dict[str, str]]:
    """A block of a ``handover: switch`` group that has started with no deploy since the gap before it opened: its
    launch template still names the previous reservation, so none of its nodes can launch. Sent at its start, the
    deadline the plan's warning names, not once the join grace has passed with no node."""
    found = []
    for block in blocks:
        if block.deployed or not block.start <= now < timeline(block).scale_down:
            continue
        message = (
            f"Stack {stack}: {_block_name(block)} started at {iso(block.start)} and no `pulumi up` ran in the gap "
            f"before it (handover: switch): the group's launch template still names the previous block's reservation, "
            f"so no node of this paid block can launch ({block.nodes} expected). Fix: run `pulumi up` for the stack "
            f"now; if the group has already scaled up against the old reservation, scale it to 0 outside Pulumi first "
            f"(docs/running-on-capacity-blocks.md). To need nobody between blocks, set handover: standby."
        )
        key = f"switch-missed:{block.ultraserver}:{block_key(block)}"
        found.append(finding(key, f"{stack}: {block.ultraserver}'s block started with no deploy", message))
    return found


def _condition(obj: dict[str, Any], kind: str) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def check_findings(
    stack: str, manifests: list[dict[str, Any]], live: list[dict[str, Any]], blocks: list[Block], now: datetime
) -> list[dict[str, str]]:
    """A fabric check of the current blocks that failed, or that has not run by ``CHECKS_DUE`` after their start."""
    jobs = {((j.get("metadata") or {}).get("namespace"), (j.get("metadata") or {}).get("name")): j for j in live}
    found = []
    for manifest in manifests:
        meta = manifest["metadata"]
        spans = job_node_groups(manifest)
        current = [b for g in spans for b in blocks if b.ultraserver == g and b.start <= now < b.end]
        if not spans or len(current) != len(spans):
            continue
        key = ",".join(block_key(b) for b in current)
        job = jobs.get((meta["namespace"], meta["name"]))
        notes = ((job or {}).get("metadata") or {}).get("annotations") or {}
        created = ((job or {}).get("metadata") or {}).get("creationTimestamp")
        this_block = job is not None and (
            notes.get(CHECKED_BLOCK) == key
            or (isinstance(created, str) and _utc(created) >= max(b.start for b in current))
        )
        ref = f"MPIJob {meta['namespace']}/{meta['name']}"
        if this_block and _condition(job or {}, "Failed"):
            message = (
                f"Stack {stack}: the fabric check {ref} failed on {', '.join(_block_name(b) for b in current)}. "
                f"Fix: read it with `ultraserver verify --stack {stack}`; if the interconnect is impaired, follow the "
                f"remediation packet in `ultraserver status --stack {stack} --json` (scale to 0, terminate, support "
                f"case)."
            )
            found.append(finding(f"check-failed:{meta['name']}:{key}", f"{stack}: fabric check failed", message))
        elif not this_block and now >= max(b.start for b in current) + CHECKS_DUE:
            message = (
                f"Stack {stack}: the fabric check {ref} has not run for the block that started "
                f"{iso(max(b.start for b in current))} ({', '.join(_block_name(b) for b in current)}): jobs run on an "
                f"unchecked fabric. Fix: see why the drain's recheck did not make it (its nodes not all Ready, Kueue "
                f"not admitting it), or run `ultraserver verify --stack {stack}`."
            )
            found.append(finding(f"check-missing:{meta['name']}:{key}", f"{stack}: fabric check never ran", message))
    return found


def drift_findings(stack: str, jobs: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The drift check's newest Job failed (a node lost GPUs, EFA devices or its clique, or went NotReady)."""
    finished = [j for j in jobs if _condition(j, "Complete") or _condition(j, "Failed")]
    if not finished:
        return []
    newest = max(finished, key=lambda j: (j.get("metadata") or {}).get("creationTimestamp") or "")
    if not _condition(newest, "Failed"):
        return []
    meta = newest.get("metadata") or {}
    message = (
        f"Stack {stack}: the drift check's run {meta.get('namespace')}/{meta.get('name')} failed: a GB200 node lost "
        f"GPUs, EFA devices or its NVLink clique, or went NotReady. Fix: `kubectl -n {meta.get('namespace')} logs "
        f"job/{meta.get('name')}` names the node; `ultraserver verify --stack {stack} --node-facts-only` gives the fix."
    )
    return [finding("drift", f"{stack}: node drift found", message)]


def regrown_state(config_map: dict[str, Any] | None, now: datetime) -> dict[str, datetime]:
    """When the drain last scaled each UltraServer's group back up, from the ConfigMap, within the join grace (an
    older one no longer changes a finding)."""
    raw = ((config_map or {}).get("data") or {}).get(REGROWN_KEY) or "{}"
    try:
        found = {str(k): _utc(str(v)) for k, v in json.loads(raw).items()}
    except (ValueError, AttributeError):
        return {}
    return {k: at for k, at in found.items() if now - JOIN_GRACE < at <= now}


def alert_state(config_map: dict[str, Any] | None) -> set[str] | None:
    """The keys already sent, from the ConfigMap; None when it could not be read."""
    if config_map is None:
        return None
    raw = (config_map.get("data") or {}).get(ALERTED_KEY) or "[]"
    try:
        return set(json.loads(raw))
    except ValueError:
        return set()


def to_send(findings: list[dict[str, str]], sent: set[str] | None, now: datetime) -> list[dict[str, str]]:
    """The findings to publish now: those not yet sent; every one on the half hour when nothing is remembered."""
    if sent is None:
        return findings if now.minute % RESEND_WITHOUT_STATE_MINUTES == 0 else []
    return [f for f in findings if f["key"] not in sent]


def block_group(groups: list[dict[str, Any]], stem: str) -> dict[str, Any] | None:
    """The Auto Scaling group of a node group whose resource name is ``stem``: a self-managed group is Pulumi's
    ``<stem>-<7 hex>``; EKS names a managed node group's ``eks-<node group name>-<uuid>``, its node group name being
    Pulumi's ``<stem>-<7 hex>`` (that EKS's naming holds is UNVERIFIED: not in the EKS guide pages read)."""
    own = re.compile(rf"^(eks-)?{re.escape(stem)}-[0-9a-f]{{7}}(-[0-9a-f-]{{36}})?$")
    found = [g for g in groups if own.match(g["name"])]
    return found[0] if len(found) == 1 else None


def regrow(
    stack_blocks: list[Block],
    ec2_blocks: list[Block],
    groups: list[dict[str, Any]],
    actions: dict[str, dict[str, str]],
    now: datetime,
) -> list[dict[str, Any]]:
    """For each block whose end EC2 moved later: put its scale-down again at the new end minus its lead, and scale its
    group back up if the old scale-down (or EKS's own at the old end − 40) already took it to 0. Nothing before
    EC2's start, after the new scale-down, or for a group not found (the finding then says to scale it by hand)."""
    moves: list[dict[str, Any]] = []
    for stack, ec2 in zip(stack_blocks, ec2_blocks, strict=True):
        new_down = timeline(ec2).scale_down
        if ec2.end <= stack.end or not ec2.start <= now < new_down or not stack.group:
            continue
        group = block_group(groups, stack.group)
        if group is None:
            continue
        name, size = stack.scale_down_action, stack.nodes or group["max"]
        if name and actions.get(group["name"], {}).get(name) != iso(new_down):
            at = iso(new_down)
            moves.append({"kind": "put-scale-down", "group": group["name"], "name": name, "at": at, "size": size})
        if now >= timeline(stack).scale_down - timedelta(minutes=1) and group["desired"] < size:
            moves.append({"kind": "scale-up", "group": group["name"], "size": size, "ultraserver": stack.ultraserver})
    return moves
