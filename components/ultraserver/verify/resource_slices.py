"""The ResourceSlice check of DRA mode: each GPU node publishes its GPUs and EFA devices, paired by PCIe root.

Read from ``resource.k8s.io/v1`` ResourceSlices (``spec.driver``, ``spec.nodeName``, ``spec.devices[].attributes``;
an attribute name without a domain is in the driver's own domain, as the API documents for DeviceAttribute names).
The NVIDIA driver publishes a whole GPU with ``type: gpu`` (dra-driver-nvidia-gpu v0.4.1
cmd/gpu-kubelet-plugin/deviceinfo.go:153) and DRANET an EFA device with ``dra.net/pciDevice`` "Elastic Fabric
Adapter (EFA)" (google/dranet v1.0.1 pkg/apis/attributes.go:31, pkg/inventory/db.go:240-242); both put the PCIe
root in ``resource.kubernetes.io/pcieRoot`` (facts/hardware/devices.py).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ultraserver.facts.hardware import devices
from ultraserver.facts.hardware.devices import NodeDevices
from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL
from ultraserver.problems import WARNING, Problem
from ultraserver.verify.clients import ClusterError, Node
from ultraserver.verify.expect import NodeGroupExpectation
from ultraserver.verify.verdict import RESOURCE_SLICES, Verdict, api_problem


@dataclass(frozen=True)
class PublishedDevice:
    """One device of a node's ResourceSlices, reduced to what the check compares."""

    driver: str
    name: str
    kind: str
    """'gpu', 'efa' or '' (anything else the drivers publish)."""
    pcie_root: str


def _attribute(driver: str, attributes: Mapping[str, Any], name: str) -> Any:
    """The value of an attribute given by its qualified name, whether the slice qualifies it or not."""
    domain, _, short = name.rpartition("/")
    raw = attributes.get(name, attributes.get(short) if domain == driver else None)
    if not isinstance(raw, Mapping):
        return None
    return next(iter(raw.values()), None)


def published_devices(slices: Iterable[Mapping[str, Any]]) -> dict[str, list[PublishedDevice]]:
    """Node name -> the GPUs and EFA devices its ResourceSlices publish."""
    found: dict[str, list[PublishedDevice]] = defaultdict(list)
    for item in slices:
        spec = item.get("spec") or {}
        driver, node = str(spec.get("driver") or ""), str(spec.get("nodeName") or "")
        for device in spec.get("devices") or []:
            attributes = device.get("attributes") or {}
            kind = ""
            if driver == devices.GPU_DRIVER and _attribute(driver, attributes, f"{driver}/type") == "gpu":
                kind = "gpu"
            elif driver == devices.EFA_DRIVER and (
                _attribute(driver, attributes, f"{driver}/pciDevice") == devices.EFA_PCI_DEVICE
            ):
                kind = "efa"
            root = _attribute(driver, attributes, devices.PCIE_ROOT_ATTRIBUTE)
            found[node].append(PublishedDevice(driver, str(device.get("name")), kind, str(root or "")))
    return found


def node_problems(node: str, published: list[PublishedDevice], expected: NodeDevices) -> list[Problem]:
    """What one node's ResourceSlices lack: GPUs, EFA devices, and EFA devices on each GPU's PCIe root."""
    where = f"node {node} ResourceSlices"
    gpus = [d for d in published if d.kind == "gpu"]
    efas = [d for d in published if d.kind == "efa"]
    found = []
    if len(gpus) != expected.gpus:
        found.append(
            Problem(
                f"{where} ({devices.GPU_DRIVER})",
                f"{len(gpus)} GPUs",
                f"{expected.gpus} whole GPUs (type gpu)",
                "check the DRA driver's kubelet plugin on the node (resources.gpus.enabled) and nvidia-smi there",
            )
        )
    if len(efas) != expected.efa_devices:
        found.append(
            Problem(
                f"{where} ({devices.EFA_DRIVER})",
                f"{len(efas)} EFA devices",
                f"{expected.efa_devices} (the EFA devices of the group's layout)",
                "check the DRANET pod on the node (kubectl -n kube-system get pods -l app=aws-dranet -o wide) and "
                "the instance's EFA interfaces",
            )
        )
    if len(gpus) == expected.gpus and len(expected.efa_per_gpu) == expected.gpus:
        per_root = Counter(d.pcie_root for d in efas)
        seen = sorted(per_root.get(g.pcie_root, 0) for g in gpus if g.pcie_root)
        if seen != sorted(expected.efa_per_gpu):
            by_gpu = ", ".join(f"{g.name}@{g.pcie_root or '?'}: {per_root.get(g.pcie_root, 0)}" for g in gpus)
            # A warning: whole-node claims take every device without a PCIe-root constraint; only a claim of part of
            # a node (device_claims.claim_spec with gpus) pairs GPUs with EFA devices and cannot be allocated here.
            found.append(
                Problem(
                    f"{where} {devices.PCIE_ROOT_ATTRIBUTE}",
                    by_gpu,
                    f"EFA devices per GPU's PCIe root {list(expected.efa_per_gpu)} (the layout's card groups)",
                    "whole-node claims are unaffected; claims of part of a node, which pair each GPU with its EFA "
                    "devices, cannot be allocated here: check both drivers publish resource.kubernetes.io/pcieRoot "
                    "(DRANET logs 'Could not get pci root attribute' otherwise), or claim whole nodes",
                    WARNING,
                )
            )
    return found


def resource_slice_verdict(
    group: NodeGroupExpectation, nodes: list[Node], slices: list[dict[str, Any]] | ClusterError
) -> Verdict:
    """The group's GPU nodes each publish the GPUs and paired EFA devices its layout gives."""
    expected = group.node_devices
    if isinstance(slices, ClusterError):
        return Verdict(group.name, RESOURCE_SLICES, "ResourceSlices not readable", (api_problem("slices", slices),))
    members = sorted(n.name for n in nodes if n.labels.get(ULTRASERVER_LABEL) == group.name)
    published = published_devices(slices)
    problems = tuple(p for name in members for p in node_problems(name, published.get(name, []), expected))
    evidence = (
        f"{len(members)} nodes; expected per node {expected.gpus} GPUs and {expected.efa_devices} EFA devices "
        f"({'/'.join(map(str, expected.efa_per_gpu)) or 'unpaired'} per GPU's PCIe root)"
    )
    return Verdict(group.name, RESOURCE_SLICES, evidence, problems)
