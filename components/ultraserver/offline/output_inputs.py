"""Which inputs of each resource were Outputs of other resources when the program declared them.

The engine's request only shows what survived serialization: Pulumi drops a top-level input whose Output resolved
to None together with its dependency edge (pulumi/runtime/rpc.py ``serialize_properties``: "We treat properties that
serialize to None as if they don't exist", pulumi 3.272.0). A stack transformation sees the inputs as declared,
before that, so the plan can check that every such input arrived and kept its edge.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import pulumi
from pulumi import _types as pulumi_types

from ultraserver.offline import sdk_schema


def _outputs(value: Any, path: str) -> Iterator[tuple[str, pulumi.Output[Any]]]:
    """(path, Output) of every Output inside a declared input: itself, or nested in mappings, lists, Args objects."""
    if isinstance(value, pulumi.Output):
        yield path, value
    elif pulumi_types.is_input_type(type(value)):
        yield from _outputs(pulumi_types.input_type_to_untranslated_dict(value), path)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _outputs(item, f"{path}.{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _outputs(item, f"{path}[{index}]")


class OutputInputs:
    """A stack transformation that notes, per resource URN, the Output-valued inputs and what they came from."""

    def __init__(self) -> None:
        # URN -> engine input name -> URNs of the resources its Outputs came from.
        self.sources: dict[str, dict[str, set[str]]] = {}
        # URN -> paths of declared Outputs that resolved to None (the engine never saw them).
        self.unresolved: dict[str, list[str]] = {}

    def transformation(self, args: pulumi.ResourceTransformationArgs) -> None:
        """Watch every Output in the declared inputs; change nothing."""
        typ = sdk_schema.args_class(args.type_)
        names = pulumi_types.input_type_py_to_pulumi_names(typ) if typ else {}
        for key, value in dict(args.props or {}).items():
            name = names.get(key, key)
            for path, output in _outputs(value, name):
                # The resource has no URN yet: it is read when the value arrives, after the constructor returned.
                note: Callable[[Any], Any] = functools.partial(self._note, args.resource, name, path, output)
                output.apply(note)  # awaited with the program (pulumi.runtime.test)

    async def _note(
        self, resource: pulumi.Resource, name: str, path: str, output: pulumi.Output[Any], value: Any
    ) -> None:
        urn = str(await resource.urn.future())
        sources = {await r.urn.future() for r in await output.resources()}
        # Applies run on the program's event loop, one at a time: no lock needed (the monitor's threads never get here).
        if sources:
            self.sources.setdefault(urn, {}).setdefault(name, set()).update(s for s in sources if s)
        if value is None:
            self.unresolved.setdefault(urn, []).append(path)
