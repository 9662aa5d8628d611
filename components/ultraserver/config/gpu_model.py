"""The GPU node group settings: one entry per UltraServer reservation set (or self-managed resource group)."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    model_validator,
)

from ultraserver.config.fields import (
    EFA_LAYOUT_SCHEMA,
    Model,
    Tags,
    Time,
    Zone,
    check,
    efa_layout_shape,
    pattern,
)
from ultraserver.facts.aws import aws_ids
from ultraserver.facts.capacity import capacity_blocks as block_facts
from ultraserver.facts.hardware import efa, instances
from ultraserver.facts.hardware import ultraservers as us_types
from ultraserver.facts.hardware.ultraservers import NodeGroupMode, UltraServerTypeName
from ultraserver.facts.pins import ami


def _lead_allowed(value: int) -> str | None:
    """What the floor allows, from the one check of it (facts), when ``value`` is below it."""
    problem = block_facts.scale_down_lead_problem(value)
    return None if problem is None else problem.allowed


_LEAD_FIX = f"set {block_facts.MIN_SCALE_DOWN_LEAD_MINUTES} or more"


class ReservationWindowSettings(Model):
    """When a Capacity Block runs (from describe-capacity-blocks)."""

    start: Time = Field(description="Block start, ISO 8601 (quote it in YAML).")
    end: Time = Field(description="Block end, ISO 8601 (quote it in YAML).")
    scale_down_lead_minutes: Annotated[StrictInt, check(_lead_allowed, _LEAD_FIX)] = Field(
        block_facts.DEFAULT_SCALE_DOWN_LEAD_MINUTES,
        le=block_facts.MAX_SCALE_DOWN_LEAD_MINUTES,
        json_schema_extra={"minimum": block_facts.MIN_SCALE_DOWN_LEAD_MINUTES},
        description=f"Scale to 0 (and drain) this long before the end: EC2 reclaims an UltraServer block "
        f"{block_facts.RECLAIM_LEAD_MINUTES[block_facts.ULTRASERVER]} minutes before its end, so at least "
        f"{block_facts.MIN_DRAIN_MINUTES} minutes more.",
    )

    def as_window(self) -> block_facts.ReservationWindow:
        """The window as the facts reason about it."""
        return block_facts.ReservationWindow(self.start, self.end, self.scale_down_lead_minutes)  # type: ignore[arg-type]


ReservationIds = tuple[
    Annotated[str, pattern(aws_ids.RESERVATION_ID, "'cr-' and 17 lowercase hex digits (e.g. cr-0123456789abcdef0)")],
    ...,
]


class CapacityBlockSettings(ReservationWindowSettings):
    """One of a group's successive Capacity Blocks: its reservations and its window."""

    capacity_reservation_ids: ReservationIds = Field(
        (), description="One reservation (cr-...) per UltraServer, in the same order in every block."
    )


