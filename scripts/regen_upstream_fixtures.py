"""Regenerate the chart key catalog and CRD schema fixtures from a local copy of the pinned upstream files.

Usage: python scripts/regen_upstream_fixtures.py UPSTREAM_DIR --mirrors DIR
(UPSTREAM_DIR holds <chart>/<version>/ with each pinned chart's values.yaml, Chart.yaml and CRDs; DIR holds bare git
mirrors <owner>+<name>/repo, read at a tag for files UPSTREAM_DIR lacks, see scripts/upstream_mirror.py.)

Writes components/ultraserver/facts/data/chart_keys.json and tests/fixtures/crds/*.json. Only key paths and schema
structure are kept: no upstream prose (comments and `description` fields are dropped).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its helper module, scripts/upstream_mirror.py
from go_schema import go_struct_schema  # noqa: E402
from source_notes import source_of  # noqa: E402
from template_reads import chart_reads  # noqa: E402
from upstream_mirror import MirrorRef, chart_files, read  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DATA_FILE = REPO / "components" / "ultraserver" / "facts" / "data" / "chart_keys.json"
READS_FILE = DATA_FILE.with_name("chart_template_reads.json")
CRD_DIR = REPO / "tests" / "fixtures" / "crds"

# Pinned charts: (catalog name, upstream folder, version folder, published version, Helm repo).
# The gpu-operator Chart.yaml in git carries a placeholder version (v1.0.0-devel); NGC publishes it as v26.7.0
# (NVIDIA/gpu-operator tag v26.7.0, commit 10ee5b36). EFA device plugin chart v0.5.30 = app v0.5.20
# (aws/eks-charts stable/aws-efa-k8s-device-plugin at commit 52396092, 2026-08-03).
CHARTS: tuple[tuple[str, str, str, str | None, str], ...] = (
    ("gpu-operator", "gpu-operator", "v26.7.0", "v26.7.0", "https://helm.ngc.nvidia.com/nvidia"),
    # The DRA driver under its kubernetes-sigs name (0.4.0 renamed the chart; upgrade.md at tag v0.4.1), published as
    # an OCI chart at oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu.
    ("dra-driver-nvidia-gpu", "dra-driver-nvidia-gpu", "0.4.1", None, "oci://registry.k8s.io/dra-driver-nvidia/charts"),
    ("aws-efa-k8s-device-plugin", "aws-efa-k8s-device-plugin", "v0.5.30", None, "https://aws.github.io/eks-charts"),
    # Published as an OCI chart (config/helm/aws-node-termination-handler/README.md at tag v1.25.6).
    (
        "aws-node-termination-handler",
        "aws-node-termination-handler",
        "0.27.6",
        None,
        "oci://public.ecr.aws/aws-ec2/helm",
    ),
    # Published as an OCI chart at oci://registry.k8s.io/kueue/charts/kueue (charts/kueue/README.md at v0.19.2).
    ("kueue", "kueue", "0.19.2", None, "oci://registry.k8s.io/kueue/charts"),
    # DRANET for EFA in DRA mode (README: helm repo add eks https://aws.github.io/eks-charts).
    ("aws-dranet", "aws-dranet", "1.0.0", None, "https://aws.github.io/eks-charts"),
)

# Pinned charts read from a mirror at their release tag: (catalog name, repository at tag, chart folder, Helm repo).
MIRROR_CHARTS: tuple[tuple[str, MirrorRef, str, str], ...] = (
    # kube-prometheus-stack 88.5.3: the newest kube-prometheus-stack-* tag (2026-08-21) of a mirror whose last commit
    # is 2026-08-22, published at https://prometheus-community.github.io/helm-charts (the repository of its
    # dependencies in Chart.yaml). The pin before, 81.4.5, was never released: no tag (81.4.3, then 81.5.0), and the
    # commit that said 81.4.5 (4879317) is only on a pull-request ref, so a stack installing it failed at deploy time.
    (
        "kube-prometheus-stack",
        MirrorRef("prometheus-community/helm-charts", "kube-prometheus-stack-88.5.3"),
        "charts/kube-prometheus-stack",
        "https://prometheus-community.github.io/helm-charts",
    ),
)

# Charts whose template reads are derived (tests/builders/test_template_reads.py): the chart folder in a mirror at the
# pinned tag, or the upstream folder when it holds every template.
TEMPLATE_CHARTS: dict[str, tuple[MirrorRef, str] | str] = {
    "gpu-operator": (MirrorRef("NVIDIA/gpu-operator", "v26.7.0"), "deployments/gpu-operator"),
    # The upstream folder holds only the DeviceClass templates.
    "dra-driver-nvidia-gpu": (
        MirrorRef("kubernetes-sigs/dra-driver-nvidia-gpu", "v0.4.1"),
        "deployments/helm/dra-driver-nvidia-gpu",
    ),
    "aws-efa-k8s-device-plugin": "aws-efa-k8s-device-plugin/v0.5.30",
    "aws-dranet": "aws-dranet/1.0.0",
    "aws-node-termination-handler": (
        MirrorRef("aws/aws-node-termination-handler", "v1.25.6"),
        "config/helm/aws-node-termination-handler",
    ),
    "kueue": (MirrorRef("kubernetes-sigs/kueue", "v0.19.2"), "charts/kueue"),
    **{name: (ref, folder) for name, ref, folder, _ in MIRROR_CHARTS},
}

# Keys whose value is a Kubernetes object handed to the templates as a whole (toYaml): anything below them
# is the user's, so the key check stops there. Maps that default to {} are open too (featureGates, labels).
PASS_THROUGH_NAMES = frozenset(
    {"affinity", "resources", "securityContext", "annotations", "updateStrategy", "strategy"}
)

# Keys named like a Kubernetes object that are chart settings instead (the DRA driver's resources.gpus.enabled).
NOT_PASS_THROUGH: dict[str, tuple[str, ...]] = {
    "dra-driver-nvidia-gpu": ("resources",),
}

# Values read by the chart templates but absent from values.yaml, checked in the template at the pinned tag.
TEMPLATE_ONLY_KEYS: dict[str, tuple[str, ...]] = {
    # templates/operator.yaml renders `.Values.operator.nodeSelector` into the operator Deployment.
    "gpu-operator": ("operator.nodeSelector",),
}

# Subcharts whose own values are not pinned here: their whole subtree is treated as an open map.
OPEN_SUBTREES: dict[str, tuple[str, ...]] = {
    "gpu-operator": ("node-feature-discovery",),
}

# CRD fixtures: (output name, upstream folder, saved file in it, served version).
CRDS: tuple[tuple[str, str, str, str], ...] = (
    (
        "computedomain-v1beta1",
        "dra-driver-nvidia-gpu/0.4.1",
        "crds/resource.nvidia.com_computedomains.yaml",
        "v1beta1",
    ),
    (
        "computedomainclique-v1beta1",
        "dra-driver-nvidia-gpu/0.4.1",
        "crds/resource.nvidia.com_computedomaincliques.yaml",
        "v1beta1",
    ),
    # Kueue 0.19.2 serves v1beta1 and v1beta2; v1beta2 is the storage version, so the toolkit writes it. The Workload
    # CRD is saved upstream too but not derived: the toolkit never writes Workloads (Kueue creates them).
    *(
        (f"kueue-{kind}-v1beta2", "kueue/0.19.2", f"crds/kueue.x-k8s.io_{plural}.yaml", "v1beta2")
        for kind, plural in (
            ("topology", "topologies"),
            ("resourceflavor", "resourceflavors"),
            ("clusterqueue", "clusterqueues"),
            ("localqueue", "localqueues"),
        )
    ),
)

# CRD fixtures read from a mirror: (output name, repository at tag, path, served version).
MIRROR_CRDS: tuple[tuple[str, MirrorRef, str, str], ...] = (
    # MPI Operator v0.8.0 (2026-02-18, newest tag, re-checked 2026-11-25): the MPIJob CRD of the pinned
    # manifest's commit.
    (
        "mpijob-v2beta1",
        MirrorRef("kubeflow/mpi-operator", "v0.8.0"),
        "manifests/base/kubeflow.org_mpijobs.yaml",
        "v2beta1",
    ),
    # Kueue's WorkloadPriorityClass (the fabric checks' class) at the pinned tag: not among the saved CRDs.
    (
        "kueue-workloadpriorityclass-v1beta2",
        MirrorRef("kubernetes-sigs/kueue", "v0.19.2"),
        "config/components/crd/bases/kueue.x-k8s.io_workloadpriorityclasses.yaml",
        "v1beta2",
    ),
)

# Kueue's Configuration API (the Go types behind managerConfig.controllerManagerConfigYaml), derived into a JSON Schema
# of field names and types so tests can validate the Configuration the toolkit generates.
# (upstream folder, saved file, upstream path, fixture name); SOURCE.md names the file in prose, not in its table.
KUEUE_CONFIGURATION = (
    "kueue/0.19.2",
    "config/configuration_types.go",
    "apis/config/v1beta2/configuration_types.go",
    "kueue-configuration-v1beta2",
)
# Prose-only schema keywords dropped from the fixtures.
PROSE_KEYS = ("description", "message", "messageExpression")


def key_paths(values: dict[str, Any], structured: tuple[str, ...] = (), prefix: str = "") -> tuple[set[str], set[str]]:
    """All dotted key paths of a values tree, and the subset that are open maps."""
    keys: set[str] = set()
    open_maps: set[str] = set()
    for key, value in values.items():
        path = f"{prefix}{key}"
        keys.add(path)
        if isinstance(value, dict) and (not value or (key in PASS_THROUGH_NAMES and path not in structured)):
            open_maps.add(path)
        elif isinstance(value, dict):
            sub_keys, sub_open = key_paths(value, structured, path + ".")
            keys |= sub_keys
            open_maps |= sub_open
    return keys, open_maps


def chart_entry(upstream: Path, name: str, folder: str, version_dir: str, version: str | None, repo: str) -> dict:
    """Catalog entry of one pinned chart in the upstream folder."""
    base = upstream / folder / version_dir
    source = source_of(base, "values.yaml")
    files = {"Chart.yaml": (base / "Chart.yaml").read_text(), "values.yaml": (base / "values.yaml").read_text()}
    entry = catalog_entry(name, files, source, OPEN_SUBTREES.get(name, ()), version, repo, str(base))
    return entry | {"crds": crd_names(base, source["path"])}


def mirror_chart_entry(mirrors: Path, name: str, ref: MirrorRef, folder: str, repo: str) -> dict:
    """Catalog entry of one pinned chart read from a mirror at its release tag. Dependencies fetched from a repository
    at packaging time have no values pinned here (open subtrees); CRDs are those of crds/ folders, subcharts' too."""
    files = chart_files(mirrors, ref, folder)
    source = {**read(mirrors, ref, f"{folder}/values.yaml")[1]}
    dependencies = (yaml.safe_load(files["Chart.yaml"]) or {}).get("dependencies") or []
    remote = tuple(d.get("alias") or d["name"] for d in dependencies if d.get("repository"))
    entry = catalog_entry(name, files, source, remote, None, repo, f"{ref.repository}@{ref.tag}:{folder}")
    # BaseLoader: the CRDs are read for their names only (some hold YAML a typed load refuses, e.g. a bare `=`).
    crd_files = [text for path, text in files.items() if path.split("/")[-2:-1] == ["crds"]]
    crds = [
        d["metadata"]["name"]
        for t in crd_files
        for d in yaml.load_all(t, Loader=yaml.BaseLoader)
        if d and d.get("kind") == "CustomResourceDefinition"
    ]
    return entry | {"crds": sorted(crds)}


