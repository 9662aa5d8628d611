"""Raw Pulumi stack config -> validated ``Settings``, or one ``ConfigError`` listing every problem.

Values may be parsed YAML or the JSON strings the Pulumi engine hands programs. First the model checks each
field's type, bounds and pattern (config.model); when every field is well-formed, the cross-field rules run
(config.rules). Nothing is declared before this returns.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from datetime import date
from typing import Any

from pydantic import ValidationError

from ultraserver import clock
from ultraserver.config.aws_identity import IDENTITY_KEYS, PROFILE_KEY
from ultraserver.config.errors import Shown, problems_from
from ultraserver.config.fields import PROJECT
from ultraserver.config.model import SECTIONS, Settings
from ultraserver.config.rules import run_rules
from ultraserver.problems import ConfigError, Problem, blocking


def _decoded(value: Any) -> Any:
    """A config value as YAML would give it: the engine passes objects, lists and scalars as JSON text."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _inputs(config: Mapping[str, Any], project: str) -> tuple[dict[str, Any], list[Problem]]:
    """The model's input (section -> value) and the problems of keys that are no section."""
    data: dict[str, Any] = {}
    problems: list[Problem] = []
    for full, value in config.items():
        namespace, _, name = str(full).partition(":")
        if full == "aws:region":
            data[full] = value
        elif full in IDENTITY_KEYS:
            data[full] = value if full == PROFILE_KEY else _decoded(value)
        elif namespace == project and name in SECTIONS:
            data[name] = _decoded(value)
        elif namespace != project and namespace.lower() == project.lower():
            # Pulumi config namespaces are case-sensitive: the program would never read this section.
            problems.append(
                Problem(
                    str(full),
                    Shown(_decoded(value)),
                    f"the project's namespace as Pulumi reads it, case and all: {project}:",
                    f"rename it to '{project}:{name}'",
                )
            )
        elif namespace == project:
            close = difflib.get_close_matches(name, SECTIONS, n=1)
            problems.append(
                Problem(
                    str(full),
                    Shown(_decoded(value)),
                    "sections " + ", ".join(SECTIONS),
                    f"did you mean '{project}:{close[0]}'?" if close else "rename or remove it",
                )
            )
    return data, problems


def _today(today: date | None) -> date:
    return today or clock.now().date()


def parse_settings(
    config: Mapping[str, Any], project: str = PROJECT, stack: str = "dev", *, today: date | None = None
) -> Settings:
    """Validate raw stack config (keys like ``ultraserver-eks:cluster`` and ``aws:region``) into Settings.

    Raises ConfigError listing every problem; returns only when the whole stack is valid. ``today`` (UTC
    date by default) decides which Kubernetes versions EKS offers and which AMI releases exist.
    """
    if not isinstance(config, Mapping):
        raise ConfigError(
            Problem("config", Shown(config), "a mapping of stack keys", "write config: as key: value pairs")
        )
    data, problems = _inputs(config, project)
    try:
        settings = Settings.model_validate(
            {"__project": project, "__stack": stack, **data},
            by_name=False,
            context={"project": project, "today": _today(today)},
        )
    except ValidationError as err:
        raise ConfigError(problems + problems_from(err, project)) from None
    problems += blocking(run_rules(settings, _today(today)))
    if problems:
        raise ConfigError(problems)
    return settings


def settings_warnings(settings: Settings, today: date | None = None) -> list[Problem]:
    """Findings that do not block a plan (e.g. a Kubernetes version in paid extended support)."""
    return [p for p in run_rules(settings, _today(today)) if p.level != "error"]
