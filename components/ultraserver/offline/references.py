"""References resolve: what a rendered pod, webhook or CronJob names exists in the planned cluster.

A pod whose ServiceAccount or PriorityClass does not exist is refused at creation (the ServiceAccount and Priority
admission plugins); one whose non-optional Secret or ConfigMap volume, env or envFrom source does not exist never
starts (the kubelet keeps it in ContainerCreating or CreateContainerConfigError). A webhook with `failurePolicy: Fail`
whose Service's pods cannot start rejects every request it intercepts
(https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#failure-policy; Fail is the
default of admissionregistration.k8s.io/v1).

What counts as created: every object a rendered release or the toolkit declares, every Secret a hook Job or a
controller of the same release may create (a release with a Role or ClusterRole granting `create` on secrets, as a
certificate controller or a webhook patch job has, is taken to create any Secret of its namespaces), each namespace's
`default` ServiceAccount and the built-in PriorityClasses. A reference into a namespace the plan creates nothing in is
not judged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ultraserver.offline.pod_placement import object_name, pod_spec
from ultraserver.problems import Described, Problem

BUILTIN_PRIORITY_CLASSES = frozenset({"system-node-critical", "system-cluster-critical"})
"""PriorityClasses every cluster has (https://kubernetes.io/docs/concepts/scheduling-eviction/pod-priority-preemption/)."""

Ref = tuple[str, str, str]
"""(kind, namespace, name); namespace '' for cluster-scoped kinds."""


def _meta(body: Mapping[str, Any]) -> tuple[str, str]:
    meta = body.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _pod_refs(spec: Mapping[str, Any], namespace: str) -> Iterator[tuple[Ref, bool]]:
    """(reference, whether the pod cannot start without it) of a pod spec."""
    yield ("ServiceAccount", namespace, str(spec.get("serviceAccountName") or "default")), True
    if spec.get("priorityClassName"):
        yield ("PriorityClass", "", str(spec["priorityClassName"])), True
    for volume in spec.get("volumes") or []:
        secret, config_map = volume.get("secret"), volume.get("configMap")
        if secret and secret.get("secretName"):
            yield ("Secret", namespace, str(secret["secretName"])), not secret.get("optional")
        if config_map and config_map.get("name"):
            yield ("ConfigMap", namespace, str(config_map["name"])), not config_map.get("optional")
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        for entry in container.get("env") or []:
            source = entry.get("valueFrom") or {}
            for key, kind in (("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")):
                if source.get(key) and source[key].get("name"):
                    yield (kind, namespace, str(source[key]["name"])), not source[key].get("optional")
        for entry in container.get("envFrom") or []:
            for key, kind in (("secretRef", "Secret"), ("configMapRef", "ConfigMap")):
                if entry.get(key) and entry[key].get("name"):
                    yield (kind, namespace, str(entry[key]["name"])), not entry[key].get("optional")


def _creates_secrets(bodies: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a release creates Secrets at run time: a hook Job, or a Role or ClusterRole granting `create` on
    secrets (a certificate controller, a webhook patch job)."""
    for body in bodies:
        if body.get("kind") in ("Role", "ClusterRole"):
            for rule in body.get("rules") or []:
                if "secrets" in (rule.get("resources") or []) and {"create", "*"} & set(rule.get("verbs") or []):
                    return True
    return False


def reference_problems(
    releases: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], toolkit: Iterable[Mapping[str, Any]]
) -> list[Problem]:
    """For each (owner, its objects) of the plan (each release, and the toolkit's own objects under its name): the
    references of its pods and webhooks that nothing creates."""
    everything = [(owner, list(bodies)) for owner, bodies in releases]
    everything.append(("the toolkit", list(toolkit)))
    made = _Made.of(everything)
    found: list[Problem] = []
    stuck: list[tuple[str, Mapping[str, Any], str]] = []
    for owner, bodies in everything:
        for body in bodies:
            spec = pod_spec(body)
            if spec is None:
                continue
            namespace = _meta(body)[0]
            missing = [ref for ref, needed in _pod_refs(spec, namespace) if needed and made.lacks(ref)]
            if missing:
                names = ", ".join(f"{kind} {ns + '/' if ns else ''}{name}" for kind, ns, name in missing)
                stuck.append((namespace, body, names))
                found.append(
                    Problem(
                        f"{owner}: {object_name(body)}",
                        Described(f"names {names}, which nothing in the plan or its charts creates"),
                        "references to objects the plan or a chart creates: without them the pod is refused or never "
                        "starts",
                        "create the object first, or fix the values that name it",
                    )
                )
    found += _webhook_problems(everything, stuck)
    return found


@dataclass
class _Made:
    """What the plan's objects create: the objects, the namespaces they live in or make, and the namespaces where a
    release creates Secrets at run time."""

    created: set[Ref]
    namespaces: set[str]
    secret_makers: set[str]

    @classmethod
    def of(cls, everything: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]) -> _Made:
        made = cls({("PriorityClass", "", name) for name in BUILTIN_PRIORITY_CLASSES}, set(), set())
        for _, bodies in everything:
            for body in bodies:
                namespace, name = _meta(body)
                made.created.add((str(body.get("kind")), namespace, name))
                if body.get("kind") == "Namespace":
                    made.namespaces.add(name)
                made.namespaces.add(namespace)
            if _creates_secrets(bodies):
                made.secret_makers |= {_meta(b)[0] for b in bodies if _meta(b)[0]}
        made.namespaces.discard("")
        return made

    def lacks(self, ref: Ref) -> bool:
        """Whether a pod's reference names nothing the plan creates, where that can be known: a namespace nothing in
        the plan makes is someone else's, the default ServiceAccount comes with each namespace, and a release that
        creates Secrets at run time may make the ones its namespace names."""
        return (
            ref not in self.created
            and (ref[1] == "" or ref[1] in self.namespaces)
            and not (ref[0] == "ServiceAccount" and ref[2] == "default")
            and not (ref[0] == "Secret" and ref[1] in self.secret_makers)
        )


def _selects(selector: Mapping[str, Any], body: Mapping[str, Any]) -> bool:
    labels = (((body.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels") or {}
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def _webhook_problems(
    everything: Sequence[tuple[str, Sequence[Mapping[str, Any]]]], stuck: Sequence[tuple[str, Mapping[str, Any], str]]
) -> list[Problem]:
    """Webhooks with failurePolicy Fail whose Service selects pods that cannot start."""
    services = {
        _meta(b): (b.get("spec") or {}).get("selector") or {}
        for _, bodies in everything
        for b in bodies
        if b.get("kind") == "Service"
    }
    found = []
    for owner, bodies in everything:
        for body in bodies:
            if body.get("kind") in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
                for hook in body.get("webhooks") or []:
                    found += _hook_problems(f"{owner}: {object_name(body)}", hook, services, stuck)
    return found


def _hook_problems(
    key: str,
    hook: Mapping[str, Any],
    services: Mapping[tuple[str, str], Mapping[str, Any]],
    stuck: Sequence[tuple[str, Mapping[str, Any], str]],
) -> list[Problem]:
    """One webhook's: if it fails closed, each pod its Service selects that cannot start."""
    service = (hook.get("clientConfig") or {}).get("service") or {}
    if hook.get("failurePolicy", "Fail") != "Fail" or not service:
        return []
    selector = services.get((str(service.get("namespace") or ""), str(service.get("name") or "")), {})
    return [
        Problem(
            key,
            Described(
                f"webhook {hook.get('name')} (failurePolicy Fail) is served by {object_name(pod_owner)}, which cannot "
                f"start ({names})"
            ),
            "a webhook that fails closed only when its backend can run: otherwise the API server rejects every "
            "request it intercepts",
            "create what its backend names, or fix the values that name it",
        )
        for namespace, pod_owner, names in stuck
        if namespace == service.get("namespace") and _selects(selector, pod_owner)
    ]
