"""Settings of the fabric checks: IMEX nvbandwidth, EFA nccl-tests across UltraServers, NCCL all-reduce over a
ComputeDomain, and node health (drift check, node monitoring agent)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, StrictBool, StrictFloat, StrictInt, WithJsonSchema

from ultraserver.config.fields import Model, all_nodes, check, pattern
from ultraserver.facts.hardware.ultraservers import MAX_NODES, NVLINK_THRESHOLD_GBPS
from ultraserver.facts.kubernetes import cron


class ImexCheckSettings(Model):
    """The nvbandwidth MPIJob that proves multi-node NVLink inside each UltraServer."""

    enabled: StrictBool = Field(True, description="Deploy the check.")
    nodes: Annotated[
        StrictInt | None,
        BeforeValidator(all_nodes),
        WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 2, "maximum": MAX_NODES}, {"const": "all"}]}),
    ] = Field(
        2, ge=2, le=MAX_NODES, description=f'Nodes of each UltraServer the check spans (2 to {MAX_NODES}, or "all").'
    )
    threshold_gbps: StrictFloat = Field(
        NVLINK_THRESHOLD_GBPS, ge=1.0, description="Minimum GB/s for every cross-node GPU pair."
    )


def _schedule_allowed(schedule: str) -> str | None:
    why = cron.schedule_fault(schedule)
    return f"{cron.ALLOWED} (here {why})" if why else None


class DriftCheckSettings(Model):
    """The scheduled check that the deployed fabric still matches the stack."""

    enabled: StrictBool = Field(True, description="Run the drift check on a schedule.")
    schedule: Annotated[
        str,
        pattern(r"(\S+\s+){4}\S+", "a cron schedule with five fields such as */30 * * * *"),
        check(_schedule_allowed, "write five fields such as */30 * * * *"),
    ] = Field("*/30 * * * *", description="Cron schedule of the drift check.")


class HealthSettings(Model):
    """Node health: the EKS node monitoring agent and the drift check."""

    node_monitoring_agent: StrictBool = Field(True, description="Install the EKS node monitoring agent add-on.")
    drift_check: DriftCheckSettings = Field(default_factory=DriftCheckSettings, description="Scheduled drift check.")

    @property
    def drift_check_enabled(self) -> bool:
        """Whether the drift check runs."""
        return self.drift_check.enabled

    @property
    def drift_check_schedule(self) -> str:
        """Cron schedule of the drift check."""
        return str(self.drift_check.schedule)


class EfaCheckSettings(Model):
    """The EFA bandwidth check across UltraServers."""

    enabled: StrictBool | None = Field(None, description="Deploy the check; default: on with 2 or more UltraServers.")
    ultraservers: StrictInt = Field(2, ge=2, description="UltraServers the check spans.")
    nodes_per_ultraserver: StrictInt = Field(1, ge=1, description="Nodes of each UltraServer in the check.")
    min_bus_bandwidth_gbps: StrictFloat | None = Field(
        None, gt=0, description="Minimum bus bandwidth (Gbps); default: derived from the EFA layout."
    )


class NcclCheckSettings(Model):
    """nccl-tests all_reduce_perf across one UltraServer's ComputeDomain with NCCL_MNNVL_ENABLE=1 and
    NCCL_NVLS_ENABLE=1 (GB200's multi-node NVLink), GPUs and EFA from the stack's device mode."""

    enabled: StrictBool = Field(False, description="Deploy the check (one MPIJob per UltraServer).")
    nodes: Annotated[
        StrictInt | None,
        BeforeValidator(all_nodes),
        WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 2, "maximum": MAX_NODES}, {"const": "all"}]}),
    ] = Field(
        None,
        ge=2,
        le=MAX_NODES,
        description=f'Nodes of each UltraServer the run spans (2 to {MAX_NODES}, or "all", default).',
    )
    min_bus_bandwidth_gbytes: StrictFloat = Field(
        600.0, gt=0, description="Minimum large-message all_reduce bus bandwidth in GB/s (nccl-tests' busbw unit)."
    )
