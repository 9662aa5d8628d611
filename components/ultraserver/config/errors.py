"""Pydantic validation errors as Problems: the stack key as written, the bad value, what is allowed, the fix."""

from __future__ import annotations

import difflib
import re
import typing
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from ultraserver.config.fields import PATTERN_FIXES, PATTERNS, Model
from ultraserver.config.files import SECRET_PLACEHOLDER
from ultraserver.config.model import Settings, known_keys
from ultraserver.problems import Problem

_TYPE_TEXT = {
    "string_type": "a string",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "int_parsing": "a whole number",
    "bool_type": "true or false",
    "float_type": "a number",
    "list_type": "a list",
    "tuple_type": "a list",
    "dict_type": "a mapping (key: value pairs)",
    "model_type": "a mapping (key: value pairs)",
    "model_attributes_type": "a mapping (key: value pairs)",
    "finite_number": "a finite number",
}


def value_text(value: Any) -> str:
    """The bad value as users read it, shortened when huge."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, directly or inside a tuple, list, dict value or Optional."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin is dict and len(args) == 2:
        return _inner_model(args[1])
    for arg in args:
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _field(model: type[BaseModel] | None, alias: str) -> tuple[str, FieldInfo] | None:
    for name, info in (model.model_fields if model else {}).items():
        if alias in (info.alias or name, name):
            return name, info
    return None


class _Where:
    """Where an error points: the key as written (``project:`` stack keys, or ``Model.`` for a model a program
    builds), the field and the model holding the last key."""

    def __init__(self, project: str, loc: tuple[Any, ...], model: type[BaseModel] | None = Settings) -> None:
        self.key = ""
        self.field: FieldInfo | None = None
        self.parent: type[BaseModel] | None = model
        self.parent_key = ""
        self.name = ""
        for part in loc:
            if part == "[key]":
                self.key += " (key)"
                continue
            if isinstance(part, int):
                self.key += f"[{part}]"
                continue
            part = str(part)
            self.parent, self.parent_key, self.name = model, self.key, part
            found = _field(model, part)
            if not self.key:
                self.key = part if ":" in part else f"{project}:{part}" if model is Settings else f"{project}.{part}"
            else:
                self.key += f".{part}"
            self.field = found[1] if found else None
            model = _inner_model(found[1].annotation) if found else None


RENAMED_KEYS = {
    "singleNatGateway": "network.singleNatGateway became network.natGateways (2026-11): write natGateways: single for "
    "true, natGateways: per-zone for false",
    "GpuNodeGroupSettings.instanceType": "remove it: the instance type follows ultraserverType (each UltraServer type "
    "has one: facts/hardware/ultraservers.py)",
}
"""Keys an earlier release accepted, with how to write them now (a stack file or program written for it gets this
fix); a key only one model had is written ``Model.key``."""


def _renamed(parent: type[BaseModel] | None, name: str) -> str | None:
    """How to write a key an earlier release accepted, in either spelling (stack key or Python name)."""
    for spelling in (name, to_camel(name)):
        found = RENAMED_KEYS.get(f"{parent.__name__}.{spelling}" if parent else spelling) or RENAMED_KEYS.get(spelling)
        if found:
            return found
    return None


def _bounds(field: FieldInfo | None) -> str:
    if field is None:
        return ""
    texts = []
    for item in field.metadata:
        for attr, word in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            if getattr(item, attr, None) is not None:
                texts.append(f"{word} {getattr(item, attr)}")
    return " " + " and ".join(texts) if texts else ""


Found = tuple[str, str] | None
"""What is allowed and the fix, or None when the error is of another kind."""


def _choices(ctx: dict[str, Any]) -> list[str | int]:
    """A Literal's choices from pydantic's "'a', 'b' or 'c'" (texts) or "1, 3 or 5" (numbers)."""
    expected = str(ctx.get("expected", ""))
    quoted: list[str | int] = list(re.findall(r"'([^']*)'", expected))
    return quoted or [int(c) for c in re.split(r", | or ", expected) if re.fullmatch(r"-?[0-9]+", c)]


def _key_allowed(kind: str, ctx: dict[str, Any], value: Any, where: _Where, typo: dict[str, str]) -> Found:
    """Errors about which keys or choices exist: missing, unknown, not one of the choices."""
    name = where.name
    if kind == "missing":
        fix = f"add {name} to {where.parent_key or 'the stack config'}"
        if name in typo:
            fix = f"did you mean {name!r}? rename {typo[name]!r} to {name!r}"
        return "a value (this key is required)", fix
    if kind == "extra_forbidden":
        known = known_keys(where.parent) if where.parent else []
        renamed = _renamed(where.parent, name)
        if renamed:
            return "known keys: " + ", ".join(known), renamed
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        return "known keys: " + ", ".join(known), f"did you mean {close[0]!r}?" if close else "remove it"
    if kind == "literal_error":
        choices = _choices(ctx)
        nearest = _closest(value, choices)
        listed = ", ".join(map(str, choices))
        return "one of " + listed, f"use {nearest!r}" if nearest is not None else f"use one of {listed}"
    return None


def _closest(value: Any, choices: list[str | int]) -> str | int | None:
    """The choice nearest a bad value: by size for numbers, by spelling for words (None when nothing is close)."""
    numbers = [c for c in choices if isinstance(c, int)]
    if numbers and isinstance(value, (int, float)) and not isinstance(value, bool):
        return min(numbers, key=lambda c: (abs(c - value), c))
    close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1)
    return next((c for c in choices if close and str(c) == close[0]), None)


def _shape_allowed(kind: str, ctx: dict[str, Any], where: _Where) -> Found:
    """Errors about a value's pattern, length or bounds."""
    name = where.name
    if kind == "string_pattern_mismatch":
        regex = str(ctx.get("pattern"))
        return PATTERNS.get(regex, f"text matching {regex}"), PATTERN_FIXES.get(regex, f"correct {name}")
    unit = "characters" if "string" in kind else "items"
    if kind in ("string_too_long", "too_long"):
        return f"at most {ctx.get('max_length')} {unit}", f"shorten {name}"
    if kind in ("string_too_short", "too_short"):
        return f"at least {ctx.get('min_length')} {unit}", f"add to {name}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        return f"a number{_bounds(where.field)}", f"set {name} within the bounds"
    return None


