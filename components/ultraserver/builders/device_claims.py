"""ResourceClaimTemplates of DRA mode: a whole GB200 node's GPUs, each paired with its own EFA devices.

One request per GPU and one per GPU's EFA devices, with a ``matchAttribute`` constraint on the PCIe root per pair
(facts/devices.py names the attribute and where both drivers publish it). One constraint over all requests would
ask for 4 GPUs under a single PCIe root, which a GB200 node does not have; a pair per GPU asks for what NCCL needs:
each rank's GPU next to the NICs it sends through. Kueue counts each ExactCount request by its DeviceClass
(facts/kueue_admission.py), so a claim counts as the node's GPUs and EFA devices.
"""

from __future__ import annotations

from typing import Any

from ultraserver.facts import allocatable, devices
from ultraserver.facts.devices import NodeDevices

GPU_REQUEST = "gpu-{}"
EFA_REQUEST = "efa-{}"
POD_CLAIM_NAME = "devices"
"""Name of the claim in the pod's ``resourceClaims`` and each container's ``resources.claims``."""


def _request(name: str, device_class: str, count: int) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}}


def claim_spec(node: NodeDevices) -> dict[str, Any]:
    """The ResourceClaimSpec for a whole node: its GPUs, each with its EFA devices on the same PCIe root."""
    requests: list[dict[str, Any]] = []
    constraints: list[dict[str, Any]] = []
    paired = len(node.efa_per_gpu) == node.gpus
    for gpu in range(node.gpus if paired else 0):
        requests.append(_request(GPU_REQUEST.format(gpu), devices.GPU_DEVICE_CLASS, 1))
        count = node.efa_per_gpu[gpu]
        if count:
            requests.append(_request(EFA_REQUEST.format(gpu), devices.EFA_DEVICE_CLASS, count))
            constraints.append(
                {
                    "requests": [GPU_REQUEST.format(gpu), EFA_REQUEST.format(gpu)],
                    "matchAttribute": devices.PCIE_ROOT_ATTRIBUTE,
                }
            )
    if not paired:
        requests.append(_request("gpus", devices.GPU_DEVICE_CLASS, node.gpus))
    unpaired = node.unpaired_efa if paired else node.efa_devices
    if unpaired:
        requests.append(_request("efa", devices.EFA_DEVICE_CLASS, unpaired))
    spec: dict[str, Any] = {"devices": {"requests": requests}}
    if constraints:
        spec["devices"]["constraints"] = constraints
    return spec


def claim_template(name: str, namespace: str, node: NodeDevices) -> dict[str, Any]:
    """A ResourceClaimTemplate each pod of a job instantiates into its own claim for its node's devices."""
    return {
        "apiVersion": devices.RESOURCE_API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": claim_spec(node)},
    }


def pod_claim(template_name: str) -> dict[str, Any]:
    """Entry for pod ``spec.resourceClaims``."""
    return {"name": POD_CLAIM_NAME, "resourceClaimTemplateName": template_name}


def container_claim() -> dict[str, str]:
    """Entry for a container's ``resources.claims``."""
    return {"name": POD_CLAIM_NAME}


def whole_node_requests(node: NodeDevices) -> dict[str, str]:
    """Requests of the one container of a pod that claims the whole node: a CPU share above half the node's
    allocatable, so Kueue's topology-aware placement, which does not see claims, fits one such pod per node
    (facts/allocatable.py). Empty for a type without a known vCPU count (the policy rule kueue-tas-placement then
    refuses the job)."""
    share = allocatable.whole_node_cpu_millicores(node.instance_type)
    return {} if share is None else {"cpu": str(share // allocatable.MILLICORES_PER_CORE)}


def whole_node_resources(node: NodeDevices, *claims: dict[str, str]) -> dict[str, Any]:
    """A whole-node container's ``resources``: the CPU share (whole_node_requests), the given claims (e.g. a
    ComputeDomain channel) and the node's devices."""
    requests = whole_node_requests(node)
    return {**({"requests": requests} if requests else {}), "claims": [*claims, container_claim()]}
