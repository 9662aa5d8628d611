"""Rules of the Kueue settings: LocalQueue namespaces once each, and a replaced Kueue configuration that still
enables the integrations the toolkit's jobs use."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

import yaml

from ultraserver.config.model import Settings
from ultraserver.facts.kubernetes import kueue
from ultraserver.problems import WARNING, Problem


def _config_override(values: Mapping[str, Any]) -> Any:
    """The user's managerConfig.controllerManagerConfigYaml, or None when not overridden."""
    config = values.get("managerConfig")
    return config.get("controllerManagerConfigYaml") if isinstance(config, Mapping) else None


def _load(text: Any) -> Mapping[str, Any] | None:
    """A Kueue Configuration given as YAML text; None when it is not a YAML mapping."""
    try:
        config = yaml.safe_load(text) if isinstance(text, str) else None
    except yaml.YAMLError:
        return None
    return config if isinstance(config, Mapping) else None


def configured_integrations(text: Any) -> frozenset[str] | None:
    """integrations.frameworks of a Kueue Configuration given as YAML text; None when it cannot be read."""
    config = _load(text)
    if config is None:
        return None
    integrations = config.get("integrations")
    frameworks = integrations.get("frameworks") if isinstance(integrations, Mapping) else None
    return frozenset(str(f) for f in frameworks) if isinstance(frameworks, list) else frozenset()


def _excluded(text: Any) -> set[str]:
    """resources.excludeResourcePrefixes of a Kueue Configuration given as YAML text."""
    resources = (_load(text) or {}).get("resources")
    prefixes = resources.get("excludeResourcePrefixes") if isinstance(resources, Mapping) else None
    return {str(p) for p in prefixes} if isinstance(prefixes, list) else set()


def kueue_settings(s: Settings, today: date) -> list[Problem]:
    """LocalQueue namespaces appear once and are not kube-system; an overridden configuration keeps batch/job and MPIJob
    integrations (and is warned about when it enables the fail-closed pod, Deployment or StatefulSet webhooks)."""
    found = []
    setting = s.kubernetes.kueue
    key = f"{s.project}:kubernetes.kueue"
    namespaces = list(setting.local_queue_namespaces)
    duplicates = sorted({n for n in namespaces if namespaces.count(n) > 1})
    if duplicates:
        found.append(
            Problem(f"{key}.localQueueNamespaces", duplicates, "each namespace once", "remove the repeated names")
        )
    if kueue.PROHIBITED_NAMESPACE in namespaces:
        found.append(
            Problem(
                f"{key}.localQueueNamespaces",
                kueue.PROHIBITED_NAMESPACE,
                "a namespace Kueue can manage (not kube-system: Kueue refuses a job namespace selector matching it)",
                "submit jobs from another namespace and list that one",
            )
        )
    text = _config_override(setting.values)
    if text is not None:
        enabled = configured_integrations(text)
        missing = [n for n in kueue.REQUIRED_INTEGRATIONS if enabled is None or n not in enabled]
        if missing:
            found.append(
                Problem(
                    f"{key}.values.{kueue.CONFIG_VALUE}",
                    "(not a YAML mapping)" if enabled is None else f"integrations.frameworks without {missing}",
                    f"a Kueue Configuration whose integrations.frameworks include {', '.join(missing)}",
                    "add them to integrations.frameworks, or drop the override to keep the toolkit's configuration",
                )
            )
        risky = sorted(set(kueue.FAIL_CLOSED_POD_FRAMEWORKS) & (enabled or frozenset()))
        if risky:
            found.append(
                Problem(
                    f"{key}.values.{kueue.CONFIG_VALUE}",
                    f"integrations.frameworks with {risky}",
                    "only the integrations your jobs use",
                    f"drop {risky} unless you need them: their webhooks then fail closed, and while Kueue is down no "
                    "pod can be created outside kube-system (GPU Operator and DRA driver daemons included)",
                    WARNING,
                )
            )
        kept = set(kueue.EXCLUDED_RESOURCE_PREFIXES) - _excluded(text)
        if enabled is not None and kept:
            found.append(
                Problem(
                    f"{key}.values.{kueue.CONFIG_VALUE}",
                    f"resources.excludeResourcePrefixes without {sorted(kept)}",
                    "the prefixes the GPU-only ClusterQueue leaves out of quota",
                    f"add {sorted(kept)}, or jobs whose pods request them wait with 'resource ... unavailable in "
                    "ClusterQueue'",
                    WARNING,
                )
            )
    return found
