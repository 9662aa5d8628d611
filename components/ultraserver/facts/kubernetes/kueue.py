"""Kueue 0.19.2 (kubernetes-sigs/kueue tag v0.19.2, commit 8eab6877): API version, labels and annotations the
toolkit writes, and the Topology levels of a GB200 cluster.

Sources (at that tag): the CRDs config/components/crd/bases/kueue.x-k8s.io_*.yaml (v1beta1 and v1beta2 served,
v1beta2 stored); the TAS annotations in keps/2724-topology-aware-scheduling/README.md and
https://kueue.sigs.k8s.io/docs/tasks/run/topology_aware_scheduling/ (Topology Aware Scheduling is beta and on by
default since v0.14); the queue label in https://kueue.sigs.k8s.io/docs/tasks/run/jobs/.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL, ULTRASERVER_LABEL
from ultraserver.facts.pins.charts import KUEUE, version_at_least

API_GROUP = "kueue.x-k8s.io"
API_VERSION = f"{API_GROUP}/v1beta2"
"""The storage version at 0.19.2; the toolkit writes its objects in it."""
NAMESPACE = "kueue-system"
"""Namespace of the Kueue controller (the chart README installs it there)."""
QUEUE_NAME_LABEL = f"{API_GROUP}/queue-name"
"""On a job: the LocalQueue (in the job's namespace) it is submitted to. Without it Kueue leaves the job alone
(manageJobsWithoutQueueName is false in the chart's default configuration)."""
PRIORITY_CLASS_LABEL = f"{API_GROUP}/priority-class"
"""On a job: the WorkloadPriorityClass whose ``value`` becomes its Workload's priority (WorkloadPriorityClassLabel,
pkg/controller/constants/constants.go at v0.19.2). A BestEffortFIFO ClusterQueue orders its pending Workloads by
priority, higher first, and only then by their queue-order timestamp (baseCompareFunc, pkg/cache/queue/
cluster_queue.go at v0.19.2). A ClusterQueue's ``preemption.withinClusterQueue`` defaults to ``Never``
(config/components/crd/bases/kueue.x-k8s.io_clusterqueues.yaml at v0.19.2): a higher priority takes the next free
place in the queue and stops no running job."""
# waitForPodsReady, Kueue's own: at v0.19.2 it is on unless the DisableWaitForPodsReady gate is set
# (pkg/util/waitforpodsready/waitforpodsready.go: enabled when the struct is non-nil; apis/config/v1beta2/defaults.go
# fills an empty one), with timeout 30m (DefaultWaitForPodsReadyTimeout), recoveryTimeout = timeout, blockAdmission
# false, requeued by Eviction time with a 60 s backoff base, 3600 s at most, and no limit on the retries. The toolkit
# sets its own (builders/kueue.py WAIT_FOR_PODS_READY).
WORKLOAD_ANNOTATION = f"{API_GROUP}/workload"
"""On a pod placed by topology-aware scheduling: the name of its Workload (WorkloadAnnotation,
apis/kueue/v1beta2/topology_types.go; set on every pod set's template while TAS is on, getPodSetsInfoFromStatus in
pkg/controller/jobframework/reconciler.go, both at v0.19.2). The reclaim drain finds a job's other pods by it."""
PODSET_REQUIRED_TOPOLOGY = f"{API_GROUP}/podset-required-topology"
"""On a pod template: every pod of the pod set must land in one domain of this level, or the job waits."""
PODSET_PREFERRED_TOPOLOGY = f"{API_GROUP}/podset-preferred-topology"
"""On a pod template: one domain of this level if it fits, else the next level up, else spread."""
PODSET_TOPOLOGY_ANNOTATIONS = (PODSET_REQUIRED_TOPOLOGY, PODSET_PREFERRED_TOPOLOGY)
"""Either makes a pod set topology-aware (placed by TAS)."""
MPIJOB_FRAMEWORK = "kubeflow.org/mpijob"
"""Kueue integration name of the MPI operator's MPIJob (in the chart's default frameworks at 0.19.2)."""
# DRA claims. At 0.19.2 Kueue counts ResourceClaimTemplates by DeviceClass: KueueDRAIntegration (renamed from
# DynamicResourceAllocation in 0.18) is Beta and ON by default since 0.18, and so is
# KueueDRARejectWorkloadsWhenDRADisabled (pkg/features/kube_features.go:745-755 at v0.19.2). A queued pod set whose
# claim template uses a DeviceClass missing from resources.deviceClassMappings is inadmissible (pkg/dra/claims.go:217);
# with the integration gate off, the reject gate refuses any workload with a DRA claim
# (pkg/controller/core/workload_controller.go:431-434). Every job the toolkit queues claims a ComputeDomain channel, so
# on Kubernetes 1.34+ the Configuration maps the channel class and the ClusterQueue holds quota for it, and on 1.33
# (no resource.k8s.io/v1, which Kueue reads claims through; its DRA page asks for 1.34+) both gates are off, so the
# claims cost no quota and GPUs count through the device plugin's nvidia.com/gpu. facts/kubernetes/kueue_admission.py
# replays
# the decision over the plan.
DRA_FEATURE_GATES = ("KueueDRAIntegration", "KueueDRARejectWorkloadsWhenDRADisabled")
"""The gates that decide whether Kueue counts or refuses DRA claims (both on by default at 0.19.2)."""
DRA_MIN_KUBERNETES = eks_versions.DRA_GA_TEXT
"""Kueue's DRA support needs Kubernetes 1.34 or later, where DRA is GA (site/content/en/docs/tasks/manage/setup_dra.md
line 24 at v0.19.2); Kueue reads claims through resource.k8s.io/v1."""


def counts_dra_claims(kubernetes_version: str) -> bool:
    """Whether Kueue counts DRA claims on this Kubernetes minor (1.34+), rather than running with its DRA gates off."""
    return version_at_least(kubernetes_version, DRA_MIN_KUBERNETES)


def feature_gates(kubernetes_version: str) -> dict[str, bool]:
    """The Configuration's featureGates: none on 1.34+ (the defaults count claims), both DRA gates off below it."""
    return {} if counts_dra_claims(kubernetes_version) else {gate: False for gate in DRA_FEATURE_GATES}


def quota_resource(device_class: str) -> str:
    """The quota resource a DeviceClass counts as: its first DNS label under the rest of its name as prefix
    (gpu.nvidia.com -> nvidia.com/gpu, the same name the device plugin's GPUs have). A mapping name must be a
    qualified name: an optional DNS subdomain prefix and a DNS label (apis/config/v1beta2/configuration_types.go
    lines 637-644 at v0.19.2)."""
    label, _, domain = device_class.partition(".")
    return f"{domain}/{label}" if domain else label


EXCLUDED_RESOURCE_PREFIXES = ("cpu", "memory", "ephemeral-storage")
"""Resources Kueue leaves out of quota (Configuration resources.excludeResourcePrefixes). Kueue keeps a job pending
with "resource cpu unavailable in ClusterQueue" when a pod requests a resource no resource group covers
(pkg/scheduler/flavorassigner at the tag), and GB200 jobs take whole nodes, so GPUs and EFA devices are the quota."""
REQUIRED_INTEGRATIONS = ("batch/job", MPIJOB_FRAMEWORK)
"""Integrations the toolkit's jobs need: the example's batch Job and the fabric checks' MPIJobs. The toolkit enables
only these (see below)."""
# Webhooks fail closed. The chart registers a webhook for every integration Kueue knows (enabled or not); the ones
# for jobs, MPIJobs, pods, Deployments and StatefulSets get the namespaceSelector of managedJobsNamespaceSelector
# (default: every namespace but kube-system and Kueue's own), the pod, Deployment and StatefulSet webhooks are
# failurePolicy Fail only when their integration is enabled and Ignore otherwise, the others are always Fail
# (hack/processing-plan.yaml, the generator of charts/kueue/templates/webhook/manifests.yaml, in kubernetes-sigs/kueue
# near v0.19). With the chart's default frameworks (pod, deployment, statefulset, ...) a Kueue outage would stop
# every pod creation outside kube-system and kueue-system: GPU Operator and DRA driver daemons (ComputeDomain daemons
# included) on new GPU nodes. Hence only REQUIRED_INTEGRATIONS, and the stack's own namespaces left out of
# managedJobsNamespaceSelector.
FAIL_CLOSED_POD_FRAMEWORKS = ("pod", "deployment", "statefulset")
"""Integrations whose enabling turns the chart's pod, Deployment and StatefulSet webhooks from Ignore to Fail."""
PROHIBITED_NAMESPACE = "kube-system"
"""Kueue refuses a managedJobsNamespaceSelector that matches kube-system or its own namespace (pkg/config/validation.go
validateManagedJobsNamespaceSelector); its default selector leaves both out (apis/config/v1beta2/defaults.go)."""
CONFIG_VALUE = "managerConfig.controllerManagerConfigYaml"
"""Chart value holding Kueue's Configuration as one YAML string (integrations.frameworks lives in it)."""
EXEMPT_ANNOTATION = "ultraserver.io/kueue-exempt"
"""The toolkit's own annotation on a multi-node GPU job that bypasses Kueue on purpose; the value says why. The
policy rule gb200-multi-node-job-placement accepts such a job without a queue name or ComputeDomain claim."""
HOSTNAME_LABEL = "kubernetes.io/hostname"
"""Well-known node label; Kueue allows it only as the lowest Topology level."""

# Levels from the top. The UltraServer label is set by the toolkit on every GPU node (one node group per UltraServer,
# so one value per NVLink domain for managed groups); the clique label comes from GPU Feature Discovery once Fabric
# Manager is up (several cliques can exist inside one UltraServer); the hostname lets Kueue place pods per node.
#
# AWS's topology.k8s.aws/network-node-layer-N labels (EKS user guide, ml-workload-topology.html) are left out on
# purpose: every node of a TAS flavor must carry every level's label (Kueue "Topology" concepts page), AWS sources
# disagree whether P6e-GB200 nodes get 3 or 4 layers (EC2 instance-topology prerequisites vs. the AWS Containers
# blog on DRA with P6e-GB200), and they are set by cloud-provider-aws, not by the toolkit's NodeConfig, so a level
# that a node lacks would take that node out of Kueue's placement. Jobs that span UltraServers go over EFA either
# way; adding the layers above the UltraServer level is a later, verified change.
TOPOLOGY_LEVELS: tuple[str, ...] = (ULTRASERVER_LABEL, CLIQUE_LABEL, HOSTNAME_LABEL)


@cache
def default_configuration() -> dict[str, Any]:
    """Kueue's Configuration as the pinned chart ships it (managerConfig.controllerManagerConfigYaml, derived into
    data/chart_keys.json by scripts/regen_upstream_fixtures.py). A fresh copy is made by each caller that edits it."""
    raw = json.loads(resources.files("ultraserver.facts").joinpath("data/chart_keys.json").read_text())
    config: dict[str, Any] = raw["charts"][KUEUE]["defaultConfiguration"]
    return config
