"""Rules of the Kueue settings: LocalQueue namespaces once each, and a replaced Kueue configuration that still
enables the integrations the toolkit's jobs use."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

import yaml

from ultraserver.config.model import Settings
from ultraserver.facts import kueue
from ultraserver.problems import Problem


def _config_override(values: Mapping[str, Any]) -> Any:
    """The user's managerConfig.controllerManagerConfigYaml, or None when not overridden."""
    config = values.get("managerConfig")
    return config.get("controllerManagerConfigYaml") if isinstance(config, Mapping) else None


def configured_integrations(text: Any) -> frozenset[str] | None:
    """integrations.frameworks of a Kueue Configuration given as YAML text; None when it cannot be read."""
    try:
        config = yaml.safe_load(text) if isinstance(text, str) else None
    except yaml.YAMLError:
        return None
    frameworks = config.get("integrations", {}).get("frameworks") if isinstance(config, Mapping) else None
    if not isinstance(frameworks, list):
        return frozenset() if isinstance(config, Mapping) else None
    return frozenset(str(f) for f in frameworks)


def kueue_settings(s: Settings, today: date) -> list[Problem]:
    """LocalQueue namespaces appear once; an overridden configuration keeps batch/job and MPIJob integrations."""
    found = []
    setting = s.kubernetes.kueue
    key = f"{s.project}:kubernetes.kueue"
    namespaces = list(setting.local_queue_namespaces)
    duplicates = sorted({n for n in namespaces if namespaces.count(n) > 1})
    if duplicates:
        found.append(
            Problem(f"{key}.localQueueNamespaces", duplicates, "each namespace once", "remove the repeated names")
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
                    "add them to integrations.frameworks, or drop the override to keep the chart's configuration",
                )
            )
    return found
