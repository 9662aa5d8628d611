"""Every AWS operation a status or extend test makes the code call is in the IAM table of those commands.

tests/status/test_permissions.py checks each command's own row (extend without --yes buys nothing).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.permissions import recorded_operations, unlisted


@pytest.fixture(autouse=True)
def iam_actions_listed() -> Iterator[None]:
    with recorded_operations() as seen:
        yield
    missing = unlisted(seen, "status", "extend --yes")
    assert not missing, f"add {missing} to facts/aws/permissions.py (OPERATION_ACTIONS, COMMAND_ACTIONS)"