class GpuNodeGroupSettings(Model):
    """GB200 capacity-block node groups for one or more UltraServers."""

    name: Annotated[
        str, pattern(r"[a-z][a-z0-9-]{0,37}[a-z0-9]", "lowercase letters, digits and -, 2-39 characters")
    ] = Field(description="Group name; with several reservations each UltraServer's group is <name>-<n>.")
    availability_zone: Zone = Field(
        description="Zone of the capacity reservation (for P6e-GB200 a Local Zone such as us-east-1-dfw-2a)."
    )
    zone_not_in_catalog: StrictBool = Field(
        False, description="The zone offers the type though the toolkit's catalog does not list it (preflight checks)."
    )
    ultraserver_type: UltraServerTypeName = Field(
        us_types.DEFAULT_TYPE,
        description=" or ".join(f"{t.name} ({t.nodes} instances)" for t in us_types.TYPES.values()) + ".",
    )
    capacity_reservation_ids: ReservationIds = Field(
        (), description="One capacity reservation (cr-...) per UltraServer; one node group each."
    )
    capacity_reservation_resource_group_arn: Annotated[
        str,
        pattern(
            aws_ids.RESOURCE_GROUP_ARN,
            "a resource group ARN arn:aws:resource-groups:<region>:<account>:group/<name>",
            empty=True,
        ),
    ] = Field("", description="Self-managed only: one group over a capacity-reservation resource group.")
    ultraserver_count: StrictInt = Field(1, ge=1, le=1000, description="UltraServers in the resource group.")
    mode: NodeGroupMode = Field(
        "managed", description="managed (EKS managed node group) or self-managed (Auto Scaling group)."
    )
    efa_layout: Annotated[Any, WithJsonSchema(EFA_LAYOUT_SCHEMA), check(efa_layout_shape)] = Field(
        "one-per-nci-group",
        alias="efaLayout",
        description="EFA preset (one-per-nci-group, all-odd-cards, maximum) or a list of interfaces.",
    )
    desired_size: StrictInt | None = Field(
        None, ge=0, description="Nodes per group; defaults to every instance of the UltraServer(s)."
    )
    release_version: Annotated[
        str,
        pattern(r"1\.[0-9]+\.[0-9]+-[0-9]{8}", f"an EKS AMI release version such as {ami.EXAMPLE_RELEASE}", empty=True),
    ] = Field(
        "",
        description="EKS AMI release (AL2023_ARM_64_NVIDIA); default: the toolkit's pin for the cluster version.",
    )
    ami_release: StrictStr = Field("", description="Custom AMI: pinned release (v20251103 or later) read from SSM.")
    ami_id: Annotated[str, pattern(aws_ids.AMI_ID, "an AMI id like ami-0123456789abcdef0", empty=True)] = Field(
        "", description="Custom AMI id (needs amiRelease so the driver can be checked)."
    )
    root_volume_size_gib: StrictInt = Field(
        instances.GPU_ROOT_VOLUME_GIB,
        alias="rootVolumeSizeGiB",
        ge=50,
        le=16384,
        description="Encrypted gp3 root volume size (GiB).",
    )
    local_storage: instances.LocalStorage = Field(
        "RAID0", description="nodeadm instance-store strategy: RAID0, RAID10 (4+ disks) or Mount."
    )
    labels: Tags = Field(default_factory=dict, description="Extra Kubernetes node labels.")
    reservation_window: ReservationWindowSettings | None = Field(
        None, alias="reservationWindow", description="Capacity block window for scheduled scaling."
    )
    capacity_blocks: tuple[CapacityBlockSettings, ...] = Field(
        (),
        alias="capacityBlocks",
        description="Successive blocks (ids + window), instead of capacityReservationIds and reservationWindow.",
    )
    handover: Literal["switch", "standby"] = Field(
        "switch",
        description="With capacityBlocks: standby (one group per block, made ahead at 0 and scaled by its own "
        "schedule: nobody needs to be online between blocks; the default with more than one block) or switch (one "
        "group per UltraServer; a pulumi up in the gap between blocks moves it to the next reservation).",
    )
    scale_to_zero_for_upgrade: StrictBool = Field(
        False, description="Hold the group at 0 nodes (required before a version or AMI upgrade)."
    )
    imds_hop_limit: StrictInt = Field(1, ge=1, le=2, description="IMDSv2 hop limit: 1 (pods cannot reach IMDS) or 2.")
    auto_repair: StrictBool = Field(False, description="EKS node auto repair (managed groups only).")
    spares_per_ultraserver: StrictInt = Field(
        0,
        ge=0,
        alias="sparesPerUltraServer",
        description="Nodes of each UltraServer held back as spares: joined and checked, tainted so no job lands on "
        "them; when an active node fails, the toolkit's controller frees one spare of the same UltraServer and "
        "Kueue moves the job's pod there (docs/health.md). Kueue's quota and the toolkit's checks use the other "
        "nodes only. Default 0: a spare is paid for all block and idle until a node fails, and whether that is worth "
        "it depends on how long a job can wait for a human (plan shows the spares' GPU-hours per block).",
    )

    @model_validator(mode="before")
    @classmethod
    def _handover_default(cls, data: Any) -> Any:
        """More than one block listed and no handover written: standby, which needs nobody between blocks (with
        switch, a missed ``pulumi up`` in the gap leaves the next block with no node at all)."""
        if isinstance(data, dict) and "handover" not in data:
            listed = data.get("capacityBlocks", data.get("capacity_blocks"))
            if isinstance(listed, list | tuple) and len(listed) > 1:
                return {**data, "handover": "standby"}
        return data

    @property
    def instance_type(self) -> str:
        """The instance type of the UltraServer type's nodes (the catalog in facts.hardware.ultraservers)."""
        return us_types.TYPES[self.ultraserver_type].instance_type

    @property
    def efa_preset(self) -> str:
        """The EFA preset name, or 'custom'."""
        return self.efa_layout if isinstance(self.efa_layout, str) else "custom"

    @cached_property
    def efa_interfaces(self) -> tuple[efa.EfaInterface, ...]:
        """The resolved network interface layout (card 0 ENA primary included)."""
        custom = self.efa_layout if isinstance(self.efa_layout, list) else None
        return tuple(efa.layout_for(self.instance_type, None if custom else self.efa_preset, custom, key="efaLayout"))

    @property
    def blocks(self) -> tuple[block_facts.CapacityBlock, ...]:
        """The group's Capacity Blocks in time order (one, from the top-level keys, without capacityBlocks); a block
        without a window keeps the size fixed."""
        if not self.capacity_blocks:
            window = None if self.reservation_window is None else self.reservation_window.as_window()
            return (block_facts.CapacityBlock(self.capacity_reservation_ids, window),)
        return tuple(block_facts.CapacityBlock(b.capacity_reservation_ids, b.as_window()) for b in self.capacity_blocks)

    def position_blocks(self, position: int) -> tuple[block_facts.CapacityBlock, ...]:
        """The blocks of the entry's ``position``-th node group: its own reservation of each (none when grouped)."""
        return tuple(
            block_facts.CapacityBlock(() if self.grouped else (block.reservation_ids[position],), block.window)
            for block in self.blocks
        )

    @property
    def all_reservation_ids(self) -> tuple[str, ...]:
        """Every reservation the group references, over all its blocks."""
        return tuple(rid for block in self.blocks for rid in block.reservation_ids)

    @property
    def grouped(self) -> bool:
        """Whether the group targets a capacity-reservation resource group."""
        return bool(self.capacity_reservation_resource_group_arn)

    @property
    def instances_per_ultraserver(self) -> int:
        """Instances in one UltraServer of this type."""
        return us_types.NODES[self.ultraserver_type]

    @property
    def ultraservers(self) -> int:
        """UltraServers this entry covers."""
        return self.ultraserver_count if self.grouped else len(self.blocks[0].reservation_ids)

    @property
    def node_groups(self) -> int:
        """Node groups this entry creates: one per UltraServer, or one in grouped mode."""
        return 1 if self.grouped else len(self.blocks[0].reservation_ids)

    @property
    def node_group_names(self) -> list[str]:
        """Names of the node groups this entry creates: <name>, or <name>-<n> for several UltraServers."""
        if self.node_groups == 1:
            return [self.name]
        return [f"{self.name}-{index}" for index in range(1, self.node_groups + 1)]

    @property
    def full_size(self) -> int:
        """Instances in each node group this entry creates."""
        return self.instances_per_ultraserver * (self.ultraserver_count if self.grouped else 1)

    @property
    def nodes_per_ultraserver(self) -> int:
        """Nodes each UltraServer of the entry runs (desiredSize spread over a grouped fleet's UltraServers)."""
        return self.nodes_per_group // max(1, self.ultraservers // max(1, self.node_groups))

    @property
    def active_nodes_per_ultraserver(self) -> int:
        """Nodes of each UltraServer that jobs and Kueue's quota use: those it runs, less its spares."""
        return max(0, self.nodes_per_ultraserver - self.spares_per_ultraserver)

    @property
    def active_full_size(self) -> int:
        """Active nodes of the entry with every instance of its UltraServers running (Kueue's quota)."""
        return (self.instances_per_ultraserver - self.spares_per_ultraserver) * self.ultraservers

    @property
    def nodes_per_group(self) -> int:
        """Desired nodes in each node group this entry creates."""
        return self.full_size if self.desired_size is None else self.desired_size
