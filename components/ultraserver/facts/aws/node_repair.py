"""EKS node auto repair on GB200 Capacity Blocks: which repair action each GPU condition reason gets.

The EKS node-repair page: "AcceleratedHardwareReady ... 10m ... Replace or Reboot, depending on the condition
reason"; the node monitoring agent page (awsdocs/amazon-eks-user-guide ``latest/ug/nodes/node-health-nma.adoc`` at
ab6e8819) lists the reasons: ``NvidiaXID[Code]Error`` for the well-known XID codes (13, 31, 48, 63, 64, 94, 95:
Reboot; 74, 79, 119, 120, 121, 140: Replace), ``NvidiaNVLinkError`` and ``NvidiaDoubleBitError`` (Replace).

Inside a Capacity Block, Replace terminates the instance and asks for a new one in the same reservation; an UltraServer
block has exactly its 18 (or 9) instances, so a replacement rarely finds a free slot, and the node is simply gone
for the rest of the block (with it the NVL72 domain's 18th member). So:

- a reason EKS already reboots for stays Reboot (a reboot resets the GPU and keeps the instance);
- XID 119 and 120 (GSP timeout or error, firmware state a reboot clears) reboot instead of replacing: a reboot that does
  not help leaves the condition in place, which costs no more than the replacement that could not launch;
- a reason only a replacement would fix (NVLink errors, a GPU off the bus, C2C and uncontained ECC errors) gets
  NoAction: the node stays, its condition stays False for the health checks and alerts to page someone, and the
  operator decides (docs/health.md).

Self-managed groups get no EKS repair (the settings refuse ``autoRepair`` there): the toolkit's own controller
(``incluster/repair.py``, in the reclaim drain's CronJob) reboots their nodes for the same ``REBOOT`` reasons after the
same wait, once per failure, through EC2 RebootInstances; a ``NO_ACTION`` reason gets nothing but the spare.

The action enum is botocore's ``NodeRepairConfigOverrides.repairAction`` (Replace | Reboot | NoAction); pulumi-aws
7.51.1 takes the list as ``NodeGroupNodeRepairConfigArgs.node_repair_config_overrides``.
"""

from __future__ import annotations

from dataclasses import dataclass

CONDITION = "AcceleratedHardwareReady"
REBOOT = "Reboot"
NO_ACTION = "NoAction"
WAIT_MINUTES = 10
"""EKS's own wait for AcceleratedHardwareReady ("Repair after 10m", node-repair page), kept."""


@dataclass(frozen=True)
class RepairOverride:
    """One condition reason and the action the toolkit sets for it, with why."""

    reason: str
    action: str
    eks_default: str
    why: str


def _xid(code: int, action: str, eks_default: str, why: str) -> RepairOverride:
    return RepairOverride(f"NvidiaXID{code}Error", action, eks_default, why)


_REBOOT_HELPS = "EKS's default; a reboot resets the GPU and keeps the instance"
_GSP = "GSP firmware state a reboot clears; a replacement would find no free slot in the block"
_REPLACE_ONLY = (
    "only a replacement would fix it, and a replacement finds no free slot in the block: keep the node, page"
)

OVERRIDES: tuple[RepairOverride, ...] = (
    *(_xid(code, REBOOT, REBOOT, _REBOOT_HELPS) for code in (13, 31, 48, 63, 64, 94, 95)),
    _xid(119, REBOOT, "Replace", _GSP),
    _xid(120, REBOOT, "Replace", _GSP),
    *(_xid(code, NO_ACTION, "Replace", _REPLACE_ONLY) for code in (74, 79, 121, 140)),
    RepairOverride("NvidiaNVLinkError", NO_ACTION, "Replace", _REPLACE_ONLY),
    RepairOverride("NvidiaDoubleBitError", NO_ACTION, "Replace", _REPLACE_ONLY),
)
"""The overrides of every GB200-relevant AcceleratedHardwareReady reason the node monitoring agent page lists."""

REBOOT_REASONS: tuple[str, ...] = tuple(o.reason for o in OVERRIDES if o.action == REBOOT)
"""The reasons a reboot can clear: what the toolkit's controller reboots a self-managed node for."""
REBOOT_AGAIN_HOURS = 24
"""The controller reboots a self-managed node again only for a failure that starts at least this long after its last
reboot: a GPU that fails again sooner is not one a reboot clears, and rebooting it in a loop would only restart its
jobs over and over. The toolkit's choice (no source gives a number); the node is paged instead, and
``kubectl annotate node NODE ultraserver.io/rebooted-at-`` allows one more reboot."""
