"""Write tests/fixtures/deployed_urns.json: the URNs a deployed shipped stack holds for the components named, each
with its parent chain, from the offline plans of the code on the path.

A resource whose URN changes is replaced on the next `pulumi up` unless an alias maps its old URN to the new one
(tests/resources/test_deployed_urns.py checks every URN listed here is still declared or aliased). Run it on the
code a refactor starts from, before moving those components:

    git archive main | tar -x -C /tmp/base
    PYTHONPATH=/tmp/base/components python scripts/deployed_urns.py --root /tmp/base TYPE [TYPE ...]

It plans each shipped stack (tests/helpers/stacks.py of this checkout) at the tests' moment (TEST_NOW there).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
OUT = HERE / "tests" / "fixtures" / "deployed_urns.json"


def chains(plan: Any, types: set[str]) -> list[list[str]]:
    """[urn, parent, grandparent, ..., stack] of each resource that is, or is under, a component of `types`."""
    by_urn = plan.by_urn()
    found = []
    for resource in plan.resources:
        chain = [resource.urn]
        while by_urn[chain[-1]].parent:
            chain.append(by_urn[chain[-1]].parent)
        if any(by_urn[urn].type in types for urn in chain):
            found.append(chain)
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("types", nargs="+", help="component type tokens, e.g. ultraserver:index:EventQueue")
    parser.add_argument("--root", type=Path, default=HERE, help="the Pulumi project to plan (default: this checkout)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE / "tests"))
    from helpers.stacks import STACKS, TEST_NOW  # noqa: PLC0415 - the tests' stacks and moment, of this checkout
    from ultraserver.offline import run_plan  # noqa: PLC0415 - from the code on PYTHONPATH

    stacks = {stack: chains(run_plan(args.root, stack, now=TEST_NOW), set(args.types)) for stack in STACKS}
    OUT.write_text(json.dumps({"now": TEST_NOW.isoformat(), "types": args.types, "stacks": stacks}, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(HERE)}: " + ", ".join(f"{s} {len(c)}" for s, c in stacks.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
