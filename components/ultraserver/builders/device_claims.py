"""ResourceClaimTemplates of DRA mode: a whole GB200 node's GPUs and EFA devices, or some GPUs each with its own EFA
devices.

A whole-node claim asks for every GPU and every EFA device of the node by count, without a constraint: it takes all of
them, so no constraint can pick better devices, and a ``matchAttribute`` on the PCIe root could only make it
unsatisfiable should GPUs and EFA devices not share roots on this hardware (UNVERIFIED either way;
docs/device-modes.md).
A claim of part of a node (``gpus`` below the node's) pairs each GPU with the EFA devices of its card group under a
``matchAttribute`` constraint on the PCIe root (facts/hardware/devices.py names the attribute and where both drivers
publish
it): there the constraint is what keeps a rank's GPU next to the NICs it sends through. Kueue counts each ExactCount
request by its DeviceClass (facts/kubernetes/kueue_admission.py), so a claim counts as its GPUs and EFA devices.
"""

from __future__ import annotations

from typing import Any

from ultraserver.facts.hardware import allocatable, devices
from ultraserver.facts.hardware.devices import NodeDevices
from ultraserver.problems import ConfigError, Problem

GPU_REQUEST = "gpu-{}"
EFA_REQUEST = "efa-{}"
POD_CLAIM_NAME = "devices"
"""Name of the claim in the pod's ``resourceClaims`` and each container's ``resources.claims``."""


def _request(name: str, device_class: str, count: int) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": count}}


def claim_spec(node: NodeDevices, gpus: int | None = None) -> dict[str, Any]:
    """The ResourceClaimSpec for `gpus` GPUs of the node (default: the whole node, its GPUs and EFA devices by count);
    fewer GPUs each come with the EFA devices on their PCIe root."""
    wanted = node.gpus if gpus is None else gpus
    if isinstance(wanted, bool) or not isinstance(wanted, int) or not 1 <= wanted <= node.gpus:
        raise ConfigError(Problem("gpus", gpus, f"1 to {node.gpus}, the GPUs of one node", f"give 1 to {node.gpus}"))
    if wanted == node.gpus or len(node.efa_per_gpu) != node.gpus:
        requests = [_request("gpus", devices.GPU_DEVICE_CLASS, wanted)]
        if wanted == node.gpus and node.efa_devices:
            requests.append(_request("efa", devices.EFA_DEVICE_CLASS, node.efa_devices))
        return {"devices": {"requests": requests}}
    requests, constraints = [], []
    for gpu in range(wanted):
        requests.append(_request(GPU_REQUEST.format(gpu), devices.GPU_DEVICE_CLASS, 1))
        if node.efa_per_gpu[gpu]:
            requests.append(_request(EFA_REQUEST.format(gpu), devices.EFA_DEVICE_CLASS, node.efa_per_gpu[gpu]))
            pair = [GPU_REQUEST.format(gpu), EFA_REQUEST.format(gpu)]
            constraints.append({"requests": pair, "matchAttribute": devices.PCIE_ROOT_ATTRIBUTE})
    spec: dict[str, Any] = {"devices": {"requests": requests}}
    if constraints:
        spec["devices"]["constraints"] = constraints
    return spec


def claim_template(name: str, namespace: str, node: NodeDevices, gpus: int | None = None) -> dict[str, Any]:
    """A ResourceClaimTemplate each pod of a job instantiates into its own claim for its node's devices (`gpus`:
    part of the node, see claim_spec; default the whole node)."""
    return {
        "apiVersion": devices.RESOURCE_API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": claim_spec(node, gpus)},
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
    (facts/hardware/allocatable.py). Empty for a type without a known vCPU count (the policy rule kueue-tas-placement
    then
    refuses the job)."""
    share = allocatable.whole_node_cpu_millicores(node.instance_type)
    return {} if share is None else {"cpu": str(share // allocatable.MILLICORES_PER_CORE)}


def whole_node_resources(node: NodeDevices, *claims: dict[str, str]) -> dict[str, Any]:
    """A whole-node container's ``resources``: the CPU share (whole_node_requests), the given claims (e.g. a
    ComputeDomain channel) and the node's devices."""
    requests = whole_node_requests(node)
    return {**({"requests": requests} if requests else {}), "claims": [*claims, container_claim()]}
