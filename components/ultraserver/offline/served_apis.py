"""The APIs the cluster will serve as planned, and the rendered objects of a kind it does not serve.

Built-ins: the GA group/versions of the stack's Kubernetes version, read from the OpenAPI definitions
kubernetes-validate ships per version (`x-kubernetes-group-version-kind`), and the beta ones EKS serves on that minor
(facts/kubernetes/eks_versions.py BETA_APIS_ON: DRA's resource.k8s.io/v1beta1 and v1beta2 on 1.33). Other beta and
alpha versions are left out:
KEP-3136 (kubernetes/enhancements issue 3136, stable in 1.24): "New beta APIs will not be enabled in clusters by
default. Existing beta APIs and new versions of existing beta APIs, will continue to be enabled by default." That no
beta API from before 1.24 is still served in 1.33-1.35, and that EKS turns on no beta API by default, is UNVERIFIED.
Custom resources: every version a CRD serves, of the CRDs a chart renders (its crds/ and templates) and of the
upstream manifests the toolkit applies (facts/pins/manifests.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from ultraserver.facts.kubernetes.eks_versions import BETA_APIS_ON
from ultraserver.facts.pins import charts, manifests

Api = tuple[str, str, str]
"""(group, version, kind); the core group is ""."""
_GA = re.compile(r"v[0-9]+")
_LEAVES = {"DeleteOptions", "WatchEvent", "Status", "APIGroup", "APIGroupList", "APIResourceList", "APIVersions"}


def schema_folder(kube_version: str) -> Traversable:
    """kubernetes-validate's strict schema folder of a minor (`1.35` -> v1.35.0-local-strict)."""
    return resources.files("kubernetes_validate").joinpath("kubernetes-json-schema", f"v{kube_version}.0-local-strict")


@cache
def definitions(kube_version: str) -> Mapping[str, Any]:
    """The folder's ``_definitions.json`` (every built-in type; the per-kind schemas refer to it), read once per
    process: the served APIs and the schema checks both read it. Shared, so never changed."""
    return json.loads(schema_folder(kube_version).joinpath("_definitions.json").read_text())


@cache
def builtin_apis(kube_version: str) -> frozenset[Api]:
    """The kinds a cluster of that minor serves: its GA ones and the beta ones EKS turns on (every list and meta type
    left out)."""
    betas = set(BETA_APIS_ON.get(kube_version, ()))
    return frozenset(
        (entry["group"], entry["version"], entry["kind"])
        for definition in definitions(kube_version)["$defs"].values()
        for entry in definition.get("x-kubernetes-group-version-kind", [])
        if (_GA.fullmatch(entry["version"]) or (entry["group"], entry["version"]) in betas)
        and entry["kind"] not in _LEAVES
        and not entry["kind"].endswith("List")
    )


def api_of(body: Mapping[str, Any]) -> Api:
    """An object's (group, version, kind)."""
    group, _, version = str(body.get("apiVersion", "")).rpartition("/")
    return group, version, str(body.get("kind", ""))


_CRD_API: Api = ("apiextensions.k8s.io", "v1", "CustomResourceDefinition")


def served_versions(bodies: Iterable[Mapping[str, Any]]) -> Iterator[tuple[Api, Mapping[str, Any]]]:
    """(API, its entry of spec.versions) of each served version of every CustomResourceDefinition among ``bodies``."""
    for body in bodies:
        if api_of(body) != _CRD_API:
            continue
        spec = body.get("spec") or {}
        kind = (spec.get("names") or {}).get("kind", "")
        for version in spec.get("versions") or []:
            if version.get("served"):
                yield (spec.get("group", ""), version["name"], kind), version


def crd_apis(bodies: Iterable[Mapping[str, Any]]) -> set[Api]:
    """The served versions of every CustomResourceDefinition among ``bodies``."""
    return {api for api, _ in served_versions(bodies)}


def manifest_apis(urls: Iterable[str]) -> set[Api]:
    """The APIs the toolkit's pinned upstream manifests read at these URLs or mirror paths add."""
    pins = manifests.by_file_name()
    found = set()
    for url in urls:
        for served in pins[url.rsplit("/", 1)[-1]].serves:
            group, version, kind = served.rsplit("/", 2) if served.count("/") == 2 else ("", *served.split("/"))
            found.add((group, version, kind))
    return found


def api_versions_flag(apis: Iterable[Api]) -> list[str]:
    """`--api-versions` entries: each group/version, and each group/version/Kind (charts test either form)."""
    found = set()
    for group, version, kind in apis:
        group_version = f"{group}/{version}" if group else version
        found |= {group_version, f"{group_version}/{kind}"}
    return sorted(found)


def unserved(bodies: Sequence[Mapping[str, Any]], served: frozenset[Api] | set[Api]) -> list[Mapping[str, Any]]:
    """The objects of a kind and version the cluster does not serve."""
    return [body for body in bodies if api_of(body) not in served]


def binary_defaults(bodies: Sequence[Mapping[str, Any]], served: frozenset[Api] | set[Api]) -> list[Mapping[str, Any]]:
    """Of the unserved objects, those a chart chose only because the Helm binary's own API list holds their version
    (the GA APIs of the minor its Kubernetes libraries are: facts/pins/charts.py HELM_KUBE_MINOR), while the cluster
    serves the kind at another version: against a real cluster Helm asks the API server instead and the chart picks a
    served version (DRA's DeviceClass at resource.k8s.io/v1beta2 on 1.33), which this render cannot show."""
    kinds = {(group, kind) for group, _, kind in served}
    defaults = builtin_apis(charts.HELM_KUBE_MINOR)
    return [
        body
        for body in unserved(bodies, served)
        if api_of(body) in defaults and (api_of(body)[0], api_of(body)[2]) in kinds
    ]
