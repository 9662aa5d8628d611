"""Kueue's topology-aware scheduling over the rehearsal's nodes, by the plan's own Topology and ResourceFlavors.

Kueue puts a node into a topology-aware flavor only when the node matches the flavor's node labels and carries every
level's label of the flavor's Topology: kubernetes-sigs/kueue v0.19.2 pkg/util/tas/node.go:27-31 (`NodeMatchesFlavor`
returns false for a node without a level). A level the GPU nodes lack leaves the flavor without nodes, and no
topology-aware job is ever admitted; the stage says so. An admitted Workload's topology assignment names the plan's
levels, each node's values read from its labels (the last level naming the nodes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ultraserver.rehearse.cluster import Cluster, GpuNode
from ultraserver.rehearse.stage import Stage


def _of_kind(objects: Sequence[Mapping[str, Any]], kind: str) -> list[Mapping[str, Any]]:
    return [o for o in objects if o.get("kind") == kind]


def topologies(objects: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, ...]]:
    """Each Topology of the plan: name -> its levels' node labels, top first."""
    return {
        str(t["metadata"]["name"]): tuple(
            str(level["nodeLabel"]) for level in (t.get("spec") or {}).get("levels") or []
        )
        for t in _of_kind(objects, "Topology")
    }


def topology_flavors(objects: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The ResourceFlavors placed by a Topology."""
    return [f for f in _of_kind(objects, "ResourceFlavor") if (f.get("spec") or {}).get("topologyName")]


def levels_of(objects: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The levels of the Topology the first topology-aware flavor names; () when the plan has none."""
    flavors = topology_flavors(objects)
    if not flavors:
        return ()
    return topologies(objects).get(str(flavors[0]["spec"]["topologyName"]), ())


def topology_stage(cluster: Cluster) -> Stage | None:
    """Each topology-aware flavor of the plan over the GPU nodes it selects: it fails for a missing Topology or for
    a level some of those nodes lack (Kueue leaves them out of the flavor); None when the plan has no such flavor or
    no GPU node runs."""
    flavors = topology_flavors(cluster.objects)
    if not flavors or not cluster.gpu_nodes:
        return None
    known = topologies(cluster.objects)
    lines = [line for flavor in flavors for line in _flavor_lines(flavor, known, cluster.gpu_nodes)]
    return Stage("kueue topology", 1 if any(line.startswith("FAILED") for line in lines) else 0, "\n".join(lines))


def _flavor_lines(
    flavor: Mapping[str, Any], known: Mapping[str, tuple[str, ...]], gpu_nodes: Sequence[GpuNode]
) -> list[str]:
    """One flavor judged: a FAILED line per problem, else what it holds."""
    spec = flavor["spec"]
    name, topology = flavor["metadata"]["name"], str(spec["topologyName"])
    if topology not in known:
        return [
            f"FAILED ResourceFlavor {name}: Topology {topology} is not in the plan; Kueue admits no topology-aware "
            "job to it; fix: create the Topology or name one the plan has"
        ]
    selected = {str(k): str(v) for k, v in (spec.get("nodeLabels") or {}).items()}
    nodes = [n for n in gpu_nodes if all(n.labels().get(k) == v for k, v in selected.items())]
    lines = []
    for level in known[topology]:
        lacking = [n.name for n in nodes if level not in n.labels()]
        if lacking:
            lines.append(
                f"FAILED Topology {topology} level {level}: {len(lacking)} of {len(nodes)} node(s) of flavor {name} "
                f"lack the label (first: {lacking[0]}); Kueue leaves them out of the flavor (kueue v0.19.2 "
                "pkg/util/tas/node.go:27-31), so no topology-aware job lands there; fix: label the GPU nodes with "
                "it (the launch template's --node-labels) or drop the level"
            )
    return lines or [
        f"flavor {name}: {len(nodes)} node(s) carry every level of Topology {topology} ({', '.join(known[topology])})"
    ]


def assignment(levels: Sequence[str], nodes: Sequence[GpuNode]) -> dict[str, Any]:
    """The topology assignment of a pod set with one pod on each node (Kueue v1beta2's shape): each level's values
    from the nodes' labels, one value for all when they share it, the last level naming each node's domain."""
    values: list[dict[str, Any]] = []
    for index, level in enumerate(levels):
        seen = [n.labels().get(level, "") for n in nodes]
        if index < len(levels) - 1 and len(set(seen)) == 1:
            values.append({"universal": seen[0]})
        else:
            values.append({"individual": {"roots": seen}})
    slices = [{"domainCount": len(nodes), "podCounts": {"universal": 1}, "valuesPerLevel": values}]
    return {"levels": list(levels), "slices": slices}