def _type_allowed(kind: str, error: Any, value: Any, where: _Where) -> tuple[str, str]:
    """Errors about a value's type: YAML's numbers and timestamps where text belongs, empty values, the rest."""
    name = where.name
    if kind == "string_type" and isinstance(value, (int, float)) and not isinstance(value, bool):
        # YAML already dropped trailing zeros: 1.30 arrives as 1.3, so offer both spellings.
        meant = f'"{value}" or "{value}0"' if isinstance(value, float) else f'"{value}"'
        return "a string", f"quote it: {name}: {meant} (YAML reads an unquoted 1.30 as the number 1.3)"
    if kind == "string_type" and isinstance(value, (date, datetime)):
        return "a string", f'quote it: {name}: "{value.isoformat()}" (YAML reads unquoted times as timestamps)'
    text = _TYPE_TEXT.get(kind, str(error.get("msg", "a valid value")))
    if value is None:
        return f"{text} (not empty)", f"give {name} a value, or remove the key to take the default"
    if kind in ("int_type", "int_from_float", "float_type"):
        text += _bounds(where.field)
    return text, f"write {name} as {text}"


def _allowed_and_fix(error: Any, where: _Where, typo: dict[str, str]) -> tuple[str, str]:
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    if kind == "ultraserver":
        return ctx["allowed"], ctx["fix"]
    return (
        _key_allowed(kind, ctx, value, where, typo)
        or _shape_allowed(kind, ctx, where)
        or _type_allowed(kind, error, value, where)
    )


def _models(base: type[BaseModel]) -> dict[str, type[BaseModel]]:
    """Every settings model by class name (a validation error names its model by that name only)."""
    found = {base.__name__: base}
    for sub in base.__subclasses__():
        found.update(_models(sub))
    return found


def program_problems(error: ValidationError) -> list[Problem]:
    """The Problems of a settings model a program built (``GpuNodeGroupSettings(...)``), keyed as the program wrote
    them: ``GpuNodeGroupSettings.root_volume_size_gib``."""
    model = _models(Model).get(error.title)
    return problems_from(error, error.title, model)


def problems_from(error: ValidationError, project: str, model: type[BaseModel] | None = Settings) -> list[Problem]:
    """One Problem per validation error, keyed by the stack key as written (or, with another ``model``, by
    ``project`` and the key as written)."""
    located = [(e, _Where(project, tuple(e["loc"]), model)) for e in error.errors(include_url=False)]
    # An unknown key next to a missing required key is almost always its misspelling.
    typo: dict[str, str] = {}
    extras = {w.key: w for e, w in located if e["type"] == "extra_forbidden"}
    for e, w in located:
        if e["type"] == "missing":
            siblings = [x.name for x in extras.values() if x.parent_key == w.parent_key]
            close = difflib.get_close_matches(w.name, siblings, n=1, cutoff=0.6)
            if close:
                typo[w.name] = close[0]
    problems = []
    for e, w in located:
        allowed, fix = _allowed_and_fix(e, w, typo)
        suggestion = _suggestion(e)
        value = None if e["type"] == "missing" else e.get("input")
        problems.append(Problem(w.key, Shown(value), allowed, fix, suggestion=suggestion))
    return problems


def _suggestion(error: Any) -> Any:
    """The one value a validation error's fix proposes, or None."""
    ctx = error.get("ctx") or {}
    if error["type"] == "ultraserver":
        return ctx.get("suggestion")
    if error["type"] == "literal_error":
        return _closest(error.get("input"), _choices(ctx))
    return None


class Shown:
    """A value whose repr is shortened for messages (a Problem's ``got`` when the raw value may be long)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        if self.value == SECRET_PLACEHOLDER:  # the user wrote ciphertext: name it, never the placeholder
            return "a secret value (encrypted in the stack file; the offline plan cannot read or check it)"
        return value_text(self.value)
