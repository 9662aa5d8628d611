"""Public arguments checked against their own annotations where a program hands them in.

A dataclass does not check the types of its fields, and Pulumi takes a string where a list is expected as a list of
one-character strings: a program's wrong type would be declared, or fail deep inside with a traceback. Every public
dataclass (a component's Args, and the facts a program hands in: EFA interfaces, blocks, devices) is declared
``@checked(...)``: an unknown or missing argument, a wrong type and the class's own ``problems()`` raise one
``ConfigError`` naming the argument, before anything is declared. Pulumi is read only when an annotation names it
(``pulumi.Input``, ``pulumi.Output``), so the facts that use this do not load it.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import types
import typing
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from ultraserver.problems import ConfigError, Described, Problem

Args = TypeVar("Args")

_WORDS = {str: "a string", int: "a whole number", bool: "true or false", float: "a number"}


def _plural(hint: Any) -> str:
    """Items of a list or mapping: "strings", "strings or Outputs"."""
    return " or ".join(w.removeprefix("a ").removeprefix("an ") + "s" for w in _words(hint).split(" or "))


def _words(hint: Any) -> str:
    """A type as a program's author reads it."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        shown = [_words(a) for a in args if a is not type(None) and typing.get_origin(a) is not Awaitable]
        return " or ".join(dict.fromkeys(shown)) + (" (or None)" if type(None) in args else "")
    if origin is typing.Literal:
        return "one of " + ", ".join(map(str, args))
    if origin in (list, tuple, typing.get_origin(typing.Sequence[int])):
        return f"a list of {_plural(args[0])}" if args else "a list"
    if origin in (dict, typing.get_origin(typing.Mapping[int, int])):
        return f"a mapping of {_plural(args[0])} to {_plural(args[1])}" if args else "a mapping"
    if _is_output(hint) or _is_output(origin):
        return "an Output"
    return _WORDS.get(hint, getattr(hint, "__name__", str(hint)))


def _fits_items(value: Any, origin: Any, args: tuple[Any, ...]) -> bool | None:
    """Whether a list or mapping and its items fit; None when the hint is neither."""
    if origin in (list, tuple, typing.get_origin(typing.Sequence[int])):
        if not isinstance(value, (list, tuple)):
            return False
        items = args[:1] if origin is not tuple or (len(args) == 2 and args[1] is Ellipsis) else ()
        return all(fits(v, items[0]) for v in value) if items else True
    if origin in (dict, typing.get_origin(typing.Mapping[int, int])):
        if not isinstance(value, Mapping):
            return False
        return all(fits(k, args[0]) and fits(v, args[1]) for k, v in value.items()) if args else True
    return None


def _fits_plain(value: Any, hint: Any) -> bool:
    """Whether a value is of a plain type: a number that is not a bool, None, or an instance of a class."""
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is type(None):
        return value is None
    return isinstance(value, hint)


def _is_output(hint: Any) -> bool:
    """Whether a hint is Pulumi's Output (without importing Pulumi)."""
    return getattr(hint, "__name__", None) == "Output" and getattr(hint, "__module__", "").startswith("pulumi")


def fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` is of the annotated type (items of lists and mappings included)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or isinstance(hint, typing.TypeVar):
        return True
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, a) for a in args)
    if origin is typing.Literal:
        return value in args
    if _is_output(hint) or _is_output(origin):
        return isinstance(value, hint if origin is None else origin)
    if origin is Awaitable:
        return isinstance(value, Awaitable)
    items = _fits_items(value, origin, args)
    return _fits_plain(value, origin or hint) if items is None else items


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type, annotated: Any = None) -> dict[str, Any]:
    """The annotations of an Args class (or of ``annotated``, a component's __init__), resolved once per class
    (``pulumi.Input`` refers to ``Output`` and ``T`` by name)."""
    if cls not in _HINTS:
        pulumi = sys.modules.get("pulumi")  # loaded by the module of any class whose annotations name it
        output = {"Output": pulumi.Output} if pulumi is not None else {}
        _HINTS[cls] = typing.get_type_hints(annotated or cls, localns={**output, "T": Any})
    return _HINTS[cls]


def argument_problems(args: Any) -> list[Problem]:
    """One Problem per argument of a component's Args dataclass whose value is not of its annotated type."""
    hints = _hints(type(args))
    name = type(args).__name__
    return [
        Problem(
            f"{name}.{field.name}",
            Described(f"{type(value).__name__} {value!r}"[:80]),
            _words(hints[field.name]),
            f"pass {field.name} as {_words(hints[field.name])}",
        )
        for field in dataclasses.fields(args)
        if field.init and not fits(value := getattr(args, field.name), hints[field.name])
    ]


def _call_problems(
    name: str, signature: inspect.Signature, moved: Mapping[str, str], call: tuple[Any, ...], kwargs: dict[str, Any]
) -> list[Problem]:
    """Arguments the class does not take (with where an earlier release's argument went) or misses."""
    known = [p for p in signature.parameters if p != "self"]
    unknown = [key for key in kwargs if key not in signature.parameters]
    if unknown:
        return [
            Problem(
                f"{name}.{key}",
                Described(f"{type(kwargs[key]).__name__} {kwargs[key]!r}"[:80]),
                "the arguments " + ", ".join(known),
                moved.get(key, "remove it"),
            )
            for key in unknown
        ]
    try:
        signature.bind(*call, **kwargs)
    except TypeError as error:
        return [Problem(name, Described(str(error)), "the arguments " + ", ".join(known), "pass the missing ones")]
    return []


def moved_into(model: str, *names: str, **renamed: str) -> dict[str, str]:
    """Where arguments an earlier release took went: into ``settings=<model>(...)`` under the same name (``names``) or
    as written in ``renamed`` (old name -> what to write)."""
    written = {name: f"{name}=..." for name in names} | renamed
    return {name: f"it moved into settings={model}(...): write {text}" for name, text in written.items()}


def checked(moved: Mapping[str, str] | None = None) -> Callable[[type[Args]], type[Args]]:
    """Check a dataclass's arguments where a program hands them in: names, types, then its ``problems()`` (if any).

    ``moved`` names the arguments an earlier release took and says where each went (a program written for it is
    told what to write instead).
    """

    def wrap(cls: type[Args]) -> type[Args]:
        init = cls.__init__
        signature = inspect.signature(init)

        @functools.wraps(init)
        def __init__(*call: Any, **kwargs: Any) -> None:
            problems = _call_problems(cls.__name__, signature, moved or {}, call, kwargs)
            if problems:
                raise ConfigError(problems)
            init(*call, **kwargs)
            self = call[0]
            problems = argument_problems(self) or getattr(self, "problems", list)()
            if problems:
                raise ConfigError(problems)

        setattr(cls, "__init__", __init__)  # noqa: B010 - mypy refuses assigning a method
        return cls

    return wrap


def checked_component(cls: type[Args]) -> type[Args]:
    """Check how a program calls a component (``Network("net", NetworkArgs(...), opts)``): a missing, extra or
    misplaced argument, or one of another type (``opts`` as a dict), raises one ConfigError naming it, where Pulumi
    would end the program with a TypeError."""
    init = cls.__init__
    signature = inspect.signature(init)
    name = cls.__name__

    @functools.wraps(init)
    def __init__(*call: Any, **kwargs: Any) -> None:
        hints = _hints(cls, init)
        try:
            bound = signature.bind(*call, **kwargs)
        except TypeError as error:
            known = ", ".join(p for p in signature.parameters if p != "self")
            raise ConfigError(
                Problem(name, Described(str(error)), f"the arguments {known}", f"call {name}({known})")
            ) from None
        problems = [
            Problem(
                f"{name}.{key}",
                Described(f"{type(value).__name__} {value!r}"[:80]),
                _words(hints[key]),
                f"pass {key} as {_words(hints[key])} ({name}({', '.join(p for p in hints if p != 'return')}))",
            )
            for key, value in list(bound.arguments.items())[1:]
            if key in hints and not fits(value, hints[key])
        ]
        if problems:
            raise ConfigError(problems)
        init(*call, **kwargs)

    setattr(cls, "__init__", __init__)  # noqa: B010 - mypy refuses assigning a method
    return cls
