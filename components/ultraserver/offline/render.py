"""`ultraserver plan --render`: every Helm release of the plan rendered by a real Helm, written, and checked.

Two passes: the first, with the built-in APIs only, collects the CRDs the charts install; the second renders with
every API the cluster will serve (offline/served_apis.py). The checks report Problems like the rest of the plan:
objects of a kind nobody serves, schema errors, DaemonSets that must run on GPU nodes but do not, releases with
pods on GPU nodes that wait or are atomic, and value keys that change nothing; what the toolkit applies itself, its
own objects and the upstream manifests it pins, is judged beside them (offline/stack_checks.py).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ultraserver.facts.kubernetes.eks_versions import DEFAULT_TEXT
from ultraserver.facts.pins import charts
from ultraserver.offline import gpu_placement, noop_keys, pod_placement, served_apis
from ultraserver.offline.engine import Plan
from ultraserver.offline.helm_binary import helm_binary
from ultraserver.offline.helm_template import (
    ReleaseInput,
    Rendered,
    TemplateError,
    Templater,
    parse,
    pull_charts,
    release_inputs,
)
from ultraserver.offline.manifest_schemas import crd_schemas, schema_error
from ultraserver.offline.pod_placement import object_name
from ultraserver.offline.stack_checks import ReadPin, pinned_objects, pruned_problem, stack_problems, stored
from ultraserver.offline.value_placement import UserValues, user_values
from ultraserver.problems import WARNING, ConfigError, Described, Problem

MANIFEST_HEAD = "---\n# Source: "
"""How every manifest file --render writes starts (its first object under its `# Source:` line)."""


def manifest_file(folder: Path, release: ReleaseInput) -> Path:
    """Where --render writes one release's manifest: ``<plan resource name>.yaml`` in the folder."""
    return folder / f"{release.resource}.yaml"


@dataclass
class ReleaseRender:
    """One release as rendered with the cluster's APIs."""

    release: ReleaseInput
    objects: list[Rendered] = field(default_factory=list)
    """What Helm installs (the chart's crds/ left out when the release skips them)."""
    error: str = ""

    def manifest(self) -> str:
        """The objects as one YAML stream, each under its `# Source:` line."""
        return "".join(
            f"{MANIFEST_HEAD}{o.source}\n{yaml.safe_dump(dict(o.body), sort_keys=False)}" for o in self.objects
        )


@dataclass
class StackRender:
    """Every release of a plan, rendered, and what the checks found."""

    releases: list[ReleaseRender] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def write(self, folder: Path) -> list[Path]:
        """One manifest file per release (`<plan resource name>.yaml`), all or none: each is written into a folder
        inside ``folder`` first and moved into place once every one is written. ConfigError if the folder cannot be
        written or a manifest's name is taken by something other than a file; the render then leaves nothing behind
        (a folder it created is removed again)."""
        created = not folder.exists()
        staging: Path | None = None
        done = False
        try:
            folder.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".ultraserver-render-", dir=folder))
            for render in self.releases:
                manifest_file(staging, render.release).write_text(render.manifest())
            written = [manifest_file(folder, render.release) for render in self.releases]
            taken = [path.name for path in written if path.exists() and not path.is_file()]
            if taken:
                raise IsADirectoryError(f"{', '.join(taken)} in the folder is not a file")
            for path in written:
                (staging / path.name).replace(path)
            done = True
        except OSError as error:
            raise ConfigError(
                Problem("--render", str(folder), "a folder that can be created and written", f"pass another ({error})")
            ) from None
        finally:
            # Whatever stopped it (an OSError, Ctrl-C): no staging folder, and no folder this render created.
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            if created and not done:
                shutil.rmtree(folder, ignore_errors=True)
        return written


