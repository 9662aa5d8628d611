"""The parts of a stack's Kubernetes layer, derived once from its settings: the device mode, the fabric checks, Kueue,
the drift check and the reclaim drain (resources/kubernetes_layer.py declares them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ultraserver.builders.drift_check import DriftCheckArgs
from ultraserver.builders.efa_check import EfaCheckArgs, efa_check_args
from ultraserver.builders.expected_nodes import node_group_expectations
from ultraserver.builders.imex_check import ImexCheckArgs, imex_check_args
from ultraserver.builders.kueue import CLUSTER_QUEUE_NAME, KueueArgs, kueue_args
from ultraserver.builders.nccl_check import NcclJobArgs, nccl_check_args
from ultraserver.builders.reclaim_drain import ReclaimDrainArgs, drain_blocks
from ultraserver.config.expiry import live_settings
from ultraserver.config.settings import Settings
from ultraserver.config.views import device_mode, kueue_enabled, spare_groups
from ultraserver.facts.hardware.devices import DeviceMode
from ultraserver.facts.pins.manifests import PYTHON_IMAGE, mirrored_image
from ultraserver.incluster.spares import SpareGroup


@dataclass(frozen=True)
class LayerParts:
    """What a stack's Kubernetes layer deploys besides its releases, each part from the same settings and the same
    device mode."""

    mode: DeviceMode
    """The device mode every part (and every release) follows."""
    imex_check: ImexCheckArgs | None
    """The nvbandwidth check per UltraServer; None when off."""
    efa_check: EfaCheckArgs | None
    """nccl-tests across UltraServers over EFA; None when off."""
    nccl_check: list[NcclJobArgs]
    """nccl-tests with MNNVL and NVLS per UltraServer; empty when off."""
    kueue: KueueArgs | None
    """Kueue with the stack's quota; None when off."""
    drift_check: DriftCheckArgs | None
    """The scheduled node-facts check; None when off or without GPU groups."""
    reclaim_drain: ReclaimDrainArgs | None
    """The drain before each Capacity Block ends; None when no block has a window."""


def job_image(settings: Settings) -> str:
    """The Python image of the drain and the drift check, from ``kubernetes.imageMirror`` when set."""
    return mirrored_image(PYTHON_IMAGE, settings.kubernetes.image_mirror)


def reclaim_drain_args(
    settings: Settings, warning_queue_url: Any = None, alert_topic_arn: Any = None, now: datetime | None = None
) -> ReclaimDrainArgs | None:
    """The reclaim drain of every block with a window, the spares controller of every group with spares and the
    reboots of self-managed groups' nodes (they run in the same CronJob); none without any (nothing to time a drain
    by, no spare to keep, no node to reboot). With ``warning_queue_url`` it also reads EC2's expiration warnings from
    that queue (and EC2's dates, through the same role); with ``alert_topic_arn`` it publishes what needs a person
    there. ``now``: the deploy's clock, which tells the drain which block each ``handover: switch`` group was pointed
    at (``drain_blocks``)."""
    blocks = drain_blocks(settings, now)
    self_managed = any(g.mode == "self-managed" for g in settings.gpu_node_groups)
    if not blocks and not spare_groups(settings) and not self_managed:
        return None
    # Every GPU group is watched: one without spares still has its failed nodes marked and reported; a self-managed
    # one (no EKS repair) has its nodes rebooted where a reboot helps.
    spares = [
        SpareGroup(n, g.spares_per_ultraserver, g.grouped, g.mode == "self-managed")
        for g in settings.gpu_node_groups
        for n in g.node_group_names
    ]
    queue = CLUSTER_QUEUE_NAME if kueue_enabled(settings) else ""
    drift = settings.health.drift_check_enabled and bool(settings.gpu_node_groups)
    return ReclaimDrainArgs(
        blocks,
        spares=spares,
        cluster_queue=queue,
        warning_queue_url=warning_queue_url,
        region=settings.region,
        image=job_image(settings),
        cluster_name=settings.cluster.name,
        alert_topic_arn=alert_topic_arn,
        drift_check=f"{DriftCheckArgs.namespace}/{DriftCheckArgs.name}" if drift else "",
    )


def layer_parts(
    settings: Settings, now: datetime, warning_queue_url: Any = None, alert_topic_arn: Any = None
) -> LayerParts:
    """The layer's parts: the checks and Kueue's quota leave out the GPU groups whose every block has ended at
    ``now`` (config.expiry.live_settings); what the stack installs stays with its own groups."""
    live = live_settings(settings, now)
    mode = device_mode(settings)
    drift = settings.health.drift_check_enabled and settings.gpu_node_groups
    return LayerParts(
        mode=mode,
        imex_check=imex_check_args(live, mode),
        efa_check=efa_check_args(settings, mode),
        nccl_check=nccl_check_args(live, mode),
        kueue=kueue_args(settings, live, mode),
        drift_check=DriftCheckArgs(
            node_group_expectations(settings), schedule=settings.health.drift_check_schedule, image=job_image(settings)
        )
        if drift
        else None,
        reclaim_drain=reclaim_drain_args(settings, warning_queue_url, alert_topic_arn, now),
    )
