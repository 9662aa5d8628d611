"""Settings models are values: derived at construction (validators return new values), never changed afterwards."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError
from ultraserver.config.cluster_model import ClusterSettings
from ultraserver.config.kubernetes_model import KubernetesSettings
from ultraserver.config.model import Settings
from ultraserver.config.release_model import ReleaseSettings

CONFIG = Path(__file__).resolve().parents[2] / "components" / "ultraserver" / "config"
MUTATORS = {"__setattr__", "__delattr__", "setattr", "delattr"}


def mutations(tree: ast.AST) -> list[int]:
    """Lines that change an object in place behind pydantic's back: (object.)__setattr__, setattr, __dict__ writes."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            called = node.func
            name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
            if name in MUTATORS:
                found.append(node.lineno)
        targets = node.targets if isinstance(node, ast.Assign) else []
        for target in targets:
            inner = target.value if isinstance(target, ast.Subscript) else target
            if isinstance(inner, ast.Attribute) and inner.attr == "__dict__":
                found.append(node.lineno)
    return sorted(found)


def test_the_mutation_finder_finds_each_form() -> None:
    code = "object.__setattr__(s, 'a', 1)\nsetattr(s, 'a', 1)\ns.__dict__['a'] = 1\nx = s.a\n"
    assert mutations(ast.parse(code)) == [1, 2, 3]


def test_no_settings_module_mutates_a_model() -> None:
    found = {p.name: lines for p in sorted(CONFIG.glob("*.py")) if (lines := mutations(ast.parse(p.read_text())))}
    assert found == {}, "these modules change an object in place at these lines; derive the value in a validator"


def models(model: type[BaseModel], seen: set[type[BaseModel]] | None = None) -> set[type[BaseModel]]:
    """The model and every model its fields hold (through tuples, unions and dicts)."""
    seen = seen if seen is not None else set()
    if model in seen:
        return seen
    seen.add(model)
    for field in model.model_fields.values():
        stack = [field.annotation]
        while stack:
            kind = stack.pop()
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                models(kind, seen)
            stack += list(getattr(kind, "__args__", ()))
    return seen


def test_every_settings_model_is_frozen() -> None:
    found = models(Settings)
    assert ReleaseSettings in found and len(found) > 10
    for model in found:
        assert model.model_config.get("frozen") is True, f"{model.__name__} is not frozen"


def test_a_release_handed_in_is_not_changed() -> None:
    """The stack key is derived on a copy; the caller's release keeps its own (empty) key."""
    given = ReleaseSettings(version="25.3.4")
    settings = KubernetesSettings(gpu_operator=given)
    assert given.settings_key is None
    assert settings.gpu_operator.settings_key == "ultraserver-eks:kubernetes.gpuOperator"
    assert settings.gpu_operator.version == "25.3.4"
    assert KubernetesSettings().node_termination_handler.settings_key == (
        "ultraserver-eks:kubernetes.nodeTerminationHandler"
    )


def test_deployer_access_is_derived_at_construction() -> None:
    assert ClusterSettings(name="a", endpointPublicAccessCidrs=["203.0.113.0/24"]).deployer_access == "public-endpoint"
    assert ClusterSettings(name="a").deployer_access == ""
    given = ClusterSettings(name="a", endpointPublicAccessCidrs=["203.0.113.0/24"], deployerAccess="in-vpc")
    assert given.deployer_access == "in-vpc"
    with pytest.raises(ValidationError):
        given.deployer_access = "public-endpoint"  # type: ignore[misc]
