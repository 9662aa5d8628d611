"""No function of the package is over cyclomatic complexity 15 as radon counts it (ruff's C901 counts differently:
radon adds boolean operators and comprehension conditions)."""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Function

PACKAGE = Path(__file__).resolve().parents[1] / "components" / "ultraserver"
LIMIT = 15


def functions(source: str) -> list[Function]:
    """Every function and method radon sees in a module (radon's blocks also hold each class, with a summed figure)."""
    return [block for block in cc_visit(source) if isinstance(block, Function)]


def too_complex(source: str) -> list[str]:
    return [f"{f.fullname}:{f.lineno} ({f.complexity})" for f in functions(source) if f.complexity > LIMIT]


def test_the_count_sees_a_complex_method() -> None:
    branches = "".join(f"        if x == {i} and y:\n            return {i}\n" for i in range(8))
    source = f"class A:\n    def f(self, x, y):\n{branches}        return -1\n"
    assert too_complex(source) == ["A.f:2 (17)"]


def test_no_function_is_over_the_limit() -> None:
    found = {
        str(p.relative_to(PACKAGE)): functions
        for p in sorted(PACKAGE.rglob("*.py"))
        if (functions := too_complex(p.read_text()))
    }
    assert found == {}, "split these functions"
