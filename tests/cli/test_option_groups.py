"""The options several subcommands share are declared once each, and show as one group in each command's --help."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest
from ultraserver.cli import build_parser

CLI = Path(__file__).resolve().parents[2] / "components" / "ultraserver" / "cli"
AWS = {"--region", "--profile", "--endpoint-url"}


def groups(command: str) -> dict[str, set[str]]:
    """Each --help group of a subcommand: its title -> the options in it."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser = sub.choices[command]
    return {g.title or "": {a.option_strings[0] for a in g._group_actions} for g in parser._action_groups}


@pytest.mark.parametrize("command", ["preflight", "status", "extend"])
def test_the_aws_options_are_one_group(command: str) -> None:
    assert groups(command)["AWS"] == AWS


@pytest.mark.parametrize("command", ["verify", "status", "extend"])
def test_the_kubeconfig_is_the_cluster_group(command: str) -> None:
    assert groups(command)["cluster"] == {"--kubeconfig"}


def declared(option: str) -> list[str]:
    """The cli modules whose source declares ``option`` (an add_argument call naming it)."""
    found = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"
                and any(isinstance(a, ast.Constant) and a.value == option for a in node.args)
            ):
                found.append(path.name)
    return found


@pytest.mark.parametrize("option", sorted(AWS | {"--kubeconfig", "--now", "--stack"}))
def test_a_shared_option_is_declared_once(option: str) -> None:
    assert declared(option) == ["options.py"]