def catalog_entry(
    name: str,
    files: dict[str, str],
    source: dict,
    open_subtrees: tuple[str, ...],
    version: str | None,
    repo: str,
    where: str,
) -> dict:
    """Catalog entry from a chart's Chart.yaml and values.yaml texts."""
    chart_yaml = yaml.safe_load(files["Chart.yaml"])
    values = yaml.safe_load(files["values.yaml"]) or {}
    keys, open_maps = key_paths(values, NOT_PASS_THROUGH.get(name, ()))
    for path in TEMPLATE_ONLY_KEYS.get(name, ()):
        keys.add(path)
        open_maps.add(path)
    for path in open_subtrees:
        keys = {k for k in keys if not k.startswith(path + ".")} | {path}
        open_maps = {k for k in open_maps if not k.startswith(path + ".")} | {path}
    extra = {"defaultConfiguration": kueue_configuration(values)} if name == "kueue" else {}
    if chart_yaml["name"] != name:
        raise SystemExit(f"{where}/Chart.yaml: name {chart_yaml['name']!r}, expected {name!r}")
    return {
        "name": name,
        "version": version or str(chart_yaml["version"]),
        "repo": repo,
        "kubeVersion": chart_yaml.get("kubeVersion"),
        "source": source,
        "keys": sorted(keys),
        "openMaps": sorted(open_maps),
        **extra,
    }


