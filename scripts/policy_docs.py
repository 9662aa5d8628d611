"""Regenerate the rules table in docs/policies.md from ultraserver.policy (run from the repo root)."""

from __future__ import annotations

import sys
from pathlib import Path

from ultraserver.policy.docs import render

DOC = Path(__file__).resolve().parent.parent / "docs" / "policies.md"


def main() -> int:
    """Rewrite the table; with --check, exit 1 when it is stale instead."""
    current = DOC.read_text()
    fresh = render(current)
    if "--check" in sys.argv[1:]:
        if fresh != current:
            print(f"{DOC} is stale: run PYTHONPATH=components python scripts/policy_docs.py")
            return 1
        return 0
    DOC.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
