"""Record the AWS operations the code asks its (Stubber- or moto-backed) clients, and check them against the
IAM table of facts/aws/permissions.py."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from botocore.client import BaseClient
from ultraserver.facts.aws.permissions import COMMAND_ACTIONS, OPERATION_ACTIONS

Operation = tuple[str, str]  # (botocore service name, API operation)


@contextmanager
def recorded_operations() -> Iterator[list[Operation]]:
    """Every API operation the ultraserver package asks a botocore client inside the block (stubbed calls included).

    Calls a test makes itself (moto set-up: CreateVpc, PutParameter) are left out: only calls with an
    ``ultraserver`` module on the stack count.
    """
    seen: list[Operation] = []
    original = BaseClient._make_api_call

    def record(client: Any, operation_name: str, api_params: Any) -> Any:
        if _from_package():
            seen.append((client.meta.service_model.service_name, operation_name))
        return original(client, operation_name, api_params)

    with mock.patch.object(BaseClient, "_make_api_call", record):
        yield seen


def _from_package() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith("ultraserver."):
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def unlisted(seen: list[Operation], *commands: str) -> list[str]:
    """The operations whose IAM action is in no table row, or not among the actions of ``commands``."""
    allowed = {action for command in commands for action in COMMAND_ACTIONS[command]}
    return sorted({f"{s}:{o}" for s, o in seen if OPERATION_ACTIONS.get((s, o)) not in allowed})


def actions(seen: list[Operation]) -> set[str]:
    """The IAM actions of the recorded operations."""
    return {OPERATION_ACTIONS.get(op, f"{op[0]}:{op[1]}") for op in seen}