def template_reads_entry(upstream: Path, mirrors: Path, where: tuple[MirrorRef, str] | str, version: str) -> dict:
    """The values paths a pinned chart's templates read, with the chart version and where they were read."""
    if isinstance(where, str):
        base = upstream / where
        files = {p.relative_to(base).as_posix(): p.read_text() for p in base.rglob("*") if p.is_file()}
        values = source_of(base, "values.yaml")
        source = {**values, "path": values["path"].rsplit("/", 1)[0], "blob": ""}
    else:
        ref, folder = where
        files = chart_files(mirrors, ref, folder)
        source = {**read(mirrors, ref, f"{folder}/Chart.yaml")[1], "path": folder, "blob": ""}
    reads = chart_reads(files)
    return {"version": version, "source": source, "reads": sorted(reads.paths), "wholeReads": sorted(reads.whole)}


def crd_names(chart_dir: Path, values_path: str) -> list[str]:
    """Names of the CRDs in the chart's own crds/ folder (Helm installs them when absent and never upgrades them).

    Saved CRD files count only when SOURCE.md places them in crds/ next to the chart's values.yaml: Kueue's saved CRDs
    come from config/components/crd, not from its chart.
    """
    chart_crds = values_path.rpartition("/")[0] + "/crds/"
    names = []
    for path in sorted((chart_dir / "crds").glob("*.yaml")):
        if not source_of(chart_dir, f"crds/{path.name}")["path"].startswith(chart_crds):
            continue
        names += [
            d["metadata"]["name"]
            for d in yaml.safe_load_all(path.read_text())
            if d and d.get("kind") == "CustomResourceDefinition"
        ]
    return sorted(names)


