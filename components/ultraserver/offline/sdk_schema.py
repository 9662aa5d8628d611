"""What the installed provider SDKs say about a resource type: its class, Args class, required arguments, outputs.

The offline engine answers every output AWS would compute with a labelled placeholder, so no input read from another
resource resolves to None (Pulumi drops such an input and its dependency edge: ``pulumi/runtime/rpc.py``
``serialize_properties``, "We treat properties that serialize to None as if they don't exist", pulumi 3.272.0).
Which outputs a type has, and which arguments it requires, is read from the SDK classes the program itself uses, not
written down here.

A type token ``pkg:module/name:Type`` finds its class through the resource modules each SDK registers with
``pulumi.runtime.rpc.register_resource_module`` (pulumi_aws, pulumi_eks and pulumi_kubernetes ``_utilities.register``:
``fqn`` and ``classes`` per module). The class's typed ``__init__`` overload names its Args class (``EventTargetArgs``;
pulumi_kubernetes's core types use ``NamespaceInitArgs``). Types no SDK registers (components, custom resources of
CRDs) have none.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from dataclasses import dataclass
from functools import cache
from typing import Any

import pulumi
from pulumi import _types
from pulumi.runtime import rpc


@dataclass(frozen=True)
class OutputProperty:
    """One output property of a resource or output class: the engine's name, its Python type, whether it may be
    null (``Output[Optional[T]]``)."""

    name: str
    type: Any
    optional: bool


@cache
def resource_class(resource_type: str) -> type | None:
    """The SDK class of a provider resource type (or of a provider, ``pulumi:providers:kubernetes``), or None when no
    loaded SDK registers it."""
    package, _, rest = resource_type.partition(":")
    module_name, _, provider = rest.partition(":")
    if package == "pulumi" and module_name == "providers":
        # Providers register as packages (_utilities.register's resource_packages: token, fqn, class).
        info = getattr(rpc.get_resource_package(provider, ""), "pkg_info", None)
        name = info.get("class") if isinstance(info, dict) and info.get("token") == resource_type else None
    else:
        info = getattr(rpc.get_resource_module(package, module_name, ""), "mod_info", None)
        name = info.get("classes", {}).get(resource_type) if isinstance(info, dict) else None
    found = getattr(importlib.import_module(info["fqn"]), name, None) if info and name else None
    return found if isinstance(found, type) else None


@cache
def args_class(resource_type: str) -> type | None:
    """The ``@pulumi.input_type`` Args class of a resource type, from the ``args`` of its typed ``__init__``."""
    cls = resource_class(resource_type)
    init = vars(cls).get("__init__") if cls else None
    for overload in typing.get_overloads(init) if init else ():
        hint = overload.__annotations__.get("args")
        for candidate in (hint, *typing.get_args(hint)):  # Optional[XArgs] in pulumi_kubernetes and pulumi_eks
            if isinstance(candidate, type) and _types.is_input_type(candidate):
                return candidate
    return None


@cache
def required_arguments(resource_type: str) -> tuple[str, ...]:
    """Pulumi names of the arguments a resource type's Args class requires (no default in its constructor)."""
    args = args_class(resource_type)
    if args is None:
        return ()
    to_pulumi = _types.input_type_py_to_pulumi_names(args)
    parameters = inspect.signature(vars(args)["__init__"]).parameters.values()
    required = [p.name for p in parameters if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    return tuple(sorted(to_pulumi.get(name, name) for name in required))


def _unwrap(hint: Any) -> tuple[Any, bool]:
    """``Output[Optional[T]]`` -> (T, True); ``Output[T]`` -> (T, False); a union of several types -> (Any, ...)."""
    if typing.get_origin(hint) is pulumi.Output:
        hint = typing.get_args(hint)[0]
    if typing.get_origin(hint) is not typing.Union:
        return hint, False
    inner = [a for a in typing.get_args(hint) if a is not type(None)]
    return (inner[0] if len(inner) == 1 else Any), len(inner) < len(typing.get_args(hint))


@cache
def output_properties(cls: type) -> tuple[OutputProperty, ...]:
    """The ``@pulumi.getter`` properties of a resource class or an ``@pulumi.output_type`` class.

    The return hints are the SDK's own (``pulumi/_types.py`` ``_raw_return_hints``, cached per class, pulumi 3.272.0
    lines 990-1023): it evaluates them anyway when it resolves a resource's outputs, so evaluating them a second
    time here would double the cost of every class the program uses (about 35 ms of a gb200-x72 plan).
    """
    hints = _types._raw_return_hints(cls)
    return tuple(OutputProperty(name, *_unwrap(hint)) for name, hint in hints.items())
