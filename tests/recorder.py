"""Records a Pulumi program's resources under mocks, as the PlanResources the policy rules read."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pulumi
from pulumi.runtime import mocks, rpc

from ultraserver.policy import PlanResource


def plain(value: Any) -> Any:
    """Deserialized inputs as JSON-like data (resource references become their URN)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, pulumi.Resource):
        return "<resource>"
    return value


class OfflineMocks(pulumi.runtime.Mocks):
    """Echo inputs as state, IDs as <name>-offline-id; the AMI lookup answers a placeholder."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        """Every resource gets a predictable ID, name and ARN plus its inputs back.

        Outputs left unset resolve to None, and a None input loses its dependency: name and ARN keep the
        links (e.g. a policy attachment to its role) that the real engine records.
        """
        state = {"name": args.name, "arn": f"arn:aws:offline::123456789012:{args.name}", **args.inputs}
        return f"{args.name}-offline-id", state

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list[tuple[str, str]] | None]:
        """Invokes return a placeholder value (enough for SSM parameter lookups)."""
        return {"value": "ami-offline", "id": "offline", "name": args.args.get("name", "")}, []


class RecordingMonitor(mocks.MockMonitor):
    """The mock monitor, keeping each registration's inputs and dependencies."""

    def __init__(self, mock: pulumi.runtime.Mocks) -> None:
        super().__init__(mock)
        self.recorded: list[PlanResource] = []

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        """Register as usual, then record what the engine would have received."""
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            self.recorded.append(PlanResource(
                urn=response.urn, type=request.type, name=request.name, parent=request.parent or None,
                inputs=plain(rpc.deserialize_properties(request.object)),
                dependencies=list(request.dependencies),
                property_dependencies={k: list(v.urns) for k, v in request.propertyDependencies.items()},
            ))
        return response


def record(program: Callable[[], None]) -> list[PlanResource]:
    """Run the program under mocks and return every resource it registered, in order."""
    mock = OfflineMocks()
    monitor = RecordingMonitor(mock)
    pulumi.runtime.set_mocks(mock, project="ultraserver", stack="dev", preview=False, monitor=monitor)
    pulumi.runtime.test(program)()
    return monitor.recorded
