"""What the plan's Helm releases install, rendered by a real Helm (``offline/helm_template.py``), and the CRDs the
toolkit applies from its pinned manifests, for a rehearsal on a real API server (``--api real``).

The releases are rendered as ``plan --render`` renders them: a first pass with the built-in APIs collects the
charts' CRDs, a second renders with every API the cluster will serve. A release's crds/ are installed unless it
skips them; the DRA driver's two CRDs are installed from its chart even so, as the toolkit applies the same files
from their pins (facts/pins/manifests.py: the same git blobs at the driver's tag). Admission webhooks and
aggregated APIs are left out: no controller serves them here, and a webhook that fails closed would refuse every
object after it (docs/rehearse.md, "Tiers").
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ultraserver.facts.pins.charts import DRA_DRIVER
from ultraserver.facts.pins.manifests import DRA_DRIVER_CRDS
from ultraserver.offline import served_apis
from ultraserver.offline.engine import Plan
from ultraserver.offline.helm_binary import helm_binary
from ultraserver.offline.helm_template import Templater, parse, release_inputs
from ultraserver.problems import ConfigError, Described, Problem

NOT_APPLIED = frozenset({"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "APIService"})
"""Kinds whose server (a webhook's or an aggregated API's pod) never runs in a rehearsal."""


def chart_objects(plan: Plan, kube_version: str, charts_dir: Path) -> list[dict[str, Any]]:
    """Every object the plan's releases install (CRDs first), each in its release's namespace unless it names
    one; TemplateError/ConfigError when a chart is missing or does not render."""
    templater = Templater(helm_binary(), charts_dir, kube_version)
    releases = release_inputs(plan)
    builtins = served_apis.builtin_apis(kube_version)
    crds: dict[str, dict[str, Any]] = {}
    everything: list[Any] = []
    for release in releases:
        rendered = parse(templater.text(release, release.values, served_apis.api_versions_flag(builtins), crds=True))
        everything += [o.body for o in rendered]
        for obj in rendered:
            name = obj.body["metadata"]["name"]
            if not obj.from_crds:
                continue
            if name in DRA_DRIVER_CRDS:
                # The toolkit applies the DRA driver's copy first; Helm then skips an existing CRD, so another
                # chart's older copy (the GPU Operator's) is never installed.
                if release.chart == DRA_DRIVER:
                    crds[name] = dict(obj.body)
            elif not release.skip_crds:
                crds.setdefault(name, dict(obj.body))
    served = frozenset(builtins | served_apis.crd_apis(everything) | served_apis.manifest_apis(plan.manifests))
    flag = served_apis.api_versions_flag(served)
    found: list[dict[str, Any]] = []
    for release in releases:
        for obj in parse(templater.text(release, release.values, flag)):
            body = dict(obj.body)
            if obj.from_crds or body.get("kind") in NOT_APPLIED:
                continue
            meta = dict(body.get("metadata") or {})
            meta.setdefault("namespace", release.namespace)
            found.append({**body, "metadata": meta})
    return [*crds.values(), *found]


def crd_files(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The CustomResourceDefinitions in each YAML file (other documents ignored); ConfigError for a file that
    cannot be read or holds none."""
    found: list[dict[str, Any]] = []
    for path in paths:
        try:
            documents = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
        except (OSError, yaml.YAMLError) as error:
            raise ConfigError(Problem("--crds", str(path), "a readable YAML file", f"pass another ({error})")) from None
        crds = [d for d in documents if d.get("kind") == "CustomResourceDefinition"]
        if not crds:
            raise ConfigError(
                Problem("--crds", Described(f"{path}: no CustomResourceDefinition"), "a file with CRDs", "")
            )
        found += crds
    return found
