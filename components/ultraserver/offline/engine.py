"""Run a Pulumi program in-process under ``pulumi.runtime.set_mocks`` and record every resource it declares.

This is the same program ``pulumi up`` runs; only the engine is replaced. Inputs are recorded as the
engine receives them (camelCase, serialized), with the URNs each resource waits for.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import runpy
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pulumi
from google.protobuf import json_format, struct_pb2
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import settings as pulumi_settings
from pulumi.runtime.proto import provider_pb2
from pydantic import ValidationError

from ultraserver import clock
from ultraserver.config.errors import program_problems
from ultraserver.offline import placeholders, wire
from ultraserver.offline.aliases import earlier_urns
from ultraserver.offline.output_inputs import OutputInputs
from ultraserver.offline.project import load_project, stack_config
from ultraserver.offline.resource import STACK_TYPE, PlanResource
from ultraserver.problems import ConfigError, Described, Problem
from ultraserver.resources import pinned_manifest

ANSWER_SHOWN = 120
"""Characters of a data-source answer the plan's placeholder list shows."""


@dataclass
class Plan:
    """What a stack would create, offline."""

    project: str
    stack: str
    resources: list[PlanResource]
    placeholders: list[str] = field(default_factory=list)
    policies: list[dict[str, str]] = field(default_factory=list)
    manifests: list[str] = field(default_factory=list)  # URLs of the pinned upstream manifests applied

    def to_json(self) -> dict[str, Any]:
        """The plan JSON: ``{project, stack, resources, policies}``."""
        return {
            "project": self.project,
            "stack": self.stack,
            "resources": [r.to_json() for r in self.resources],
            "policies": self.policies,
        }

    def joined(self, other: Plan) -> Plan:
        """This plan with another project's plan of the same stack after it (a separate-stack stack's platform and
        kubernetes-layer/ projects, judged as one cluster)."""
        return dataclasses.replace(
            self, resources=[*self.resources, *other.resources], manifests=[*self.manifests, *other.manifests]
        )

    def of_type(self, resource_type: str) -> list[PlanResource]:
        """Resources of one type, in declaration order."""
        return [r for r in self.resources if r.type == resource_type]

    def by_urn(self) -> dict[str, PlanResource]:
        """Resources keyed by URN."""
        return {r.urn: r for r in self.resources}


