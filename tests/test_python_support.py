"""Supported Pythons are stated once (requires-python) and the classifiers, ruff, mypy and CI agree."""

from __future__ import annotations

import tomllib

import pytest
from helpers.modules import load_file
from helpers.stacks import ROOT

check = load_file(ROOT / "scripts" / "check_python_support.py")


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_shipped_pyproject_is_consistent() -> None:
    assert check.problems(pyproject()) == []


def test_ci_resolves_constraints_on_both_ends() -> None:
    run = (ROOT / ".ci" / "run").read_text()
    assert "python scripts/check_python_support.py --resolve" in run


def test_supported_minors_from_requires_python() -> None:
    assert check.supported_minors(">=3.11,<3.14") == [11, 12, 13]
    with pytest.raises(ValueError, match="expected the form"):
        check.supported_minors(">=3.11")


def test_classifier_outside_requires_python_is_a_problem() -> None:
    data = pyproject()
    data["project"]["classifiers"] = [*data["project"]["classifiers"], "Programming Language :: Python :: 3.10"]
    assert any("classifiers name Python 3.10" in p for p in check.problems(data))


def test_requires_python_wider_than_ruff_target_is_a_problem() -> None:
    data = pyproject()
    data["project"]["requires-python"] = ">=3.10,<3.14"
    found = check.problems(data)
    assert any("target-version" in p for p in found)
    assert any("classifiers" in p for p in found)


def test_requirements_list_the_test_extra() -> None:
    reqs = check.requirements(pyproject())
    assert any(r.startswith("hypothesis") for r in reqs)
    assert any(r.startswith("pulumi>=") for r in reqs)