def kueue_configuration(values: dict[str, Any]) -> dict[str, Any]:
    """Kueue's default Configuration as data (the chart carries it as a YAML string; its comments are dropped)."""
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    if not isinstance(config, dict) or not isinstance(config.get("integrations", {}).get("frameworks"), list):
        raise SystemExit("kueue values.yaml: managerConfig.controllerManagerConfigYaml has no integrations.frameworks")
    return config


def strip_prose(node: Any) -> Any:
    """Schema tree without description/message strings (property names called so are kept)."""
    if isinstance(node, dict):
        return {k: strip_prose(v) for k, v in node.items() if not (k in PROSE_KEYS and isinstance(v, str))}
    if isinstance(node, list):
        return [strip_prose(v) for v in node]
    return node


def crd_fixture(upstream: Path, folder: str, saved: str, version: str) -> dict:
    """openAPIV3Schema of one CRD version, with its identity and source."""
    path = upstream / folder / saved
    source = source_of(upstream / folder, saved)
    # Without a blob id in SOURCE.md, the copy's own: a reviewer compares it with the tree at the commit (git ls-tree).
    raw = path.read_bytes()
    source["blob"] = source["blob"] or hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()
    return crd_version(yaml.safe_load(raw), version, source, str(path))


def crd_version(crd: dict[str, Any], version: str, source: dict[str, str], where: str) -> dict:
    """The fixture of one served version of a parsed CRD."""
    served = [v for v in crd["spec"]["versions"] if v["name"] == version]
    if not served:
        raise SystemExit(f"{where}: version {version} not in the CRD")
    return {
        "group": crd["spec"]["group"],
        "version": version,
        "kind": crd["spec"]["names"]["kind"],
        "scope": crd["spec"]["scope"],
        "source": source,
        "openAPIV3Schema": strip_prose(served[0]["schema"]["openAPIV3Schema"]),
    }


