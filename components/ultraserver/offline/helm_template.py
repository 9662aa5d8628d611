"""`helm template` of the plan's Helm releases: their recorded inputs, the command line, and the objects it renders.

The offline engine records each `kubernetes:helm.sh/v3:Release` with the inputs pulumi-kubernetes would hand Helm
(chart, version, repository, namespace, values, atomic, skipAwait, skipCrds). Rendering passes those values
unchanged, the stack's Kubernetes version as `--kube-version` and the APIs the cluster will serve as
`--api-versions`: without them the binary's own defaults decide which apiVersion a chart picks.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from ultraserver.facts.pins import charts
from ultraserver.offline.engine import Plan
from ultraserver.offline.resource import HELM_RELEASE
from ultraserver.problems import ConfigError, Described, Problem

SOURCE_PREFIX = "# Source: "


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml's loader when PyYAML has it (large CRDs parse many times faster), reading a plain `=` as the text
    Kubernetes' YAML reader sees, not YAML 1.1's `value` tag (yaml/pyyaml#89)."""


_Loader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))


@dataclass(frozen=True)
class ReleaseInput:
    """One Helm release as the plan declares it."""

    resource: str
    """The plan's resource name (e.g. gb200-x72-k8s-gpu-operator)."""
    name: str
    """Helm release name."""
    chart: str
    """Chart name in the catalog (facts/pins/charts.py)."""
    reference: str
    """The chart as Helm names it: an oci:// reference, or a name in `repo`."""
    repo: str | None
    version: str
    namespace: str
    values: Mapping[str, Any]
    atomic: bool
    skip_await: bool
    skip_crds: bool

    @property
    def package(self) -> str:
        """The file name of the packaged chart, `<chart>-<version>.tgz`, as `helm package`/`helm pull` name it."""
        return f"{self.chart}-{self.version}.tgz"


def release_inputs(plan: Plan) -> list[ReleaseInput]:
    """Every Helm release of the plan, in the plan's order."""
    found = []
    for resource in plan.of_type(HELM_RELEASE):
        inputs = resource.inputs
        reference = str(inputs["chart"])
        found.append(
            ReleaseInput(
                resource=resource.name,
                name=str(inputs.get("name") or resource.name),
                chart=charts.chart_of(reference),
                reference=reference,
                repo=(inputs.get("repositoryOpts") or {}).get("repo"),
                version=str(inputs.get("version") or ""),
                namespace=str(inputs.get("namespace") or "default"),
                values=inputs.get("values") or {},
                atomic=bool(inputs.get("atomic")),
                skip_await=bool(inputs.get("skipAwait")),
                skip_crds=bool(inputs.get("skipCrds")),
            )
        )
    return found


def chart_file(release: ReleaseInput, folder: Path) -> Path:
    """The packaged chart of a release in ``folder`` (its ``package`` file), or ConfigError naming the file."""
    path = folder / release.package
    if not path.is_file():
        raise ConfigError(
            Problem(
                "--charts",
                Described(f"{folder} without {path.name}"),
                f"a folder of packaged charts at the stack's pins ({release.chart} {release.version})",
                f"add it (`helm pull {pull_reference(release)} --version {release.version}`) or pass another folder",
            )
        )
    return path


def pull_reference(release: ReleaseInput) -> str:
    """The chart argument of `helm pull` (an oci:// reference, or the name with --repo)."""
    return release.reference if release.repo is None else f"{release.reference} --repo {release.repo}"


def pull_command(helm: Path, release: ReleaseInput, destination: Path) -> list[str]:
    """`helm pull` of a release's chart at its version into ``destination``, as a user with network access would."""
    command = [str(helm), "pull", release.reference, "--version", release.version, "--destination", str(destination)]
    return command + (["--repo", release.repo] if release.repo else [])


def template_command(
    helm: Path,
    release: ReleaseInput,
    chart: Path,
    values_file: Path,
    kube_version: str,
    api_versions: Sequence[str],
    crds: bool = False,
) -> list[str]:
    """`helm template` of one release: its values, the cluster's version and APIs, with the chart's crds/ or not, no
    test hooks (an install never runs them; the hooks it runs are kept)."""
    command = [str(helm), "template", release.name, str(chart), "--namespace", release.namespace]
    command += ["--values", str(values_file), "--kube-version", kube_version, "--skip-tests"]
    command += ["--include-crds"] if crds else []
    return command + ([f"--api-versions={','.join(api_versions)}"] if api_versions else [])


