"""Device modes: how GPU nodes hand GPUs and EFA devices to pods (device plugins, or DRA drivers), and the DRA
driver's own objects the toolkit applies and verify looks for.

``plugins`` (the default, the EKS GB200 guide's setup): GPUs are the extended resource ``nvidia.com/gpu`` of the GPU
Operator's device plugin, EFA devices ``vpc.amazonaws.com/efa`` of the EFA device plugin; DRA serves only
ComputeDomain channels.

``dra``: the NVIDIA DRA driver publishes GPUs (DeviceClass ``gpu.nvidia.com``) and DRANET (chart ``aws-dranet``)
publishes EFA devices (DeviceClass ``efa.networking.k8s.aws``, driver ``dra.net``) as ResourceSlices; the device
plugins are off. EKS recommends DRA drivers for new deployments on 1.34+ with managed or self-managed node groups
(https://docs.aws.amazon.com/eks/latest/userguide/device-management.html and device-management-efa.html: "pairs EFA
interfaces with their topologically-local GPUs"; the EFA guide lists 1.34 as DRANET's minimum, the aws-dranet chart
README 1.35, which DRA_MIN_KUBERNETES follows), read 2026-11-25.

The PCIe-root attribute both drivers publish is the upstream standard one, named in
kubernetes/dynamic-resource-allocation v0.35.0 ``deviceattribute/attribute.go:32``
(``StandardDeviceAttributePrefix + "pcieRoot"``, prefix ``resource.kubernetes.io/``) and filled by
``GetPCIeRootAttributeByPCIBusID`` as a string such as ``pci0000:00`` (``deviceattribute/pci_linux.go:46-53``):
- NVIDIA: kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1 ``cmd/gpu-kubelet-plugin/nvlib.go:539-541`` computes it per
  GPU and ``cmd/gpu-kubelet-plugin/deviceinfo.go:183-184`` publishes it;
- DRANET: google/dranet v1.0.1 ``pkg/inventory/db.go:251-255`` sets it on every PCI network device (the AWS build in
  aws-dranet 1.0.0 is app v1.2.0-eksbuild.2; that its source matches upstream here is UNVERIFIED: AWS's fork was not
  stored).
Checked 2026-11-25.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ultraserver.arguments import checked
from ultraserver.facts.hardware import efa
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.kubernetes.scheduling import EFA_RESOURCE, GPU_RESOURCE
from ultraserver.facts.pins.charts import DRA_DRIVER, LEGACY_DRA_DRIVER_NAME, version_at_least
from ultraserver.problems import Problem

PLUGINS = "plugins"
DRA = "dra"
MODES = (PLUGINS, DRA)
DEFAULT_MODE = PLUGINS

DRA_MIN_KUBERNETES = "1.35"
"""Oldest minor DRA mode deploys: the aws-dranet 1.0.0 chart README's prerequisite ("Kubernetes 1.35+"); the NVIDIA
DRA driver 0.4.1 asks for 1.34.2+ (its prerequisites page), so DRANET decides."""

RESOURCE_API_VERSION = "resource.k8s.io/v1"
"""API of DRA-mode claim templates: DRA is GA there, as DRA mode needs 1.35 (``DRA_MIN_KUBERNETES``)."""

GPU_DEVICE_CLASS = "gpu.nvidia.com"
"""DeviceClass of whole GPUs (dra-driver-nvidia-gpu 0.4.1 chart, templates/deviceclass-gpu.yaml)."""
GPU_DRIVER = "gpu.nvidia.com"
"""Driver name in the GPU ResourceSlices (v0.4.1 cmd/gpu-kubelet-plugin/main.go:42)."""
EFA_DEVICE_CLASS = "efa.networking.k8s.aws"
"""DeviceClass the aws-dranet 1.0.0 chart creates (values.yaml deviceClass.name, templates/deviceclass.yaml)."""
EFA_DRIVER = "dra.net"
"""Driver name in DRANET's ResourceSlices (the chart's DeviceClass selects ``device.driver == "dra.net"``)."""
EFA_PCI_DEVICE = "Elastic Fabric Adapter (EFA)"
"""``dra.net/pciDevice`` of an EFA device (google/dranet v1.0.1 pkg/apis/attributes.go:31; the chart's filter)."""
PCIE_ROOT_ATTRIBUTE = "resource.kubernetes.io/pcieRoot"
"""The PCIe-root attribute both drivers publish (module docstring)."""

PLUGIN_RESOURCES = (GPU_RESOURCE, EFA_RESOURCE)
"""Extended resources of the device plugins; no DRA-mode node advertises them."""
EXTENDED_RESOURCE_MIN_KUBERNETES = "1.36"
"""First minor on which the scheduler serves an extended-resource request from a DeviceClass's
``extendedResourceName`` by default: feature gate DRAExtendedResource (KEP-5004) is alpha and off in 1.34 and 1.35,
beta and on from 1.36, GA in 1.37 (the versioned feature-gate table of kubernetes' scheduler features, read in a
stored copy of the kubernetes source at a 1.37 development commit, 2026-11-27; that EKS 1.36 keeps the upstream
default is UNVERIFIED)."""
DRA_EXTENDED_RESOURCES = {GPU_RESOURCE: GPU_DEVICE_CLASS}
"""Device-plugin resource names a DRA DeviceClass takes over: dra-driver-nvidia-gpu 0.4.1
``templates/deviceclass-gpu.yaml:12-14`` sets ``extendedResourceName: nvidia.com/gpu`` on gpu.nvidia.com whenever
the cluster serves resource.k8s.io/v1; aws-dranet 1.0.0 ``templates/deviceclass.yaml`` sets none for EFA."""


@checked()
@dataclass(frozen=True)
class DeviceMode:
    """The stack's device mode as one value: how its nodes hand GPUs and EFA devices to pods, on its cluster's minor.
    Derived once from the settings (``config.views.device_mode``) and handed whole to everything that depends on it:
    the charts' values, each check's workers and Kueue's quota and DeviceClass mappings."""

    name: Literal["plugins", "dra"] = "plugins"
    """PLUGINS or DRA (``kubernetes.devices``)."""
    kubernetes_version: str = eks_versions.DEFAULT_TEXT
    """The cluster's Kubernetes minor (``cluster.kubernetes_version``)."""

    def problems(self) -> list[Problem]:
        """A Kubernetes version that is no minor."""
        if eks_versions.is_minor(self.kubernetes_version):
            return []
        return [
            Problem(
                "DeviceMode.kubernetes_version",
                self.kubernetes_version,
                "a Kubernetes minor such as 1.35",
                "give the cluster's minor",
            )
        ]

    @property
    def dra(self) -> bool:
        """Whether GPUs and EFA devices are DRA devices (claimed), not device-plugin resources."""
        return self.name == DRA

    @property
    def claimed_classes(self) -> tuple[str, ...]:
        """The DeviceClasses the layer's jobs claim: a ComputeDomain channel always, every GPU and EFA device in DRA
        mode (builders/device_claims.py)."""
        return (CHANNEL_DEVICE_CLASS, *((GPU_DEVICE_CLASS, EFA_DEVICE_CLASS) if self.dra else ()))


DEFAULT_DEVICE_MODE = DeviceMode()
"""Device plugins on the default Kubernetes minor."""


def served_through_dra(resource: str, kubernetes_version: str | None) -> bool:
    """Whether a DRA-mode cluster of this minor serves a request for a device-plugin resource name through a
    DeviceClass (False when the minor is unknown)."""
    return resource in DRA_EXTENDED_RESOURCES and version_at_least(kubernetes_version, EXTENDED_RESOURCE_MIN_KUBERNETES)


def needs_newer_kubernetes(mode: str, version: str) -> bool:
    """Whether `mode` cannot run on Kubernetes `version`."""
    return mode == DRA and eks_versions.is_newer(DRA_MIN_KUBERNETES, version)


@dataclass(frozen=True)
class GpuEfaPair:
    """One GPU of a node and the EFA interfaces wired to it (same PCIe root, so NCCL keeps traffic local)."""

    gpu: int
    efa_cards: tuple[int, ...]


def pairing(instance_type: str, interfaces: Sequence[efa.EfaInterface]) -> tuple[GpuEfaPair, ...]:
    """Each GPU with the EFA interfaces of its card group.

    The catalog's ``efa_bandwidth_groups`` are one per GPU on p6e-gb200 (cards 1-4 serve GPU 0, 5-8 GPU 1, ...: EC2
    "EFA for P6e-GB200", the source in data/network_cards.json); that these cards share the GPU's PCIe root in sysfs
    is what the EKS EFA guide's "topology-aware pairing" relies on and is UNVERIFIED on hardware here. A type whose
    groups are not one per GPU gets no pairing (an empty tuple): its claims ask for GPUs and EFA without a constraint.
    """
    facts = efa.instance_facts(instance_type)
    groups = facts["efa_bandwidth_groups"]
    if len(groups) != facts["gpus"]:
        return ()
    efa_cards = [i.network_card_index for i in interfaces if i.interface_type in efa.EFA_TYPES]
    return tuple(
        GpuEfaPair(gpu, tuple(card for card in efa_cards if card in group["cards"])) for gpu, group in enumerate(groups)
    )


def gpus_per_node(instance_type: str) -> int:
    """GPUs of one node, from the instance catalog."""
    gpus: int = efa.instance_facts(instance_type)["gpus"]
    return gpus


@checked()
@dataclass(frozen=True)
class NodeDevices:
    """What one node offers through DRA: its GPUs and, per GPU, the EFA devices of its card group."""

    instance_type: str
    """The node's instance type (its allocatable CPU sizes a whole-node pod's request,
    facts/hardware/allocatable.py)."""
    gpus: int
    efa_per_gpu: tuple[int, ...]
    """EFA devices paired with GPU i; empty when the catalog gives no pairing for the type."""
    unpaired_efa: int = 0
    """EFA devices of no GPU's group (asked for without a constraint)."""

    @property
    def efa_devices(self) -> int:
        """EFA devices of the node."""
        return sum(self.efa_per_gpu) + self.unpaired_efa

    def gpus_only(self) -> NodeDevices:
        """The node's GPUs without its EFA devices (what a job that never leaves NVLink claims)."""
        return dataclasses.replace(self, efa_per_gpu=(), unpaired_efa=0)


def node_gpus(instance_type: str) -> NodeDevices:
    """The GPUs of one node without its EFA devices (what a job that never leaves NVLink uses)."""
    return NodeDevices(instance_type, gpus_per_node(instance_type), ())


def node_devices(instance_type: str, interfaces: Sequence[efa.EfaInterface]) -> NodeDevices:
    """GPUs and paired EFA devices of one node, from the instance catalog and the group's EFA layout."""
    per_gpu = tuple(len(p.efa_cards) for p in pairing(instance_type, interfaces))
    total = efa.summarize_layout(instance_type, interfaces).efa_devices
    return NodeDevices(instance_type, gpus_per_node(instance_type), per_gpu, total - sum(per_gpu))


def requests_plugin_resource(resources: dict[str, Any] | None) -> list[str]:
    """The device-plugin resources named in a container's requests or limits."""
    found: set[str] = set()
    for part in ("requests", "limits"):
        found |= {name for name in ((resources or {}).get(part) or {}) if name in PLUGIN_RESOURCES}
    return sorted(found)


# DRA driver for NVIDIA GPUs (dra-driver-nvidia-gpu 0.4.1) objects the toolkit applies, and verify looks for.
#
# Sources: kubernetes-sigs/dra-driver-nvidia-gpu at tag v0.4.1 (commit 764900e7),
# `deployments/helm/dra-driver-nvidia-gpu/templates/kubeletplugin.yaml:20` (DaemonSet `<name>-kubelet-plugin`) and
# `_helpers.tpl:5, 83-84` (`<name>` is `nameOverride` or the chart name; pod label `<name>-component: kubelet-plugin`),
# and the chart's DeviceClass templates (`compute-domain-daemon.nvidia.com`, `compute-domain-default-channel.nvidia.com`
# when `resources.computeDomains.enabled`). The toolkit sets `nameOverride` to the pre-0.4 chart name
# (facts/pins/charts.py LEGACY_DRA_DRIVER_NAME), so these names are the ones 25.x used.
DRA_DRIVER_NAMESPACE = LEGACY_DRA_DRIVER_NAME
"""Namespace the toolkit installs the DRA driver release into unless the stack overrides it."""
COMPUTE_DOMAIN_CRD = "computedomains.resource.nvidia.com"
"""The ComputeDomain CRD; its sibling ComputeDomainClique CRD arrived in 25.12 (facts/pins/manifests.py
DRA_DRIVER_CRDS)."""
COMPUTE_DOMAIN_DEVICE_CLASSES = ("compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com")
"""DeviceClasses the driver creates for ComputeDomains (the toolkit enables only ComputeDomains)."""
CHANNEL_DEVICE_CLASS = COMPUTE_DOMAIN_DEVICE_CLASSES[1]
"""The DeviceClass of a workload's ComputeDomain channel claim."""


def channel_claim_spec() -> dict[str, Any]:
    """The ResourceClaimSpec of the channel claim template the driver's controller creates for a ComputeDomain (one
    request "channel" of CHANNEL_DEVICE_CLASS, count defaulted to 1; the domain and allocation mode ride in opaque
    config): kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1 templates/compute-domain-workload-claim-template.tmpl.yaml
    lines 12-27, filled by cmd/compute-domain-controller/resourceclaimtemplate.go:364-392 (same template at v25.8.0).
    Kueue counts it per pod (facts/kubernetes/kueue_admission.py)."""
    return {"devices": {"requests": [{"name": "channel", "exactly": {"deviceClassName": CHANNEL_DEVICE_CLASS}}]}}


KUBELET_PLUGIN_SELECTOR = f"{LEGACY_DRA_DRIVER_NAME}-component=kubelet-plugin"
"""Label selector of the kubelet plugin pods (one per GPU node)."""


# What the pinned charts install, as a function of a release's values: the rehearsal serves these without running
# Helm (tests/rehearse/test_charted.py renders the packaged charts with a real Helm and holds each rule to them).
def _enabled(values: Mapping[str, Any], *path: str, default: bool = False) -> bool:
    node: Any = values
    for part in path:
        node = node.get(part) if isinstance(node, Mapping) else None
    return default if node is None else bool(node)


def dra_driver_device_classes(values: Mapping[str, Any]) -> tuple[str, ...]:
    """DeviceClasses the DRA driver chart 0.4.1 creates: its deviceclass-*.yaml templates, each under
    `resources.computeDomains.enabled` (the two ComputeDomain classes) or `resources.gpus.enabled` (gpu, mig,
    vfio.gpu); both default to true in its values.yaml."""
    found: tuple[str, ...] = ()
    if _enabled(values, "resources", "computeDomains", "enabled", default=True):
        found += COMPUTE_DOMAIN_DEVICE_CLASSES
    if _enabled(values, "resources", "gpus", "enabled", default=True):
        found += (GPU_DEVICE_CLASS, "mig.nvidia.com", "vfio.gpu.nvidia.com")
    return found


def dranet_device_classes(values: Mapping[str, Any]) -> tuple[str, ...]:
    """The DeviceClass the aws-dranet 1.0.0 chart creates: templates/deviceclass.yaml under `deviceClass.create`
    (values.yaml: true), named `deviceClass.name` (values.yaml: EFA_DEVICE_CLASS)."""
    if not _enabled(values, "deviceClass", "create", default=True):
        return ()
    return (str((values.get("deviceClass") or {}).get("name") or EFA_DEVICE_CLASS),)


def kubelet_plugin_pods(
    values: Mapping[str, Any], release: str, release_namespace: str
) -> tuple[str, dict[str, str]] | None:
    """(namespace, pod labels) of the DRA driver chart 0.4.1's kubelet plugin DaemonSet; None when the chart renders
    none (templates/kubeletplugin.yaml: only with ComputeDomains or GPUs enabled). Its pods carry
    `app.kubernetes.io/name` and `app.kubernetes.io/instance` (templateLabels) and `<name>-component: kubelet-plugin`,
    or `selectorLabelsOverride` instead (_helpers.tpl selectorLabels); `<name>` is `nameOverride` or the chart name, the
    namespace `namespaceOverride` or the release's."""
    if not (
        _enabled(values, "resources", "computeDomains", "enabled", default=True)
        or _enabled(values, "resources", "gpus", "enabled", default=True)
    ):
        return None
    name = str(values.get("nameOverride") or DRA_DRIVER)[:63].rstrip("-")
    selector = values.get("selectorLabelsOverride") or {f"{name}-component": "kubelet-plugin"}
    labels = {"app.kubernetes.io/name": name, "app.kubernetes.io/instance": release}
    labels.update({str(k): str(v) for k, v in selector.items()})
    return str(values.get("namespaceOverride") or release_namespace), labels
