"""A recorded resource graph declared again through the Pulumi SDK alone: no toolkit module is imported here.

``plan_scale.py`` writes a plan's graph as a JSON document (``graph_document``: one step per resource, parents and
the resources it waited for first, each naming how to declare it) and uses ``program`` for its warm replay under the
offline engine. Run as a script, ``python benchmarks/sdk_replay.py GRAPH.json [--modules]``, it is the cheapest
program that declares that graph from a cold start: the Pulumi SDK with mocks that echo the inputs back (cheaper
than the offline engine, which records every request); ``plan_scale.py`` starts it under the installed script's
collector settings, as it does the import floor. Against the import floor of the SDK modules it loads (``--modules``
prints them last), it is the least any program producing the graph through the SDK can cost: the SDK's registration
work and the first use of each class it registers.
"""

from __future__ import annotations

import gc
import importlib
import json
import sys
from collections.abc import Callable
from typing import Any

import pulumi
import pulumi_kubernetes

Step = dict[str, Any]


def program(steps: list[Step]) -> Callable[[], None]:
    """A Pulumi program declaring ``steps`` in order, each under its recorded parent, after its dependencies."""

    def run() -> None:
        declared: dict[str, pulumi.Resource] = {}
        for step in steps:
            opts = pulumi.ResourceOptions(
                parent=declared.get(step["parent"]),
                depends_on=[declared[u] for u in step["dependencies"] if u in declared],
                protect=step["protect"],
                retain_on_delete=step["retain_on_delete"],
                ignore_changes=step["ignore_changes"],
            )
            declared[step["urn"]] = DECLARE[step["declare"]](step, opts)

    return run


def declare_sdk(step: Step, opts: pulumi.ResourceOptions) -> pulumi.Resource:
    """A provider resource by its SDK class, with an instance of its Args class holding the recorded inputs under
    their Python names."""
    cls = getattr(importlib.import_module(step["module"]), step["class"])
    args = getattr(importlib.import_module(step["args_module"]), step["args"])
    props = args.__new__(args)
    vars(props).update(step["inputs"])
    return cls(step["name"], props, opts)


def declare_component(step: Step, opts: pulumi.ResourceOptions) -> pulumi.Resource:
    """A component under its recorded type and name; a local one registers empty outputs, as components end."""
    inputs = step["inputs"] if step["remote"] else None
    component = pulumi.ComponentResource(step["type"], step["name"], inputs, opts, remote=step["remote"])
    if not step["remote"]:
        component.register_outputs({})
    return component


def declare_kubernetes(step: Step, opts: pulumi.ResourceOptions) -> pulumi.Resource:
    """A Kubernetes custom resource (its CRD has no SDK class) as pulumi_kubernetes's CustomResource declares it."""
    inputs = step["inputs"]
    fields = {k: v for k, v in inputs.items() if k not in ("apiVersion", "kind")}
    return pulumi_kubernetes.apiextensions.CustomResource(
        step["name"], inputs["apiVersion"], inputs["kind"], opts=opts, **fields
    )


def declare_plain(step: Step, opts: pulumi.ResourceOptions) -> pulumi.Resource:
    """A custom resource that class cannot carry (fields beside its metadata with no spec: Kueue's
    WorkloadPriorityClass), as a plain CustomResource of the same type token with every field as recorded."""
    return pulumi.CustomResource(step["type"], step["name"], dict(step["inputs"]), opts)


DECLARE: dict[str, Callable[[Step, pulumi.ResourceOptions], pulumi.Resource]] = {
    "sdk": declare_sdk,
    "component": declare_component,
    "kubernetes": declare_kubernetes,
    "plain": declare_plain,
}


class Echo(pulumi.runtime.Mocks):
    """Every resource's outputs are its inputs; every call answers empty."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list[tuple[str, str]]]:
        return {}, []


def main(argv: list[str]) -> None:
    """Declare the graph in ``argv[0]`` under echo mocks; with ``--modules``, print the SDK modules loaded, last."""
    with open(argv[0]) as file:
        document = json.load(file)
    pulumi.runtime.set_mocks(Echo(), document["project"], document["stack"], preview=False)
    pulumi.runtime.test(program(document["steps"]))()
    gc.freeze()  # as the installed script and the import floor do before exit
    if "--modules" in argv:
        print("\n" + " ".join(sorted(m for m in sys.modules if m.split(".")[0].startswith("pulumi"))))


if __name__ == "__main__":
    main(sys.argv[1:])