@dataclass(frozen=True)
class Rendered:
    """One object `helm template` wrote, with the chart file it came from."""

    source: str
    """The `# Source:` path (chart/templates/x.yaml, chart/crds/x.yaml)."""
    body: Mapping[str, Any]

    @property
    def from_crds(self) -> bool:
        """Whether the object comes from the chart's crds/ folder (Helm skips those with skipCrds)."""
        return "/crds/" in f"/{self.source}"


@lru_cache(maxsize=64)
def parse(text: str) -> list[Rendered]:
    """The objects of a `helm template` output, each with its `# Source:` path (a file of crds/ that starts with its
    own `---` puts the path in a document of its own, which the objects after it keep). The same output is read
    once (renders repeat across checks); the objects are shared, so never changed."""
    found = []
    source = ""
    for document in text.split("\n---"):
        source = next(
            (line[len(SOURCE_PREFIX) :] for line in document.splitlines() if line.startswith(SOURCE_PREFIX)), source
        )
        for body in yaml.load_all(document, Loader=_Loader):
            if isinstance(body, Mapping) and body.get("kind"):
                found.append(Rendered(source, body))
    return found


class TemplateError(Exception):
    """`helm template` refused a release (a template's `fail`, a values schema error, an unknown chart)."""


_DONE: dict[str, str | TemplateError] = {}
"""Each distinct `helm template` command's answer, once per process: renders repeat across key probes, stacks and
plans of one session."""
_LOCK = threading.Lock()


class Templater:
    """Runs `helm template` for releases with one Helm, one folder of packaged charts and one Kubernetes version."""

    def __init__(self, helm: Path, charts_dir: Path, kube_version: str) -> None:
        self.helm = helm
        self.charts_dir = charts_dir
        self.kube_version = kube_version

    def text(
        self,
        release: ReleaseInput,
        values: Mapping[str, Any],
        api_versions: Sequence[str],
        attempt: int = 0,
        crds: bool = False,
    ) -> str:
        """The rendered text; TemplateError with Helm's message when it fails. Another ``attempt`` renders again
        (to see what differs between two renders of the same values)."""
        chart = chart_file(release, self.charts_dir)
        document = json.dumps(values, sort_keys=True)
        key = json.dumps(
            [str(self.helm), release.name, release.namespace, str(chart.resolve()), document]
            + [self.kube_version, list(api_versions), attempt, crds]
        )
        with _LOCK:
            known = _DONE.get(key)
        if known is None:
            known = self._run(release, chart, document, api_versions, crds)
            with _LOCK:
                _DONE[key] = known
        if isinstance(known, TemplateError):
            raise known
        return known

    def _run(
        self, release: ReleaseInput, chart: Path, document: str, api_versions: Sequence[str], crds: bool
    ) -> str | TemplateError:
        with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="ultraserver-values-") as values_file:
            values_file.write(document)
            values_file.flush()
            command = template_command(
                self.helm, release, chart, Path(values_file.name), self.kube_version, api_versions, crds
            )
            done = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603 - no shell
        if done.returncode != 0:
            return TemplateError(done.stderr.strip() or f"helm exited {done.returncode}")
        return done.stdout


def pull_charts(helm: Path, releases: Sequence[ReleaseInput], destination: Path) -> None:
    """Pull each release's chart at its version (needs the chart repositories; ConfigError naming the first failure)."""
    for release in releases:
        if (destination / release.package).is_file():
            continue
        done = subprocess.run(pull_command(helm, release, destination), capture_output=True, text=True, check=False)  # noqa: S603
        if done.returncode != 0:
            raise ConfigError(
                Problem(
                    "--render",
                    Described(
                        f"`helm pull {pull_reference(release)} --version {release.version}` failed: "
                        f"{done.stderr.strip()[:300]}"
                    ),
                    f"chart {release.chart} {release.version} from its repository",
                    "let helm reach the repository, set kubernetes.chartMirror to a mirror holding the pinned charts, "
                    "or pass --charts with the packaged charts",
                )
            )
