"""The offline plan: run the real Pulumi program in-process under mocks and record what it would create.

Names load on first use, so ``ultraserver.offline.resource`` (the neutral recorded-resource type the
policy rules read) does not pull in Pulumi's mock engine.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"Plan": "engine", "record": "engine", "run_plan": "engine", "PlanResource": "resource"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ultraserver.offline' has no attribute {name!r}")
    return getattr(importlib.import_module(f"ultraserver.offline.{_EXPORTS[name]}"), name)
