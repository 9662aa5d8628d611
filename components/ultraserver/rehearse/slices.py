"""ResourceSlices as the two DRA drivers publish them on a GB200 node (resource.k8s.io/v1 objects).

Shapes read at the pinned sources:
- NVIDIA (kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1): driver ``gpu.nvidia.com`` (cmd/gpu-kubelet-plugin/main.go:42),
  devices ``gpu-<minor>`` (deviceinfo.go:106-107) with unqualified ``type``/``uuid``/``productName``... attributes
  (deviceinfo.go:150-178) and the standard ``resource.kubernetes.io/pcieRoot`` and ``pciBusID`` (deviceinfo.go:180-185);
- DRANET (google/dranet v1.0.1): driver ``dra.net``, devices named ``pci-<address with - for : and .>``
  (pkg/names/names.go:32,60-65) with ``dra.net/...`` attributes (pkg/apis/attributes.go:24-47) and the standard PCIe
  root (pkg/inventory/db.go:251-255). The ENA primary is published too (the chart's filter keeps only EFA devices for
  allocation); the check must ignore it.
The PCIe root values (one root complex per GPU and its card group) are illustrative, in the kernel's pciDDDD:BB form.
"""

from __future__ import annotations

from typing import Any

from ultraserver.facts.hardware.devices import EFA_DRIVER, EFA_PCI_DEVICE, GPU_DRIVER, PCIE_ROOT_ATTRIBUTE, NodeDevices


def _root(gpu: int) -> str:
    return f"pci{gpu + 8:04x}:00"


def gpu_slice(node: str, gpus: int, roots: list[str] | None = None) -> dict[str, Any]:
    """The NVIDIA driver's slice of one node."""
    devices = []
    for minor in range(gpus):
        root = (roots or [_root(g) for g in range(gpus)])[minor]
        devices.append(
            {
                "name": f"gpu-{minor}",
                "attributes": {
                    "type": {"string": "gpu"},
                    "uuid": {"string": f"GPU-{minor:08x}-0000-0000-0000-000000000000"},
                    "productName": {"string": "NVIDIA GB200"},
                    "architecture": {"string": "Blackwell"},
                    "driverVersion": {"version": "580.159.3"},
                    "resource.kubernetes.io/pciBusID": {"string": f"{root[3:7]}:01:00.0"},
                    PCIE_ROOT_ATTRIBUTE: {"string": root},
                },
                "capacity": {"memory": {"value": "189471Mi"}},
            }
        )
    return _slice(node, GPU_DRIVER, devices)


def efa_slice(node: str, per_gpu: tuple[int, ...], ena: bool = True) -> dict[str, Any]:
    """DRANET's slice of one node: `per_gpu[i]` EFA devices under GPU i's PCIe root, and the ENA primary."""
    devices = []
    for gpu, count in enumerate(per_gpu):
        root = _root(gpu)
        for index in range(count):
            address = f"{root[3:7]}:{index + 2:02x}:00.0"
            devices.append(_net_device(address, root, EFA_PCI_DEVICE, f"rdmap{gpu}s{index}"))
    if ena:
        devices.append(_net_device("0000:00:05.0", "pci0000:00", "Elastic Network Adapter (ENA)", "ens5"))
    return _slice(node, EFA_DRIVER, devices)


def _net_device(address: str, root: str, product: str, interface: str) -> dict[str, Any]:
    return {
        "name": "pci-" + address.replace(":", "-").replace(".", "-"),
        "attributes": {
            "dra.net/pciAddress": {"string": address},
            "dra.net/pciVendor": {"string": "Amazon.com, Inc."},
            "dra.net/pciDevice": {"string": product},
            "dra.net/ifName": {"string": interface},
            "dra.net/numaNode": {"int": 0},
            PCIE_ROOT_ATTRIBUTE: {"string": root},
        },
    }


def _slice(node: str, driver: str, devices: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}-abcde"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def node_slices(node: str, expected: NodeDevices) -> list[dict[str, Any]]:
    """Both drivers' slices of a healthy node."""
    return [gpu_slice(node, expected.gpus), efa_slice(node, expected.efa_per_gpu)]
