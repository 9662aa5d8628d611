"""Which values key paths a Helm chart's templates read, for scripts/regen_upstream_fixtures.py (regen time only).

A static reading of the Go template actions, enough for the test that every key the toolkit sets is read by a template
(tests/builders/test_template_reads.py). It finds `.Values.a.b` and `$.Values.a.b`, `index .Values.a "b-c"`,
variables bound to a values path (`$x := .Values.a`, then `$x.b`), and paths relative to a `with .Values.a` block
(`.b` inside it). A path is read "whole" when its value is used as data (output, toYaml, range, assignment, an
argument) rather than only tested by `if` or opened by `with`; a `with` head counts as whole when its body uses `.`
itself. A chart's Chart.yaml dependency conditions (`nfd.enabled`) are reads too, and a subchart's templates read
under the subchart's name; a dependency not vendored in charts/ is taken to read its whole subtree (unverified).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

_ACTION = re.compile(r"\{\{-?(.*?)-?\}\}", re.S)
_COMMENT = re.compile(r"^\s*/\*.*\*/\s*$", re.S)
_FIELDS = r"((?:\.[A-Za-z_]\w*)*)"
# `.Values`, `$.Values` and `$root.Values` (a variable bound to the root context).
_ABSOLUTE = re.compile(r"(?:\$\w*|(?<![\w)\]]))\.Values" + _FIELDS)
_INDEX = re.compile(r"index\s+(?:\$\w*)?\.Values" + _FIELDS + r'((?:\s+"[^"]*")+)')
_RELATIVE = re.compile(r"(?<![\w$)\].])\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
_BARE_DOT = re.compile(r"(?<![\w$)\].])\.(?=[\s)|]|$)")
_ASSIGN = re.compile(r"\$(\w+)\s*:?=\s*(?:\$\w*)?\.Values" + _FIELDS)
_VARIABLE = re.compile(r"\$(\w+)((?:\.[A-Za-z_]\w*)+)")
_BUILTINS = ("Values", "Release", "Chart", "Capabilities", "Template", "Files", "Subcharts")
_OPENERS = ("if", "with", "range", "define", "block")
_TESTS = ("if", "else if", "with", "else with")
"""Keywords whose head only tests or opens a path (its value is not output as a whole)."""


@dataclass
class Reads:
    """What one chart's templates read."""

    paths: set[str] = field(default_factory=set)
    """Every values key path read, tested or used."""
    whole: set[str] = field(default_factory=set)
    """Paths whose whole value (subtree included) is used as data."""


@dataclass
class _Block:
    keyword: str
    base: str | None
    """The values path `.` stands for inside the block, None when it is not a values path."""
    head: str | None = None
    """A `with` head's values path, counted whole if the body uses `.` itself."""


def _join(base: str, rest: str) -> str:
    return f"{base}.{rest}" if base and rest else base or rest


def _keyword(action: str) -> tuple[str, str]:
    """The action's keyword (if, with, range, define, block, else, end, or '') and the rest of it."""
    word, _, rest = action.strip().partition(" ")
    if word == "else" and rest.strip().split(" ", 1)[0] in ("if", "with"):
        return "else " + rest.strip().split(" ", 1)[0], rest.strip().partition(" ")[2]
    return (word, rest) if word in (*_OPENERS, "else", "end") else ("", action)


def _refs(text: str, base: str | None, variables: dict[str, str]) -> list[str]:
    """The values paths one action's text names."""
    found = [m.group(1).lstrip(".") for m in _ABSOLUTE.finditer(text)]
    for m in _INDEX.finditer(text):
        found.append(_join(m.group(1).lstrip("."), ".".join(re.findall(r'"([^"]*)"', m.group(2)))))
    if base is not None:
        relative = (m.group(1) for m in _RELATIVE.finditer(text))
        found += [_join(base, r) for r in relative if r.split(".")[0] not in _BUILTINS]
    bound = ((m.group(1), m.group(2)) for m in _VARIABLE.finditer(text))
    found += [_join(variables[name], rest.lstrip(".")) for name, rest in bound if name in variables]
    return [path for path in found if path]


def _enter(stack: list[_Block], keyword: str, rest: str, refs: list[str]) -> None:
    """Open, switch or close a block for one control action."""
    outer = stack[-2].base if len(stack) > 1 else ""
    if keyword == "end":
        if len(stack) > 1:
            stack.pop()
    elif keyword == "else" and stack[-1].keyword == "with":
        stack[-1] = _Block("with", outer)  # `else` of a `with` runs with the outer `.`
    elif keyword in ("with", "else with"):
        head = refs[0] if len(refs) == 1 and rest.strip().startswith((".", "$.")) else None
        if keyword == "else with":
            stack.pop()
        stack.append(_Block("with", head, head))
    elif keyword in ("if", "range", "define", "block"):
        stack.append(_Block(keyword, stack[-1].base if keyword == "if" else None))


def _with_used_whole(stack: list[_Block], text: str) -> str | None:
    """The head of the innermost `with` when this action uses its `.` itself (toYaml ., include "x" .)."""
    inner = next((b for b in reversed(stack) if b.keyword == "with"), None)
    if inner is None or inner.head is None or inner.base != stack[-1].base or not _BARE_DOT.search(text):
        return None
    return inner.head


def read_template(text: str, reads: Reads, prefix: str = "") -> None:
    """Add the values paths one template file reads (under `prefix`, a subchart's name) to `reads`."""
    stack: list[_Block] = [_Block("", "")]
    variables: dict[str, str] = {}
    for match in _ACTION.finditer(text):
        action = match.group(1)
        if _COMMENT.match(action):
            continue
        keyword, rest = _keyword(action)
        variables.update((m.group(1), m.group(2).lstrip(".")) for m in _ASSIGN.finditer(action))
        refs = _refs(rest, stack[-1].base, variables)
        reads.paths.update(_join(prefix, r) for r in refs)
        if keyword not in _TESTS:
            reads.whole.update(_join(prefix, r) for r in refs)
        whole = _with_used_whole(stack, rest) if keyword not in ("with", "define", "block", "end") else None
        if whole is not None:
            reads.whole.add(_join(prefix, whole))
        if keyword:
            _enter(stack, keyword, rest, refs)


_TEMPLATE_SUFFIXES = (".yaml", ".yml", ".tpl")
"""Template files that render objects (NOTES.txt only prints text after an install)."""


def chart_reads(files: dict[str, str]) -> Reads:
    """Reads of a chart from its files (path relative to the chart folder -> text): its templates/, each subchart's
    charts/<name>/templates/ (read under the dependency's alias or name) and its Chart.yaml dependency conditions."""
    chart = yaml.safe_load(files["Chart.yaml"]) or {}
    dependencies = chart.get("dependencies") or []
    prefixes = {d["name"]: d.get("alias") or d["name"] for d in dependencies}
    reads = Reads()
    for path, text in sorted(files.items()):
        parts = path.split("/")
        if not path.endswith(_TEMPLATE_SUFFIXES):
            continue
        if parts[0] == "templates":
            read_template(text, reads)
        elif len(parts) > 3 and parts[0] == "charts" and parts[2] == "templates" and parts[1] in prefixes:
            read_template(text, reads, prefixes[parts[1]])
    for dependency in dependencies:
        reads.paths.update(c.strip() for c in str(dependency.get("condition", "")).split(",") if c.strip())
        if not any(path.startswith(f"charts/{dependency['name']}/") for path in files):
            # Fetched from its repository when the chart is packaged: its templates are not here, and Helm hands it
            # its whole subtree.
            reads.whole.add(prefixes[dependency["name"]])
    return reads
