"""Loading a script or an example's module from its file (they are not packages on the import path)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType


def load_file(path: Path, name: str | None = None) -> ModuleType:
    """The module of a Python file, executed once per call (so a test gets a fresh copy)."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
