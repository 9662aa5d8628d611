"""Problem is the only result type: no check hands its findings over as text.

Two source rules over every module of components/ultraserver and of the example programs, read with ``ast``
(no import, no Pulumi):
- ``ConfigError`` (its subclasses too, and the command line's input errors) is never raised with text: no str
  literal, f-string, string concatenation, ``%``/``.format`` text, or a list/tuple/comprehension of those;
- a function named for its findings (``*_problem(s)``, ``*_refusals``, ``*_violations``) or a policy, preflight,
  verify or status check (``check_*``) never declares text as its result: ``str``, ``str | None``, ``list[str]``,
  ``tuple[str, ...]`` or ``list[tuple[str, str]]`` (the (urn, message) pairs).
Each rule is also run on a small bad sample, so a rule that stopped matching anything fails too.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from ultraserver.problems import ConfigError, Problem

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "components" / "ultraserver"
EXAMPLES = ROOT / "examples"
"""The example programs show users how to raise input errors, so they are held to the same rule."""
ERROR_NAMES = {"ConfigError", "StackConfigError", "UsageError", "ExtendUsageError", "LogFileError"}
"""The errors that carry Problems: ConfigError and its subclasses (checked below to be complete), and the command
line's input errors (an option's value, a log file that cannot be judged)."""
FINDING_SUFFIXES = ("_problem", "_problems", "_refusals", "_violations")
CHECK_PREFIX = "check_"
CHECK_PACKAGES = ("policy", "preflight", "verify", "status")


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield str(path.relative_to(PACKAGE)), ast.parse(path.read_text(), str(path))
    for path in sorted(EXAMPLES.rglob("*.py")):
        yield str(path.relative_to(ROOT)), ast.parse(path.read_text(), str(path))


def _is_text(node: ast.expr) -> bool:
    """An expression that builds text: a str literal, an f-string, text joined with + or %, or str.format/join."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
        return _is_text(node.left) or _is_text(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "join"):
        return _is_text(node.func.value)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return any(_is_text(e) for e in node.elts)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
        return _is_text(node.elt)
    if isinstance(node, ast.IfExp):
        return _is_text(node.body) or _is_text(node.orelse)
    return False


def _called_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def text_errors(tree: ast.Module) -> list[int]:
    """Lines where a ConfigError is built from text."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and _called_name(node) in ERROR_NAMES
        and any(_is_text(arg) for arg in [*node.args, *(k.value for k in node.keywords)])
    ]


def _text_annotation(node: ast.expr | None) -> bool:
    """str, str | None, Optional[str], list/tuple/Sequence of str or of (str, str) tuples."""
    if node is None:
        return False
    source = ast.unparse(node).replace(" ", "")
    text_results = {
        "str",
        "str|None",
        "None|str",
        "Optional[str]",
        "list[str]",
        "tuple[str,...]",
        "Sequence[str]",
        "list[tuple[str,str]]",
        "Iterator[str]",
    }
    return source in text_results


def _is_check(module: str, name: str) -> bool:
    if name.startswith("format_"):
        return False  # a renderer of Problems (format_problems) returns text by design
    return name.endswith(FINDING_SUFFIXES) or (name.startswith(CHECK_PREFIX) and module.split("/")[0] in CHECK_PACKAGES)


def text_checks(module: str, tree: ast.Module) -> list[str]:
    """Checks in ``module`` whose declared result is text."""
    return [
        f"{node.name} (line {node.lineno}) -> {ast.unparse(node.returns)}"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and _is_check(module, node.name)
        and node.returns is not None
        and _text_annotation(node.returns)
    ]


def test_no_config_error_is_built_from_text() -> None:
    found = {module: lines for module, tree in _modules() if (lines := text_errors(tree))}
    assert found == {}, f"raise ConfigError(Problem(...)) instead of text: {found}"


def test_no_check_returns_text() -> None:
    found = {module: checks for module, tree in _modules() if (checks := text_checks(module, tree))}
    assert found == {}, f"return Problems instead of text: {found}"


def test_every_config_error_subclass_is_watched() -> None:
    subclasses = {
        node.name
        for _, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and any(ast.unparse(b) in ERROR_NAMES for b in node.bases)
    }
    assert subclasses <= ERROR_NAMES, f"add {subclasses - ERROR_NAMES} to ERROR_NAMES"
    defined = {
        node.name
        for _, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and node.name in ERROR_NAMES
    }
    assert defined == ERROR_NAMES, f"watched errors the package no longer defines: {ERROR_NAMES - defined}"


BAD_ERRORS = """
raise ConfigError("key: bad")
raise ConfigError(f"{key}: bad")
raise ConfigError("key: " + value)
raise ConfigError([f"{k}: bad" for k in keys])
raise StackConfigError(["a", "b"])
raise errors.ConfigError("{}: bad".format(key))
"""
GOOD_ERRORS = """
raise ConfigError(Problem("key", value, "allowed", "fix"))
raise ConfigError([Problem(f"{at}.key", v, f"at most {n}", "lower it") for v in values])
raise ConfigError(problems)
raise StackConfigError(err.items)
log.warn(f"text is fine outside ConfigError")
"""


def test_the_error_rule_catches_each_text_form_and_passes_problems() -> None:
    assert text_errors(ast.parse(BAD_ERRORS)) == [2, 3, 4, 5, 6, 7]
    assert text_errors(ast.parse(GOOD_ERRORS)) == []


BAD_CHECKS = """
def zone_problem(zone: str) -> str | None: ...
def blocks_problems(blocks) -> list[str]: ...
def check_imdsv2(t, props, opts) -> list[str]: ...
def check_order(resources, opts) -> list[tuple[str, str]]: ...
"""
GOOD_CHECKS = """
def zone_problem(zone: str, key: str) -> Problem | None: ...
def blocks_problems(blocks) -> list[Problem]: ...
def check_imdsv2(t, props, opts) -> list[Problem]: ...
def node_group_names(group) -> list[str]: ...
def check_output(path: str | None) -> None: ...
"""


def test_the_check_rule_catches_text_results_and_passes_problems_and_other_functions() -> None:
    bad = text_checks("policy/x.py", ast.parse(BAD_CHECKS))
    assert [c.split(" ")[0] for c in bad] == ["zone_problem", "blocks_problems", "check_imdsv2", "check_order"]
    assert text_checks("policy/x.py", ast.parse(GOOD_CHECKS)) == []
    # check_ outside the check packages (cli/outputs.py check_output) is not a finding check.
    assert text_checks("cli/outputs.py", ast.parse("def check_output(p) -> str: ...")) == []


def test_config_error_refuses_text_at_run_time_too() -> None:
    with pytest.raises(TypeError, match="ConfigError takes Problems"):
        ConfigError(["key: got 1; allowed: 2; fix: 3"])  # type: ignore[list-item]
    err = ConfigError([Problem("a", 1, "b", "c"), Problem("d", 2, "e", "f")])
    assert [p.key for p in err.items] == ["a", "d"]
    assert str(err) == "a: got 1; allowed: b; fix: c\nd: got 2; allowed: e; fix: f"