def main(argv: list[str] | None = None) -> int:
    """Write the fixtures; exit code 0 on success."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("upstream", help="directory of the pinned upstream charts and CRDs")
    parser.add_argument("--mirrors", required=True, help="directory of bare git mirrors (<owner>+<name>/repo)")
    args = parser.parse_args(argv)
    upstream, mirrors = Path(args.upstream).resolve(), Path(args.mirrors).resolve()
    if not upstream.is_dir():
        print(f"upstream directory {upstream} not found; pass its path as the first argument", file=sys.stderr)
        return 2
    charts = {c[0]: chart_entry(upstream, *c) for c in CHARTS}
    charts |= {c[0]: mirror_chart_entry(mirrors, *c) for c in MIRROR_CHARTS}
    DATA_FILE.parent.mkdir(parents=True, exist_ok=True)
    DATA_FILE.write_text(json.dumps({"charts": charts}, indent=1, sort_keys=True) + "\n")
    reads = {
        name: template_reads_entry(upstream, mirrors, where, charts[name]["version"])
        for name, where in TEMPLATE_CHARTS.items()
    }
    READS_FILE.write_text(json.dumps({"charts": reads}, indent=1, sort_keys=True) + "\n")
    CRD_DIR.mkdir(parents=True, exist_ok=True)
    for name, folder, saved, version in CRDS:
        fixture = crd_fixture(upstream, folder, saved, version)
        (CRD_DIR / f"{name}.json").write_text(json.dumps(fixture, sort_keys=True) + "\n")
    for name, ref, path, version in MIRROR_CRDS:
        data, source = read(mirrors, ref, path)
        fixture = crd_version(yaml.safe_load(data), version, source, f"{ref.repository}@{ref.tag}:{path}")
        (CRD_DIR / f"{name}.json").write_text(json.dumps(fixture, sort_keys=True) + "\n")
    folder, saved, path, name = KUEUE_CONFIGURATION
    raw = (upstream / folder / saved).read_bytes()
    schema = go_struct_schema(raw.decode(), "Configuration")
    text = (upstream / folder / "SOURCE.md").read_text()
    repo, commit = re.search(r"Repository: (\S+)", text), re.search(r"\b([0-9a-f]{40})\b", text)
    blob = hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()
    schema["source"] = {
        "repository": repo and repo.group(1),
        "commit": commit and commit.group(1),
        "path": path,
        "blob": blob,
    }
    (CRD_DIR.parent / f"{name}.json").write_text(json.dumps(schema, indent=1, sort_keys=True) + "\n")
    crds = len(CRDS) + len(MIRROR_CRDS)
    wrote = f"{DATA_FILE.relative_to(REPO)}, {READS_FILE.name}, {crds} CRD fixtures in {CRD_DIR.relative_to(REPO)}"
    print(f"wrote {wrote} and {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
