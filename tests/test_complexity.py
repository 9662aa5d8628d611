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


# Functions that came over the limit in the eight-branch merge of session 11, with their figure then: each may only
# get simpler (a ratchet, not a waiver); split them and drop their line. No other function may pass the limit.
OVER_THE_LIMIT = {
    "cli/plan.py:cmd_plan": 16,
    "incluster/drain.py:run_once": 23,
    "incluster/drain_watch.py:check_findings": 30,
    "incluster/spares.py:decide": 29,
    "incluster/spares.py:findings": 17,
    "offline/gpu_placement.py:planned_nodes": 27,
    "offline/references.py:_pod_refs": 23,
    "rehearse/node_failure.py:failure_stage": 31,
    "rehearse/real_api.py:RealApi.put": 16,
    "rehearse/real_api.py:RealApi._established": 16,
    "verify/spares.py:spare_view": 22,
}


def test_no_function_is_over_the_limit() -> None:
    found = {
        f"{p.relative_to(PACKAGE)}:{f.fullname}": f.complexity
        for p in sorted(PACKAGE.rglob("*.py"))
        for f in functions(p.read_text())
        if f.complexity > LIMIT
    }
    grown = {name: figure for name, figure in found.items() if figure > OVER_THE_LIMIT.get(name, LIMIT)}
    assert grown == {}, "split these functions"
    assert set(OVER_THE_LIMIT) <= set(found), "drop the split functions from OVER_THE_LIMIT"
