"""Where pods land, judged from the plan alone (no Helm): the placement values of each release, and the Kueue Topology.

A chart's `tolerations` value is a list, which Helm's values merge replaces, and its `nodeSelector` a map, which it
merges key by key with the chart's default: so tolerations a release sets are all the pods get, and every selector key
it sets must be on the nodes. That is enough to judge, without rendering, whether the pods of a value path land on
the planned node groups (`plan --render` judges the rendered pods themselves: offline/pod_placement.py).

Kueue puts a node into a topology-aware flavor only when the node carries every level's label: kubernetes-sigs/kueue
v0.19.2 pkg/util/tas/node.go:27-31 (`NodeMatchesFlavor` returns false for a node without a required level). A level
no GPU node carries drops them all, and no topology-aware job is ever admitted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ultraserver.config.kubernetes_model import RELEASE_KEYS
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL
from ultraserver.facts.pins import charts
from ultraserver.offline.engine import Plan
from ultraserver.offline.gpu_placement import NodeKind, planned_nodes
from ultraserver.offline.helm_template import ReleaseInput, release_inputs
from ultraserver.offline.pod_placement import lands_on, why_not
from ultraserver.problems import ERROR, WARNING, Described, Problem

ON_GPU = "gpu"
ON_SYSTEM = "system"
VALUE_PODS: dict[str, tuple[tuple[str, str], ...]] = {
    charts.DRA_DRIVER: (("kubeletPlugin", ON_GPU), ("controller", ON_SYSTEM)),
    charts.GPU_OPERATOR: (("daemonsets", ON_GPU), ("operator", ON_SYSTEM)),
    charts.EFA_DEVICE_PLUGIN: (("", ON_GPU),),
    charts.DRANET: (("", ON_GPU),),
    charts.KUEUE: (("controllerManager", ON_SYSTEM),),
}
"""Chart -> (the values section holding a pod's `tolerations` and `nodeSelector`, where its pods must land)."""
RUNTIME_LABELS = frozenset(
    {"kubernetes.io/hostname", "topology.kubernetes.io/zone", "topology.kubernetes.io/region", CLIQUE_LABEL}
)
"""Labels every GPU node gets once it runs, beyond its launch template's: the kubelet's and the cloud provider's
(https://kubernetes.io/docs/reference/labels-annotations-taints/) and GPU Feature Discovery's clique."""
TOPOLOGY = "kubernetes:kueue.x-k8s.io/v1beta2:Topology"


def _section(values: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    node: Any = values
    for part in filter(None, path.split(".")):
        node = node.get(part) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


UserValues = Mapping[str, tuple[str, Mapping[str, Any]]]
"""Chart name -> (settings key of its values, the values the stack sets)."""


def user_values(settings: Any) -> UserValues:
    """Chart name -> (settings key of its values, the values the stack sets), from the stack's settings."""
    if settings is None:
        return {}
    found: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for field_name, chart in RELEASE_KEYS.items():
        release = getattr(settings.kubernetes, field_name)
        found[chart] = (f"{release.settings_key}.values", dict(release.values))
    return found


def _key(release: ReleaseInput, path: str, user: tuple[str, Mapping[str, Any]] | None) -> str:
    """The key a finding names: the stack's own key when the user set the section's tolerations or nodeSelector
    (as written in the stack file), else the release's values in the plan."""
    dotted = path + "." if path else ""
    written = [k for k in ("tolerations", "nodeSelector") if k in _section(user[1], path)] if user else []
    if user and written:
        return f"{user[0]}.{dotted}{'/'.join(written)}"
    return f"{release.resource} values.{dotted}tolerations/nodeSelector"


def _value_problems(
    release: ReleaseInput, kinds: Sequence[NodeKind], user: tuple[str, Mapping[str, Any]] | None
) -> list[Problem]:
    waits = charts.waits(release.atomic, release.skip_await)
    paths = VALUE_PODS.get(release.chart, ())
    found = [_path_problem(release, path, where, kinds, waits, user) for path, where in paths]
    return [problem for problem in found if problem is not None]


def _path_problem(
    release: ReleaseInput,
    path: str,
    where: str,
    kinds: Sequence[NodeKind],
    waits: bool,
    user: tuple[str, Mapping[str, Any]] | None,
) -> Problem | None:
    """What the tolerations and node selector at ``path`` of the release's values do wrong, if anything: pods meant
    ``where`` (ON_GPU or ON_SYSTEM) that miss some of those nodes."""
    section = _section(release.values, path)
    spec = {k: section[k] for k in ("tolerations", "nodeSelector") if k in section}
    if not spec:
        return None
    targets = [k for k in kinds if k.gpu] if where == ON_GPU else list(kinds)
    landing = lands_on(spec, targets)
    missed = [k for k in targets if k not in landing]
    if where == ON_GPU and not missed or where == ON_SYSTEM and any(not k.gpu for k in landing):
        return None
    return _miss_problem(_key(release, path, user), where, spec, landing, missed, waits)


def _miss_problem(
    key: str,
    where: str,
    spec: Mapping[str, Any],
    landing: Sequence[NodeKind],
    missed: Sequence[NodeKind],
    waits: bool,
) -> Problem:
    reasons = "; ".join(f"{k.group}: {why_not(spec, k)}" for k in missed)
    what = "every GPU node group" if where == ON_GPU else "the system node group"
    # A controller that lands only on GPU nodes runs only while a block is up: a warning unless its release waits.
    return Problem(
        key,
        Described(f"its pods miss {what} ({reasons})"),
        f"tolerations and a node selector that land the pods on {what}",
        "fix the values' tolerations (a list replaces the chart's) and nodeSelector (merged key by key)",
        WARNING if landing and not waits else ERROR,
    )


def _topology_problems(plan: Plan, kinds: Sequence[NodeKind]) -> list[Problem]:
    gpu = [k for k in kinds if k.gpu]
    found = []
    for topology in plan.of_type(TOPOLOGY):
        for level in (topology.inputs.get("spec") or {}).get("levels") or []:
            label = str(level.get("nodeLabel"))
            if label in RUNTIME_LABELS or any(label in k.labels for k in gpu):
                continue
            found.append(
                Problem(
                    f"{topology.name} level {label}",
                    Described(f"a label no GPU node group carries ({', '.join(k.group for k in gpu)})"),
                    "levels every GPU node carries: Kueue drops a node without one from the flavor (kueue v0.19.2 "
                    "pkg/util/tas/node.go:27-31), so no topology-aware job is admitted",
                    "label the GPU nodes with it (the launch template's --node-labels) or drop the level",
                )
            )
    return found


def placement_problems(plan: Plan, values: bool = True, users: UserValues | None = None) -> list[Problem]:
    """The releases' placement values (unless ``values`` is False: `--render` judges the rendered pods instead) and
    the Kueue Topology, judged against the plan's node groups (none without a GPU group: a kubernetes-layer/ plan on
    its own). A finding about values the stack sets (``users``) names its key as written."""
    kinds = planned_nodes(plan)
    if not any(k.gpu for k in kinds):
        return []
    found = []
    for release in release_inputs(plan):
        found += _value_problems(release, kinds, (users or {}).get(release.chart)) if values else []
    return found + _topology_problems(plan, kinds)
