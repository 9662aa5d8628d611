"""Shared fixtures: offline plans of the shipped stacks, run once per test session."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.stacks import ROOT, TEST_NOW
from ultraserver import clock
from ultraserver.offline import Plan, run_plan


@pytest.fixture(scope="session", autouse=True)
def pinned_clock() -> Iterator[None]:
    """The clock of every plan and settings check in the session (tests that need another moment pin their own)."""
    with clock.pinned(TEST_NOW):
        yield


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (the Pulumi project directory)."""
    return ROOT


@pytest.fixture(scope="session")
def shipped_plan() -> Callable[[str], Plan]:
    """The offline plan of a shipped stack, computed once per session."""
    cache: dict[str, Plan] = {}

    def get(stack: str) -> Plan:
        if stack not in cache:
            cache[stack] = run_plan(ROOT, stack)
        return cache[stack]

    return get


@pytest.fixture
def plan_with() -> Callable[..., Plan]:
    """The offline plan of a shipped stack with some config keys replaced."""

    def run(stack: str, overrides: dict[str, Any]) -> Plan:
        return run_plan(ROOT, stack, {k if ":" in k else f"ultraserver-eks:{k}": v for k, v in overrides.items()})

    return run
