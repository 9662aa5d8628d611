"""What the installed provider SDKs say about a resource type: its string outputs and its required arguments.

The offline engine answers every output AWS would compute with a labelled placeholder, so no input read from another
resource resolves to None (Pulumi drops such an input and its dependency edge: ``pulumi/runtime/rpc.py``
``serialize_properties``, "We treat properties that serialize to None as if they don't exist"). Which outputs a type
has, and which arguments it requires, is read from the SDK classes the program itself uses, not written down here.

A type token ``pkg:module/name:Type`` finds its class through the resource modules each SDK registers with
``pulumi.runtime.rpc.register_resource_module`` (pulumi_aws and pulumi_kubernetes ``_utilities.register``: ``fqn`` and
``classes`` per module). Types no SDK registers (components, custom resources of CRDs) have none.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from functools import cache
from typing import Any

import pulumi
from pulumi import _types
from pulumi.runtime import rpc


@cache
def resource_class(resource_type: str) -> type | None:
    """The SDK class of a provider resource type, or None when no loaded SDK registers it."""
    package, _, rest = resource_type.partition(":")
    module_name, _, _ = rest.partition(":")
    module = rpc.get_resource_module(package, module_name, "")
    info = getattr(module, "mod_info", None)
    if not isinstance(info, dict) or resource_type not in info.get("classes", {}):
        return None
    found = getattr(importlib.import_module(info["fqn"]), info["classes"][resource_type], None)
    return found if isinstance(found, type) else None


def _is_text(annotation: Any) -> bool:
    """Whether a getter's return annotation is Output[str] or Output[Optional[str]]."""
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is not pulumi.Output or len(args) != 1:
        return False
    inner = args[0]
    return inner is str or (
        typing.get_origin(inner) is typing.Union and set(typing.get_args(inner)) == {str, type(None)}
    )


@cache
def text_outputs(resource_type: str) -> tuple[str, ...]:
    """Pulumi names of a resource type's string outputs (``arn``, ``name``, ``endpoint`` ...), sorted."""
    cls = resource_class(resource_type)
    if cls is None:
        return ()
    names = []
    for attribute in vars(cls).values():
        getter = attribute.fget if isinstance(attribute, property) else None
        pulumi_name = getattr(getter, "_pulumi_name", None)
        if pulumi_name and _is_text(typing.get_type_hints(getter).get("return")):
            names.append(pulumi_name)
    return tuple(sorted(names))


@cache
def required_arguments(resource_type: str) -> tuple[str, ...]:
    """Pulumi names of the arguments a resource type's Args class requires (no default in its constructor)."""
    cls = resource_class(resource_type)
    args_class = getattr(importlib.import_module(cls.__module__), f"{cls.__name__}Args", None) if cls else None
    if args_class is None or not _types.is_input_type(args_class):
        return ()
    to_pulumi = _types.input_type_py_to_pulumi_names(args_class)
    # The first parameter is the instance (the SDKs name it __self__).
    parameters = list(inspect.signature(args_class.__init__).parameters.values())[1:]
    required = [p.name for p in parameters if p.default is inspect.Parameter.empty]
    return tuple(sorted(to_pulumi.get(name, name) for name in required))
