"""A job's DRA-mode ResourceClaimTemplate as a Kubernetes object (builders/device_claims.py builds it)."""

from __future__ import annotations

from typing import Protocol

import pulumi

from ultraserver.builders.device_claims import claim_template
from ultraserver.facts.hardware.devices import DeviceMode, NodeDevices
from ultraserver.resources.replaced_resource import custom_resource


class ClaimingJob(Protocol):
    """A check job whose workers claim their node's devices in DRA mode (IMEX, EFA and NCCL checks)."""

    @property
    def claim_template_name(self) -> str: ...

    @property
    def namespace(self) -> str: ...

    @property
    def node_devices(self) -> NodeDevices: ...

    @property
    def mode(self) -> DeviceMode: ...


def claim_template_resource(name: str, job: ClaimingJob, opts: pulumi.ResourceOptions) -> list[pulumi.Resource]:
    """The workers' template (none in plugins mode, where they request device-plugin resources), to be created before
    the job's pods."""
    if not job.mode.dra:
        return []
    return [custom_resource(name, claim_template(job.claim_template_name, job.namespace, job.node_devices), opts)]
