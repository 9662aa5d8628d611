"""The earlier URNs a registration claims through its aliases, as the Pulumi engine computes them.

A resource found in the last deployment under one of these URNs is updated in place instead of being replaced. The
engine's rules (pulumi/pulumi pkg/resource/deploy/step_generator.go at 1b5949891b, v3.259.0+14: collapseAliasToUrn
545-584, inheritedChildAlias 590-618, generateAliases 621-651):
- an alias given as a URN is that URN; a spec fills in the resource's own name, type and parent for what it leaves
  out, and an explicit parent that itself took an earlier URN stands for that earlier URN;
- a resource whose parent took an earlier URN also claims its own name under that earlier parent, the parent's name
  prefix replaced by the earlier parent's name ("{parent}-details" children follow a renamed parent), and likewise
  for each of its own aliases.
The engine multiplies by the one earlier URN its parent matched; offline nothing is deployed, so every candidate of
the parent counts. URNs are in the offline engine's form (``make_urn``), so they compare with recorded URNs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

MakeUrn = Callable[[str, str, str], str]


def _name(urn: str) -> str:
    return urn.rsplit("::", 1)[1]


def _type(urn: str) -> str:
    return urn.split("::")[2].split("$")[-1]


def _collapse(
    spec: Any,
    name: str,
    type_: str,
    parent: str,
    stack_urn: str,
    earlier: Mapping[str, Sequence[str]],
    make_urn: MakeUrn,
) -> list[str]:
    """An alias spec as URNs: one per candidate of its parent (the parent itself or an earlier URN it claims)."""
    kind = spec.WhichOneof("parent")
    if kind == "parentUrn" and spec.parentUrn:
        parents = [spec.parentUrn, *earlier.get(spec.parentUrn, ())]
    elif kind == "noParent" and spec.noParent:
        parents = [stack_urn]  # the engine's "no parent" is the root stack, which offline URNs spell out
    else:
        parents = [parent]
    made = [make_urn(p, spec.type or type_, spec.name or name) for p in parents]
    if spec.stack or spec.project:
        stack, project = made[0].split("::")[0].removeprefix("urn:pulumi:"), made[0].split("::")[1]
        prefix = f"urn:pulumi:{spec.stack or stack}::{spec.project or project}::"
        made = [prefix + m.split("::", 2)[2] for m in made]
    return made


def earlier_urns(request: Any, stack_urn: str, earlier: Mapping[str, Sequence[str]], make_urn: MakeUrn) -> list[str]:
    """The URNs a RegisterResource request claims from an earlier deployment (``earlier``: each registered URN's own
    claims), in the engine's order, without repeats."""
    own: list[str] = []
    for alias in request.aliases:
        if alias.WhichOneof("alias") == "urn":
            own.append(alias.urn)
        else:
            own += _collapse(alias.spec, request.name, request.type, request.parent, stack_urn, earlier, make_urn)
    found = list(own)
    parent_name = _name(request.parent) if request.parent else ""
    for before in earlier.get(request.parent, ()):
        for type_, name in [(request.type, request.name)] + [(_type(u), _name(u)) for u in own]:
            if name.startswith(parent_name):
                name = _name(before) + name[len(parent_name) :]
            found.append(make_urn(before, type_, name))
    return list(dict.fromkeys(found))
