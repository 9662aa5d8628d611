"""A Pulumi project directory and its stack files, read as the Pulumi CLI reads them (offline/engine.py runs them).

Pulumi.yaml gives the name, ``stackConfigDir`` and ``main``; a stack's config is its ``Pulumi.<stack>.yaml``, handed
to the program as the engine hands it: namespaced keys, objects as JSON, secrets marked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ultraserver.config.files import load_yaml, timestamp_problems, without_secrets
from ultraserver.facts.aws import limits
from ultraserver.problems import ConfigError, Described, Problem


@dataclass(frozen=True)
class Project:
    """A Pulumi project directory."""

    directory: Path
    name: str
    stack_config_dir: Path
    main: Path

    def stack_file(self, stack: str) -> Path:
        """The config file of a stack."""
        return self.stack_config_dir / f"Pulumi.{stack}.yaml"

    def stacks(self) -> list[str]:
        """Stacks that have a config file."""
        return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in self.stack_config_dir.glob("Pulumi.*.yaml"))


LAYER_PROJECT = "kubernetes-layer"
"""The project that deploys a separate-stack stack's Kubernetes layer, beside the platform's Pulumi.yaml; it reads the
same stack files."""


def load_project(directory: Path) -> Project:
    """Read Pulumi.yaml (name, stackConfigDir, main)."""
    manifest = directory / "Pulumi.yaml"
    if not manifest.is_file():
        raise ConfigError(
            Problem(
                "project",
                Described(f"no Pulumi.yaml in {directory}"),
                "a Pulumi project directory",
                "run from the project directory or pass --project-dir",
            )
        )
    data = load_yaml(manifest)
    if not isinstance(data, Mapping) or not isinstance(data.get("name"), str):
        raise ConfigError(Problem("Pulumi.yaml", str(data)[:60], "a mapping with name:", "add name: <project>"))
    main = directory / str(data.get("main", "")).strip("/")
    return Project(
        directory,
        str(data["name"]),
        directory / str(data.get("stackConfigDir", ".")),
        main / "__main__.py" if main.is_dir() else main,
    )


def stack_config(project: Project, stack: str) -> tuple[dict[str, str], list[str]]:
    """A stack file's config as the engine hands it to programs: namespaced keys, objects as JSON."""
    path = _stack_file(project, stack)
    data = load_yaml(path)
    found = data.get("config") if isinstance(data, Mapping) else data
    if not isinstance(data, Mapping) or not isinstance(found or {}, Mapping):
        raise ConfigError(
            Problem(
                path.name,
                str(found)[:60],
                "a mapping with a config: mapping of stack keys",
                "write config: followed by indented key: value pairs",
            )
        )
    config: dict[str, str] = {}
    secret_keys: list[str] = []
    problems: list[Problem] = []
    for key, value in (data.get("config") or {}).items():
        if not isinstance(key, str):
            problems.append(Problem(path.name, key, "a text config key", "quote it"))
            continue
        full = key if ":" in key else f"{project.name}:{key}"
        problems += timestamp_problems(full, value)
        value, secret = without_secrets(value)
        if secret:
            secret_keys.append(full)
        try:
            config[full] = value if isinstance(value, str) else json.dumps(value, default=str)
        except ValueError:  # a YAML alias that contains itself
            problems.append(Problem(full, Described("a value that contains itself"), "plain YAML", "remove the alias"))
    if problems:
        raise ConfigError(problems)
    return config, secret_keys


def _stack_file(project: Project, stack: str) -> Path:
    """The stack's file; a stack without one (or named by its file) is refused, naming the stacks there are."""
    # A stack file's name or path (stacks/Pulumi.gb200-x72.yaml) instead of the stack's name.
    named = re.fullmatch(r"(?:.*/)?Pulumi\.(.+)\.ya?ml", stack)
    refused = None if named else limits.stack_name_problem(stack)
    if refused:
        raise ConfigError(refused)
    path = project.stack_file(stack)
    if not named and path.is_file():
        return path
    known = ", ".join(project.stacks()) or "none"
    fix = (
        f"pass the stack's name, --stack {named[1]}, not its file" if named else f"pick one of those or add {path.name}"
    )
    raise ConfigError(Problem("--stack", stack, f"a stack with a file in {project.stack_config_dir} ({known})", fix))