class OfflineMocks(pulumi.runtime.Mocks):
    """Answers every resource and data-source call with labelled placeholders."""

    def __init__(self, region: str) -> None:
        self.region = region
        self.monitor: RecordingMonitor | None = None
        self.calls: list[str] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        """Inputs echo back as outputs, plus placeholder computed outputs."""
        outputs = dict(args.inputs)
        for key, value in placeholders.resource_outputs(args.typ, args.name, args.inputs, self.region).items():
            outputs.setdefault(key, value)
        if args.typ == "eks:index:Cluster" and self.monitor is not None:
            outputs.update(self.monitor.add_eks_cluster(args.inputs.get("name") or args.name, self.region))
            if args.inputs.get("skipDefaultSecurityGroups"):
                # pulumi-eks then reports the EKS-created cluster security group and makes no node group.
                outputs["clusterSecurityGroupId"] = placeholders.CLUSTER_SECURITY_GROUP
                outputs.pop("nodeSecurityGroupId", None)
        if args.typ == "pulumi:pulumi:StackReference":
            # Listed with the data-source answers: the other stack's exports are as made up as they are.
            exported = ", ".join(sorted(outputs.get("outputs") or {}))
            self.calls.append(f"StackReference {args.inputs.get('name', args.name)} -> outputs {exported}")
        return placeholders.resource_id(args.name), outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list[tuple[str, str]]]:
        """Data-source calls answer with placeholders; unknown ones answer empty and are reported."""
        result = placeholders.call_result(args.token, dict(args.args), self.region)
        shown = ", ".join(f"{k}={v}" for k, v in sorted(dict(args.args).items()) if isinstance(v, (str, int, float)))
        note = f"{args.token}({shown})"
        if result is None:
            self.calls.append(f"{note} -> no offline value (empty answer)")
            return {}, []
        answer = str(result.get("value", result))
        # A whole document (pulumi-eks's kubeconfig) would drown the list: its arguments above say what was asked.
        self.calls.append(f"{note} -> {answer if len(answer) <= ANSWER_SHOWN else answer[:ANSWER_SHOWN] + '...'}")
        return result, []


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """A mock monitor that records each registration as the engine would receive it."""

    def __init__(self, mocks: OfflineMocks) -> None:
        super().__init__(mocks)
        mocks.monitor = self
        self.records: list[PlanResource] = []
        self.duplicates: list[str] = []
        self._urns: set[str] = set()
        self._urns_lock = threading.Lock()
        self._owner_of: dict[str, str] = {}
        # Each registered URN's claims on an earlier deployment (offline/aliases.py); children inherit them.
        self._earlier: dict[str, list[str]] = {}
        self._stack_urn = ""
        # Registrations run on executor threads; each thread knows which URN it is registering.
        self._registering = threading.local()

    def add_eks_cluster(self, cluster_name: str, region: str) -> dict[str, Any]:
        """pulumi-eks builds its aws.eks.Cluster remotely; stand one in so references resolve."""
        owner: str = self._registering.urn
        urn = self.make_urn(owner, "aws:eks/cluster:Cluster", f"{cluster_name}-eksCluster")
        state = placeholders.eks_cluster_state(cluster_name, region)
        self.resources[urn] = pulumi_mocks.MockMonitor.ResourceRegistration(
            urn, placeholders.resource_id(cluster_name), state
        )
        self._owner_of[urn] = owner
        kubeconfig = placeholders.kubeconfig(cluster_name, region)
        return {
            "eksCluster": wire.resource_reference(urn, placeholders.resource_id(cluster_name)),
            "kubeconfig": kubeconfig,
            "kubeconfigJson": json.dumps(kubeconfig),
            "clusterSecurityGroupId": "sg-offline-pulumi-eks-cluster",
            "nodeSecurityGroupId": "sg-offline-pulumi-eks-nodes",
            "oidcProviderArn": placeholders.arn(region, "iam:oidc-provider", cluster_name),
            "oidcProviderUrl": "oidc.offline-placeholder",
            "oidcIssuer": "https://oidc.offline-placeholder",
        }

    def owner(self, urn: str) -> str:
        """The recorded resource a URN stands for: a stand-in's pulumi-eks component, else itself."""
        return self._owner_of.get(urn, urn)

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        """Record the request, then let the mock monitor answer it."""
        urn = self.make_urn(request.parent, request.type, request.name)
        with self._urns_lock:  # registrations run on several threads
            if urn in self._urns:
                # The real engine refuses a second registration of a URN ("Duplicate resource URN").
                self.duplicates.append(urn)
            self._urns.add(urn)
            if request.type == STACK_TYPE:
                self._stack_urn = urn
            aliases = earlier_urns(request, self._stack_urn, self._earlier, self.make_urn)
            self._earlier[urn] = aliases
        self._registering.urn = urn
        response = super().RegisterResource(request)
        inputs = wire.plain(json_format.MessageToDict(request.object)) if request.type != STACK_TYPE else {}
        dependencies = sorted({self.owner(d) for d in request.dependencies})
        by_input = {
            key: sorted({self.owner(d) for d in deps.urns}) for key, deps in request.propertyDependencies.items()
        }
        self.records.append(
            PlanResource(
                response.urn,
                request.type,
                request.name,
                request.parent,
                inputs,
                dependencies,
                bool(request.custom),
                by_input,
                remote=bool(request.remote),
                protect=bool(request.protect),
                retain_on_delete=bool(request.retainOnDelete),
                ignore_changes=list(request.ignoreChanges),
                replace_on_changes=list(request.replaceOnChanges),
                aliases=aliases,
            )
        )
        return response

    def Call(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        """A component method (pulumi-eks's Cluster.getKubeconfig), which the SDK's mock monitor does not answer:
        the mocks answer it as a data-source call, with the receiver's registered state as ``__self__``."""
        args = wire.plain(json_format.MessageToDict(request.args))
        receiver = self.resources.get(args.get("__self__", ""))
        args["__self__"] = dict(receiver.state) if receiver else {}
        result, _ = self.mocks.call(pulumi.runtime.MockCallArgs(request.tok, args, request.provider))
        return provider_pb2.CallResponse(**{"return": json_format.ParseDict(result, struct_pb2.Struct())})

    def ReadResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        """Record a read of an existing resource (e.g. a StackReference), then let the mock monitor answer it."""
        response = super().ReadResource(request)
        inputs = wire.plain(json_format.MessageToDict(request.properties))
        dependencies = sorted({self.owner(d) for d in request.dependencies})
        self.records.append(
            PlanResource(response.urn, request.type, request.name, request.parent, inputs, dependencies, True, {})
        )
        return response


def run_plan(
    directory: Path | str, stack: str, overrides: Mapping[str, Any] | None = None, now: datetime | None = None
) -> Plan:
    """Run a project's program for one stack offline and return what it declares.

    ``overrides`` replaces config keys (values as YAML would parse them), e.g. for tests; ``now`` pins the program's
    clock (``ultraserver.clock``), as ``ultraserver plan --now`` does.
    Raises ConfigError for invalid settings before any resource is declared.
    """
    project = load_project(Path(directory).resolve())
    config, secret_keys = stack_config(project, stack)
    for key, value in (overrides or {}).items():
        config[key] = value if isinstance(value, str) else json.dumps(value)
    program = functools.partial(runpy.run_path, str(project.main), run_name="__main__")
    with clock.pinned(now):
        return record(program, project.name, stack, config, secret_keys, project.directory)


def record(
    program: Callable[[], Any],
    project: str = "ultraserver",
    stack: str = "offline",
    config: Mapping[str, str] | None = None,
    secret_keys: Sequence[str] = (),
    import_dir: Path | None = None,
) -> Plan:
    """Run any Pulumi program function under the offline engine and return what it declares.

    ``config`` maps namespaced keys to the strings the engine would pass (objects as JSON).
    """
    config = dict(config or {})
    mocks = OfflineMocks(config.get("aws:region", "us-east-1"))
    monitor = RecordingMonitor(mocks)
    # Each run gets a fresh root stack resource and config; mocks are process-wide.
    pulumi_settings.ROOT.set(None)
    pulumi.runtime.set_all_config(config, list(secret_keys))
    pulumi.runtime.set_mocks(
        mocks, project, stack, preview=False, monitor=monitor, organization=placeholders.ORGANIZATION
    )

    watch = OutputInputs()

    @pulumi.runtime.test
    def run() -> None:
        pulumi.runtime.register_stack_transformation(watch.transformation)
        if import_dir is not None:
            sys.path.insert(0, str(import_dir))
        try:
            program()
        except ValidationError as error:
            # A settings model the program built (GpuNodeGroupSettings(...)): the same Problems as a stack file's.
            raise ConfigError(program_problems(error)) from None
        finally:
            if import_dir is not None:
                sys.path.remove(str(import_dir))

    # The offline plan downloads nothing: pinned manifests become empty groups (no digest is checked); their URLs
    # are noted (the APIs they add: ultraserver plan --render).
    fetched: list[str] = []
    previous = pinned_manifest.set_fetcher(fetched.append)
    try:
        run()
    finally:
        pinned_manifest.set_fetcher(previous)
    if monitor.duplicates:
        once = "one resource per URN (the Pulumi engine refuses duplicates)"
        fix = "make the settings that name it differ (the name above ends in the value it came from)"
        twice = [Described(f"{urn}, declared twice") for urn in sorted(set(monitor.duplicates))]
        raise ConfigError([Problem("urn", urn, once, fix) for urn in twice])
    for resource in monitor.records:
        resource.declared_sources = {
            k: sorted({monitor.owner(d) for d in v}) for k, v in watch.sources.get(resource.urn, {}).items()
        }
        resource.unresolved_inputs = sorted(watch.unresolved.get(resource.urn, []))
    # Registrations run concurrently; sorting by URN makes the plan repeatable.
    records = sorted(monitor.records, key=lambda r: r.urn)
    return Plan(project, stack, records, sorted(set(mocks.calls)), manifests=sorted(set(fetched)))
