"""`plan --render`'s checks on what the toolkit applies itself, beside the rendered releases: its own objects and the
upstream manifests it applies from their pins (facts/pins/manifests.py), judged as the releases are.

A pinned manifest's objects are scheduled like a release's (the MPI Operator's controller Deployment, which
pulumi-kubernetes waits for), their references resolved, and their CRDs prune the toolkit's custom resources (the
MPIJob CRD: the check jobs' MPIJobs). The program downloads a pin on preview and up (resources/pinned_manifest.py)
and the offline plan downloads nothing, so the render reads each pin through the reader the command line hands it
(rehearse/pinned_files.py `pinned_bytes`: the verified cached copy, the copy in the stack's manifest mirror the plan
reads, the pinned URL, the Go module at the tag; the digests decide). A pin it cannot read is a warning saying what
was not judged and the command that caches it, never a silent pass. The DRA driver's pins are its chart's crds/
files at the same git blobs (tests/resources/test_pinned_manifest.py), judged with the chart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ultraserver.builders.manifests import documents
from ultraserver.facts.pins.manifests import DRA_DRIVER_CRDS, PinnedManifest, by_file_name
from ultraserver.offline import pod_placement, pruning, references, release_order
from ultraserver.offline.engine import Plan
from ultraserver.offline.gpu_placement import NodeKind
from ultraserver.offline.pod_placement import object_name
from ultraserver.offline.served_apis import Api, api_of, crd_apis, manifest_apis
from ultraserver.problems import ERROR, INFO, WARNING, ConfigError, Described, Problem

ReadPin = Callable[[PinnedManifest, str], bytes]
"""The bytes of a pinned manifest (and where the plan reads it: its URL or a mirror's copy), digest-checked;
ConfigError naming each source tried when none has them."""
FETCH_COMMAND = "python -m ultraserver.rehearse.pinned_files"
"""Reads every pinned manifest and keeps a verified copy where the render reads it."""
Judged = Sequence[tuple[str, Sequence[Mapping[str, Any]]]]
"""(owner, its objects as applied): each rendered release, each pinned manifest."""


def applied_pins(urls: Iterable[str], present: Iterable[Mapping[str, Any]]) -> dict[PinnedManifest, str]:
    """The pins a plan applies (its ``manifests``: pinned URLs or paths in ``kubernetes.manifestMirror``, a pin's file
    name last), each with where the plan reads it, but those whose APIs the CRDs among ``present`` (what the charts
    render) already serve."""
    pins = by_file_name()
    served = crd_apis(present)
    found: dict[PinnedManifest, str] = {}
    for url in urls:
        pin = pins.get(url.rsplit("/", 1)[-1])
        if pin is not None and pin not in found and not manifest_apis([pin.url]) <= served:
            found[pin] = url
    return found


def pinned_objects(
    urls: Iterable[str], present: Iterable[Mapping[str, Any]], read: ReadPin
) -> tuple[list[tuple[str, list[dict[str, Any]]]], list[Problem]]:
    """(pin name, its objects) of each pin the plan applies (applied_pins) but the DRA driver's, which its chart holds
    (judged with the release, and not read again where the release fails to render), and a warning for each one
    ``read`` cannot give."""
    found: list[tuple[str, list[dict[str, Any]]]] = []
    unread: list[Problem] = []
    for pin, where in applied_pins(urls, present).items():
        if pin in DRA_DRIVER_CRDS.values():
            continue
        try:
            found.append((pin.name, documents(read(pin, where))))
        except ConfigError as error:
            unread.append(_unread(pin, "; ".join(str(p.value) for p in error.items)))
    return found, unread


def _unread(pin: PinnedManifest, why: str) -> Problem:
    return Problem(
        pin.name,
        Described(
            f"not read ({why}): where its workloads' pods land and which fields of the toolkit's custom resources "
            "its CRDs prune are NOT judged"
        ),
        "the pinned file, read and digest-checked (a verified copy is kept once read)",
        f"fetch it once with `{FETCH_COMMAND}` (its pinned URL, else its Go module through the Go module proxy), "
        "then render again",
        WARNING,
    )


def stored(
    bodies: Iterable[Mapping[str, Any]], schemas: Mapping[Api, Any]
) -> tuple[list[Mapping[str, Any]], list[tuple[Mapping[str, Any], str]]]:
    """The objects as the API server stores them (custom resources pruned to their CRD's schema), and (object, dotted
    path) of each field it prunes (offline/pruning.py)."""
    kept, found = [], []
    for body in bodies:
        schema = schemas.get(api_of(body))
        if schema is None:
            kept.append(body)
            continue
        stored_body, paths = pruning.pruned(body, schema)
        kept.append(stored_body)
        found += [(body, path) for path in paths]
    return kept, found


def pruned_problem(owner: str, body: Mapping[str, Any], path: str) -> Problem:
    """A field the API server prunes from ``owner``'s object (a release's resource, or the stack's own)."""
    placement = pruning.placement_field(path)
    return Problem(
        f"{owner}: {object_name(body)}",
        Described(f"{path}: a field its CRD's schema does not declare, which the API server prunes"),
        "fields of the custom resource's schema"
        + (
            ": under tolerations, nodeSelector, affinity, resources or env a dropped field changes what runs"
            if placement
            else ""
        ),
        "fix the spelling of the value that renders it, or remove it",
        ERROR if placement else WARNING,
    )


def stack_problems(
    plan: Plan, judged: Judged, pinned: Judged, nodes: Sequence[NodeKind], schemas: Mapping[Api, Any]
) -> list[Problem]:
    """What the checks across the rendered releases (``judged``) and the pinned manifests find: their order,
    references, the fields the API server prunes from the toolkit's own custom resources, and where the pods of the
    toolkit's objects and of the pinned manifests land."""
    problems = release_order.order_problems(plan, judged)
    objects = pod_placement.toolkit_objects(plan)
    problems += references.reference_problems([*judged, *pinned], objects)
    # Kueue's queues and flavors, ComputeDomains, MPIJobs, ... against the CRDs the charts and the pins install; the
    # pods of the stored objects are placed (a pruned toleration no longer tolerates).
    owner = f"{plan.project}/{plan.stack}"
    kept, pruned = stored(objects, schemas)
    problems += [pruned_problem(owner, body, path) for body, path in pruned]
    if any(kind.gpu for kind in nodes):
        problems += pod_placement.placement_problems(owner, pod_placement.toolkit_pods(kept), nodes)
        for name, bodies in pinned:
            # Applied by a ConfigGroup: pulumi-kubernetes waits for their workloads as for the toolkit's own.
            problems += pod_placement.placement_problems(name, pod_placement.toolkit_pods(bodies), nodes)
    elif judged:
        where = f"none in the plan of {plan.project}/{plan.stack}: pod placement and release waits not judged "
        why = "(plan the platform project's stack, which joins its Kubernetes layer)"
        problems.append(Problem("GPU nodes", Described(where + why), "", "", INFO))
    return problems
