"""Add a ComputeDomain and a multi-node PyTorch job to a cluster made by the ultraserver-eks project."""

from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s
from training_job import (
    TrainingJob,
    compute_domain_args,
    device_claim_template,
    job_manifest,
    local_queue,
    namespace_manifest,
    script_config_map,
    service_manifest,
)
from ultraserver import ComputeDomain

config = pulumi.Config()
# Unset keys keep the dataclass defaults (class attributes of TrainingJob).
job = TrainingJob(
    ultraserver=config.require("ultraserver"),
    workers=config.require_int("workers"),
    name=config.get("jobName") or TrainingJob.name,
    namespace=config.get("namespace") or TrainingJob.namespace,
    image=config.get("image") or TrainingJob.image,
    efa_devices=config.get_int("efaDevices", TrainingJob.efa_devices),
    devices=config.get("devices") or TrainingJob.devices,
    efa_layout=config.get("efaLayout") or TrainingJob.efa_layout,
    queue_name=config.get("queueName", TrainingJob.queue_name),
)
manifest = job_manifest(job)

cluster = pulumi.StackReference(config.require("clusterStack"))
provider = k8s.Provider("cluster", kubeconfig=cluster.get_output("kubeconfig"))
on_cluster = pulumi.ResourceOptions(provider=provider)

namespace = k8s.core.v1.Namespace("namespace", metadata=namespace_manifest(job)["metadata"], opts=on_cluster)
in_namespace = pulumi.ResourceOptions(provider=provider, depends_on=[namespace])
domain = ComputeDomain(
    "compute-domain", compute_domain_args(job), pulumi.ResourceOptions(providers=[provider], depends_on=[namespace])
)
script = script_config_map(job, (Path(__file__).parent / "train.py").read_text())
config_map = k8s.core.v1.ConfigMap("script", metadata=script["metadata"], data=script["data"], opts=in_namespace)
service = service_manifest(job)
headless = k8s.core.v1.Service("rendezvous", metadata=service["metadata"], spec=service["spec"], opts=in_namespace)
queued: list[pulumi.Resource] = []
if job.queue_name and config.get_bool("createLocalQueue", True):
    # The namespace's LocalQueue (skip it with createLocalQueue: false when the cluster stack lists the namespace in
    # kubernetes.kueue.localQueueNamespaces and so already made it).
    queue = local_queue(job)
    queued.append(
        k8s.apiextensions.CustomResource(
            "queue",
            api_version=queue["apiVersion"],
            kind=queue["kind"],
            metadata=queue["metadata"],
            spec=queue["spec"],
            opts=in_namespace,
        )
    )
devices = device_claim_template(job)
if devices is not None:
    queued.append(
        k8s.apiextensions.CustomResource(
            "devices",
            api_version=devices["apiVersion"],
            kind=devices["kind"],
            metadata=devices["metadata"],
            spec=devices["spec"],
            opts=in_namespace,
        )
    )
# Pods must not start before their claim template exists: the ComputeDomain controller creates it.
k8s.batch.v1.Job(
    "job",
    metadata=manifest["metadata"],
    spec=manifest["spec"],
    # A Job's pod template is immutable and its name fixed: a changed run replaces the old Job first.
    opts=pulumi.ResourceOptions(
        provider=provider, depends_on=[domain, config_map, headless, *queued], delete_before_replace=True
    ),
)

pulumi.export("namespace", job.namespace)
pulumi.export("jobName", job.name)
pulumi.export("claimTemplateName", domain.claim_template_name)
