"""What the installed provider SDKs (pulumi_aws, pulumi_kubernetes, pulumi_eks) say about a resource type token.

Read generically, never per type by hand: each SDK registers its modules with the Pulumi runtime
(``_utilities.register``: a map of type token -> Python class), the class's typed ``__init__`` overload names its
Args class, the Args ``__init__`` parameters without a default are the required arguments, and the
``@pulumi.getter(name=...)`` properties give the engine's camelCase names and the output types.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import typing
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi import _types as pulumi_types
from pulumi.runtime import rpc

# Importing the SDKs registers their resource modules (pulumi_aws/__init__.py calls _utilities.register).
for _sdk in ("pulumi_aws", "pulumi_eks", "pulumi_kubernetes"):
    importlib.import_module(_sdk)


@dataclass(frozen=True)
class OutputProperty:
    """One output property of a resource class: the engine's name, its Python type, whether it may be null."""

    name: str
    type: Any
    optional: bool


def resource_class(token: str) -> type | None:
    """The SDK class registered for a type token (``aws:ec2/vpc:Vpc`` -> ``pulumi_aws.ec2.Vpc``), or None."""
    parts = token.split(":")
    if len(parts) != 3:
        return None
    module = rpc.get_resource_module(parts[0], parts[1], "")
    info = getattr(module, "mod_info", None)  # the SDKs' _utilities.Module keeps its registration JSON here
    if not isinstance(info, dict) or token not in info.get("classes", {}):
        return None
    found = getattr(importlib.import_module(info["fqn"]), info["classes"][token], None)
    return found if isinstance(found, type) else None


@functools.cache
def args_class(token: str) -> type | None:
    """The ``@pulumi.input_type`` Args class a resource type is declared with, from its typed ``__init__`` overload."""
    cls = resource_class(token)
    if cls is None:
        return None
    for overload in typing.get_overloads(vars(cls)["__init__"]):
        hint = overload.__annotations__.get("args")
        for candidate in (hint, *typing.get_args(hint)):
            if isinstance(candidate, type) and pulumi_types.is_input_type(candidate):
                return candidate
    return None


@functools.cache
def required_inputs(token: str) -> tuple[str, ...]:
    """The engine (camelCase) names of a resource type's required arguments: Args parameters with no default."""
    args = args_class(token)
    if args is None:
        return ()
    names = pulumi_types.input_type_py_to_pulumi_names(args)
    return tuple(
        names.get(p.name, p.name)
        for p in inspect.signature(vars(args)["__init__"]).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
    )


def _properties(cls: type) -> list[tuple[str, Any]]:
    """(engine name, resolved return type) of each ``@pulumi.getter`` property of a resource or output class."""
    found: dict[str, Any] = {}
    for base in reversed(cls.__mro__):
        for attribute in vars(base).values():
            getter = attribute.fget if isinstance(attribute, property) else None
            name = getattr(getter, "_pulumi_name", None)  # set by pulumi.getter (pulumi/_types.py)
            if isinstance(name, str):
                found[name] = typing.get_type_hints(getter).get("return")
    return list(found.items())


def _unwrap(hint: Any) -> tuple[Any, bool]:
    """``Output[Optional[T]]`` -> (T, True); ``Output[T]`` -> (T, False)."""
    if typing.get_origin(hint) is pulumi.Output:
        hint = typing.get_args(hint)[0]
    inner = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) is typing.Union and len(inner) < len(typing.get_args(hint)):
        return (inner[0] if len(inner) == 1 else Any), True  # a union of several types has no one placeholder
    return hint, False


@functools.cache
def output_properties(cls: type) -> tuple[OutputProperty, ...]:
    """The output properties of a resource class or an ``@pulumi.output_type`` class."""
    return tuple(OutputProperty(name, *_unwrap(hint)) for name, hint in _properties(cls))