def render_stack(
    plan: Plan,
    templater: Templater,
    nodes: Sequence[gpu_placement.NodeKind],
    user_values: UserValues,
    read_pin: ReadPin,
) -> StackRender:
    """Render and check every release of ``plan`` against its planned ``nodes`` (every node group's kind: the system
    group and the GPU groups), with the upstream manifests the plan applies, read by ``read_pin``
    (offline/stack_checks.py). ``user_values`` maps a chart name to (settings key, the values the user set), so a
    finding about a user's key names it as written."""
    releases = release_inputs(plan)
    builtins = served_apis.builtin_apis(templater.kube_version)
    chart_crds, everything = _first_pass(releases, templater, served_apis.api_versions_flag(builtins))
    served = frozenset(builtins | served_apis.crd_apis(everything) | served_apis.manifest_apis(plan.manifests))
    flag = served_apis.api_versions_flag(served)
    stack = StackRender()
    for release in releases:
        render = ReleaseRender(release)
        stack.releases.append(render)
        try:
            objects = parse(templater.text(release, release.values, flag))
        except TemplateError as error:
            render.error = str(error)
            stack.problems.append(_template_problem(release, render.error))
            continue
        render.objects = [*([] if release.skip_crds else chart_crds.get(release.resource, [])), *objects]
    pinned, unread = pinned_objects(plan.manifests, everything, read_pin)
    stack.problems += unread
    schemas = crd_schemas([*everything, *(body for _, bodies in pinned for body in bodies)])
    for render in stack.releases:
        release = render.release
        if render.error:
            continue
        stack.problems += _unserved(release, render.objects, served)
        stack.problems += _schema_problems(release, render.objects, templater.kube_version, schemas)
        kept, pruned = stored([o.body for o in render.objects], schemas)
        stack.problems += [pruned_problem(release.resource, body, path) for body, path in pruned]
        stack.problems += _placement(release, kept, nodes)
        stack.problems += _idle(release, templater, flag, user_values.get(release.chart))
    judged = [(r.release.resource, [o.body for o in r.objects]) for r in stack.releases if not r.error]
    stack.problems += stack_problems(plan, judged, pinned, nodes, schemas)
    return stack


def _first_pass(
    releases: Sequence[ReleaseInput], templater: Templater, first: Sequence[str]
) -> tuple[dict[str, list[Rendered]], list[Mapping[str, Any]]]:
    """Each release's crds/ (plain files, the same whatever the values and APIs: read once, in this pass) and every
    object the releases render with the built-in APIs only, which tells which APIs their CRDs add."""
    chart_crds: dict[str, list[Rendered]] = {}
    everything: list[Mapping[str, Any]] = []
    for release in releases:
        try:
            objects = parse(templater.text(release, release.values, first, crds=True))
        except TemplateError:
            continue  # reported by the second pass
        chart_crds[release.resource] = [o for o in objects if o.from_crds]
        everything += [o.body for o in objects]
    return chart_crds, everything


def _template_problem(release: ReleaseInput, message: str) -> Problem:
    return Problem(
        release.resource,
        Described(f"`helm template` failed: {message}"),
        f"values chart {release.chart} {release.version} renders",
        "fix the values the message names",
    )


def _unserved(release: ReleaseInput, objects: Sequence[Rendered], served: frozenset[served_apis.Api]) -> list[Problem]:
    bodies = [o.body for o in objects]
    defaults = served_apis.binary_defaults(bodies, served)
    missing = [b for b in served_apis.unserved(bodies, served) if b not in defaults]
    found = []
    if defaults:
        kinds = sorted({f"{b.get('kind')} ({b.get('apiVersion')})" for b in defaults})
        found.append(
            Problem(
                release.resource,
                Described(f"renders {', '.join(kinds)}: the Helm binary's own API list has that version"),
                "the version a real install picks: the cluster serves the kind at another version; Helm "
                f"{charts.HELM_VERSION} cannot render without its built-in APIs (Kubernetes {charts.HELM_KUBE_MINOR}), "
                "so these objects are checked at the version shown",
                "nothing to change; render with a Helm built for the stack's minor to see the version it picks",
                WARNING,
            )
        )
    if missing:
        kinds = sorted({f"{b.get('kind')} ({b.get('apiVersion')})" for b in missing})
        found.append(
            Problem(
                release.resource,
                Described(f"renders {', '.join(kinds)}, which nothing in the planned cluster serves"),
                "kinds the cluster serves: its Kubernetes version's built-in APIs and the CRDs the toolkit and the "
                "charts install",
                "turn off the values that render them, or install what serves them first",
            )
        )
    return found


def _schema_problems(
    release: ReleaseInput, objects: Sequence[Rendered], kube_version: str, schemas: Mapping[served_apis.Api, Any]
) -> list[Problem]:
    found = []
    for rendered in objects:
        error = schema_error(rendered.body, kube_version, schemas)
        if error is not None:
            where, message = error
            found.append(
                Problem(
                    f"{release.resource}: {object_name(rendered.body)}",
                    Described(f"{where}: {message} ({rendered.source})"),
                    f"an object valid against the Kubernetes {kube_version} schemas and the CRDs",
                    "fix the values that render this field",
                )
            )
    return found


