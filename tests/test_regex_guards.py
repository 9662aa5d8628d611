"""Every pattern that guards a name matches the whole text in ASCII: `re.match` with `$` lets a trailing newline
through, and `\\d`, `\\w` and `str.isdigit` accept digits and letters of other scripts that AWS and Kubernetes refuse.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers.stacks import ROOT

PACKAGE = ROOT / "components" / "ultraserver"


def _sources() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text())) for path in sorted(PACKAGE.rglob("*.py"))]


def _multiline(call: ast.Call) -> bool:
    """re.M: a pattern that scans the lines of a log, where $ is each line's end."""
    return any("M" in ast.unparse(arg) or "MULTILINE" in ast.unparse(arg) for arg in [*call.args[1:], *call.keywords])


def test_no_compiled_pattern_ends_in_dollar_or_uses_unicode_classes() -> None:
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and ast.unparse(node.func) in ("re.compile", "re.match")):
                continue
            first = node.args[0] if node.args else None
            text = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            if text.endswith("$") and not _multiline(node):
                found.append(f"{where} ends in $ (use fullmatch, or \\Z)")
            if re.search(r"\\[dw]", text):
                found.append(f"{where} uses \\d or \\w (use [0-9], [A-Za-z0-9_])")
    assert not found, "\n".join(found)


def test_no_unicode_digit_tests_in_the_package() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path, tree in _sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr in ("isdigit", "isnumeric", "isdecimal")
        and not _guarded_by_isascii(tree, node)
    ]
    assert not found, "str.isdigit accepts other scripts' digits: " + ", ".join(found)


def _guarded_by_isascii(tree: ast.Module, node: ast.Attribute) -> bool:
    """`t.isascii() and t.isdigit()`: the ASCII test first."""
    for parent in ast.walk(tree):
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And) and len(parent.values) >= 2:
            calls = [ast.unparse(v) for v in parent.values]
            target = ast.unparse(node.value)
            if f"{target}.isascii()" in calls and any(c.startswith(f"{target}.{node.attr}") for c in calls):
                return True
    return False


def test_aws_id_patterns_are_ascii() -> None:
    from ultraserver.config.fields import PATTERNS
    from ultraserver.facts.aws import aws_ids

    patterns = [v for k, v in vars(aws_ids).items() if k.isupper() and isinstance(v, str)] + list(PATTERNS)
    assert not [p for p in patterns if re.search(r"\\[dwsb]", p.replace(r"\S", "").replace(r"\s", ""))]
