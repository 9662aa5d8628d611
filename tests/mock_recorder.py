"""Pulumi mocks that record every registered resource with its inputs and dependency URNs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi.runtime
from pulumi.runtime import mocks


@dataclass
class Registered:
    """One RegisterResource request as the engine would see it."""

    type: str
    name: str
    urn: str = ""
    dependencies: list[str] = field(default_factory=list)
    provider: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)


class Recorder(pulumi.runtime.Mocks):
    """Mocks that echo inputs back as outputs and keep a record per resource."""

    def __init__(self) -> None:
        self.resources: list[Registered] = []
        self._by_name: dict[tuple[str, str], Registered] = {}

    def note_request(self, type_: str, name: str, dependencies: list[str], provider: str) -> None:
        """Keep the monitor-level facts of one registration."""
        record = Registered(type_, name, dependencies=dependencies, provider=provider)
        self.resources.append(record)
        self._by_name[(type_, name)] = record

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        """Record the inputs of a custom resource and return them as its state."""
        self._by_name[(args.typ, args.name)].inputs = dict(args.inputs)
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list[tuple[str, str]] | None]:
        """No invokes are expected from the Kubernetes layer."""
        return {}, None

    def of_type(self, type_: str) -> list[Registered]:
        """Every recorded resource of one type token."""
        return [r for r in self.resources if r.type == type_]

    def one(self, type_: str, name_part: str = "") -> Registered:
        """The single resource of `type_` whose name contains `name_part`."""
        found = [r for r in self.of_type(type_) if name_part in r.name]
        assert len(found) == 1, f"{len(found)} {type_} resources match {name_part!r}: {[r.name for r in found]}"
        return found[0]


class _Monitor(mocks.MockMonitor):
    """Monitor passing each request's dependency URNs to the recorder."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__(recorder)
        self._recorder = recorder

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        self._recorder.note_request(request.type, request.name, list(request.dependencies), request.provider)
        response = super().RegisterResource(request)
        self._recorder._by_name[(request.type, request.name)].urn = response.urn
        return response


def run_program(program: Callable[[], Any]) -> Recorder:
    """Run `program` under fresh mocks (not a preview) and return what it registered."""
    recorder = Recorder()
    pulumi.runtime.settings.ROOT.set(None)
    pulumi.runtime.set_mocks(recorder, "ultraserver", "test", preview=False, monitor=_Monitor(recorder))

    @pulumi.runtime.test
    def wrapped() -> Any:
        return program()

    wrapped()
    return recorder