def _placement(
    release: ReleaseInput, bodies: Sequence[Mapping[str, Any]], nodes: Sequence[gpu_placement.NodeKind]
) -> list[Problem]:
    """DaemonSets of GPU-node charts off some GPU group; a release with pods on GPU nodes that waits; every pod the
    release creates, the GPU Operator's operands included, where it lands (offline/pod_placement.py)."""
    found: list[Problem] = []
    gpu = [kind for kind in nodes if kind.gpu]
    if not gpu:
        return found
    if release.chart in charts.ON_GPU_NODES:
        for body in bodies:
            missed = gpu_placement.missed_groups(body, gpu)
            if missed:
                found.append(
                    Problem(
                        f"{release.resource}: {object_name(body)}",
                        Described(f"no pod on the GPU nodes of {', '.join(missed)}"),
                        "a DaemonSet that tolerates the GPU nodes' taints and selects their labels",
                        "set the chart's tolerations and node selector values for the GPU nodes",
                    )
                )
    on_gpu = gpu_placement.on_gpu_nodes(bodies, gpu)
    waits = charts.waits(release.atomic, release.skip_await)
    if on_gpu and waits:
        found.append(
            Problem(
                release.resource,
                Described(f"atomic {release.atomic}, skipAwait {release.skip_await}"),
                f"skipAwait true and atomic false: {', '.join(object_name(b) for b in on_gpu)} runs on every GPU node, "
                "and Helm waits for every pod of it (facts/pins/charts.py), so one unhealthy GPU node fails the "
                "release",
                f"add {release.chart} to the charts whose releases skip the wait (facts/pins/charts.py ON_GPU_NODES)",
            )
        )
    reported = {p.key for p in found}
    pods = [*pod_placement.release_pods(bodies, waits), *pod_placement.operand_pods(bodies)]
    found += [p for p in pod_placement.placement_problems(release.resource, pods, nodes) if p.key not in reported]
    return found


_ABSENT = object()


def _at(values: Mapping[str, Any], path: noop_keys.Path) -> Any:
    """The value at a path, or _ABSENT."""
    node: Any = values
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return _ABSENT
        node = node[part]
    return node


def _idle(
    release: ReleaseInput,
    templater: Templater,
    flag: Sequence[str],
    user: tuple[str, Mapping[str, Any]] | None,
) -> list[Problem]:
    """A warning for each set value key whose change renders the same objects."""

    def render(values: Mapping[str, Any]) -> str | None:
        try:
            return templater.text(release, values, flag)
        except TemplateError:
            return None

    base = templater.text(release, release.values, flag)
    again = templater.text(release, release.values, flag, attempt=1)

    def bodies(text: str) -> list[Mapping[str, Any]]:
        return [o.body for o in parse(text)]

    found = []
    for path in noop_keys.idle_keys(release.values, render, base, again, bodies):
        dotted = ".".join(path)
        if user is not None and _at(user[1], path) is not _ABSENT:
            key, fix = f"{user[0]}.{dotted}", "remove it, or set the value the templates read in this configuration"
        else:
            key, fix = f"{release.resource} values.{dotted}", "drop it from the toolkit's values for this chart"
        found.append(
            Problem(
                key,
                _at(release.values, path),
                f"a value that changes what {release.chart} {release.version} renders (changing it changes no "
                "rendered object)",
                fix,
                WARNING,
            )
        )
    return found


def render_plan(
    plan: Plan, settings: Any, out: Path, charts_dir: Path | None, read_pin: ReadPin
) -> tuple[StackRender, list[Path]]:
    """Render the plan's releases with a real Helm (on the PATH, else fetched: offline/helm_binary.py), check them
    with the pinned manifests ``read_pin`` reads, and write one manifest per release into ``out``. Charts come from
    ``charts_dir`` (packaged `.tgz`), else each is pulled at its pin into a folder removed afterwards."""
    helm_path = helm_binary()
    kube_version = settings.cluster.kubernetes_version if settings is not None else DEFAULT_TEXT
    with tempfile.TemporaryDirectory(prefix="ultraserver-charts-") as pulled:
        if charts_dir is None:
            charts_dir = Path(pulled)
            pull_charts(helm_path, release_inputs(plan), charts_dir)
        templater = Templater(helm_path, charts_dir, kube_version)
        nodes = gpu_placement.planned_nodes(plan)
        stack = render_stack(plan, templater, nodes, user_values(settings), read_pin)
    return stack, stack.write(out)
