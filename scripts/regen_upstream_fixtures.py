"""Regenerate the chart key catalog and CRD schema fixtures from a local copy of the pinned upstream files.

Usage: python scripts/regen_upstream_fixtures.py UPSTREAM_DIR
(UPSTREAM_DIR holds <chart>/<version>/ with each pinned chart's values.yaml, Chart.yaml and CRDs.)

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

REPO = Path(__file__).resolve().parent.parent
DATA_FILE = REPO / "components" / "ultraserver" / "facts" / "data" / "chart_keys.json"
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
    ("mpijob-v2beta1", "mpi-operator/v0.7.0", "kubeflow.org_mpijobs.yaml", "v2beta1"),
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

# Kueue's Configuration API (the Go types behind managerConfig.controllerManagerConfigYaml), derived into a JSON Schema
# of field names and types so tests can validate the Configuration the toolkit generates.
# (upstream folder, saved file, upstream path, fixture name); SOURCE.md names the file in prose, not in its table.
KUEUE_CONFIGURATION = (
    "kueue/0.19.2",
    "config/configuration_types.go",
    "apis/config/v1beta2/configuration_types.go",
    "kueue-configuration-v1beta2",
)
# Types from other packages: what their JSON looks like (an open object where the toolkit never writes into them).
GO_EXTERNAL_TYPES: dict[str, dict[str, Any]] = {
    "metav1.Duration": {"type": "string"},
    "time.Duration": {"type": "integer"},
    "corev1.ResourceName": {"type": "string"},
    "resourcev1.QualifiedName": {"type": "string"},
    "corev1.ResourceList": {"type": "object"},
    "metav1.LabelSelector": {"type": "object"},
}
GO_BUILTINS: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "bool": {"type": "boolean"},
    **{n: {"type": "integer"} for n in ("int", "int32", "int64", "uint", "uint32", "uint64")},
    **{n: {"type": "number"} for n in ("float32", "float64")},
}
_GO_STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.S | re.M)
_GO_STRING_TYPE = re.compile(r"^type (\w+) string$", re.M)
_GO_FIELD = re.compile(r"^\t(?:(\w+)\s+)?([\w.*\[\]]+)\s+`json:\"([^\"]*)\"`", re.M)


def go_type_schema(go_type: str, structs: set[str], strings: set[str]) -> dict[str, Any]:
    """JSON Schema of one Go field type (pointers dropped, slices as arrays, string maps as objects)."""
    go_type = go_type.lstrip("*")
    if go_type.startswith("[]"):
        return {"type": "array", "items": go_type_schema(go_type[2:], structs, strings)}
    if go_type.startswith("map[string]"):
        return {"type": "object", "additionalProperties": go_type_schema(go_type[11:], structs, strings)}
    if go_type in structs:
        return {"$ref": f"#/$defs/{go_type}"}
    if go_type in strings:
        return {"type": "string"}
    return GO_BUILTINS.get(go_type) or GO_EXTERNAL_TYPES.get(go_type, {})


def go_struct_schema(source: str, root: str) -> dict[str, Any]:
    """JSON Schema of a Go struct and the structs it uses, from their `json` tags: field names and types only, no
    unknown fields (inline embedded structs merged, `json:"-"` fields left out)."""
    bodies = {m.group(1): m.group(2) for m in _GO_STRUCT.finditer(source)}
    strings = set(_GO_STRING_TYPE.findall(source))

    def properties(name: str) -> dict[str, Any]:
        props: dict[str, Any] = {}
        for field_name, go_type, tag in _GO_FIELD.findall(bodies[name]):
            json_name, _, options = tag.partition(",")
            if json_name == "-":
                continue
            if not json_name and "inline" in options:
                if go_type == "metav1.TypeMeta":
                    props |= {"apiVersion": {"type": "string"}, "kind": {"type": "string"}}
                elif go_type in bodies:
                    props |= properties(go_type)
                continue
            props[json_name or field_name] = go_type_schema(go_type, set(bodies), strings)
        return props

    defs = {name: {"type": "object", "properties": properties(name), "additionalProperties": False} for name in bodies}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$ref": f"#/$defs/{root}", "$defs": defs}


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


def source_of(folder: Path, saved: str) -> dict[str, str]:
    """Repository, commit, upstream path and git blob of one saved file, as recorded in the folder's SOURCE.md."""
    text = (folder / "SOURCE.md").read_text()
    # One-line form: "Repository owner/name, path some/dir at commit <sha>".
    short = re.search(r"Repository ([\w.-]+/[\w.-]+), path (\S+) at commit ([0-9a-f]{40})", text)
    if short:
        repository, base, sha = short.groups()
        return {"repository": f"https://github.com/{repository}", "commit": sha, "path": f"{base}/{saved}", "blob": ""}
    repo = re.search(r"Repository: (https://github\.com/\S+)", text)
    commit = re.search(r"\b([0-9a-f]{40})\b", text)
    row = re.search(rf"^\| `{re.escape(saved)}` +\| `([^`]+)` +\| `([0-9a-f]{{40}})` \|", text, re.MULTILINE)
    if repo and commit and row:
        return {"repository": repo.group(1), "commit": commit.group(1), "path": row.group(1), "blob": row.group(2)}
    # Some SOURCE.md files list several saved files per row with their upstream folder and no blob id.
    folder_row = re.search(rf"^\|[^|\n]*\b{re.escape(saved)}\b[^|\n]*\| +([^|\s]+/) +\|", text, re.MULTILINE)
    if repo and commit and folder_row:
        return {"repository": repo.group(1), "commit": commit.group(1), "path": folder_row.group(1) + saved, "blob": ""}
    # Newer ones are prose: "Repository OWNER/NAME, tag T, commit C." with "Files: FOLDER/{...}" or ", path FOLDER".
    short = _short_source(text, saved)
    if short:
        return short
    # Others name each saved file (or a glob of them) with its full upstream path (the same glob).
    path = _glob_row_path(text, saved)
    if not repo or not commit or not path:
        raise SystemExit(f"{folder}/SOURCE.md: repository URL, commit or the row of {saved} not found")
    return {"repository": repo.group(1), "commit": commit.group(1), "path": path, "blob": ""}


def _short_source(text: str, saved: str) -> dict[str, str] | None:
    """Source of `saved` from a one-line SOURCE.md ("Repository owner/name, ... commit C" plus its folder)."""
    repo = re.search(r"^Repository ([\w.-]+/[\w.-]+)[ ,]", text, re.MULTILINE)
    commit = re.search(r"\bcommit ([0-9a-f]{40})\b", text)
    folder = re.search(r"^Files: (\S+?)/\{", text, re.MULTILINE) or re.search(r", path (\S+) at commit", text)
    if not (repo and commit and folder):
        return None
    return {
        "repository": f"https://github.com/{repo.group(1)}",
        "commit": commit.group(1),
        "path": f"{folder.group(1)}/{saved}",
        "blob": "",
    }


def _glob_row_path(text: str, saved: str) -> str | None:
    """Upstream path of `saved` from a `| saved-or-glob | upstream-path-or-glob ... |` row of a SOURCE.md."""
    for line in text.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[1]:
            continue
        pattern, upstream = cells[0], cells[1].split()[0].strip("`")
        if "*" not in pattern and pattern == saved:
            return upstream
        prefix, star, suffix = pattern.partition("*")
        if star and saved.startswith(prefix) and saved.endswith(suffix) and len(saved) >= len(prefix + suffix):
            return upstream.replace("*", saved[len(prefix) : len(saved) - len(suffix)], 1)
    return None


def chart_entry(upstream: Path, name: str, folder: str, version_dir: str, version: str | None, repo: str) -> dict:
    """Catalog entry of one pinned chart."""
    base = upstream / folder / version_dir
    chart_yaml = yaml.safe_load((base / "Chart.yaml").read_text())
    values = yaml.safe_load((base / "values.yaml").read_text()) or {}
    keys, open_maps = key_paths(values, NOT_PASS_THROUGH.get(name, ()))
    for path in TEMPLATE_ONLY_KEYS.get(name, ()):
        keys.add(path)
        open_maps.add(path)
    for path in OPEN_SUBTREES.get(name, ()):
        keys = {k for k in keys if not k.startswith(path + ".")}
        open_maps = {k for k in open_maps if not k.startswith(path + ".")} | {path}
    source = source_of(base, "values.yaml")
    extra = {"defaultConfiguration": kueue_configuration(values)} if name == "kueue" else {}
    if chart_yaml["name"] != name:
        raise SystemExit(f"{base}/Chart.yaml: name {chart_yaml['name']!r}, expected {name!r}")
    return {
        "name": name,
        "version": version or str(chart_yaml["version"]),
        "repo": repo,
        "kubeVersion": chart_yaml.get("kubeVersion"),
        "crds": crd_names(base, source["path"]),
        "source": source,
        "keys": sorted(keys),
        "openMaps": sorted(open_maps),
        **extra,
    }


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
    crd = yaml.safe_load(path.read_text())
    source = source_of(upstream / folder, saved)
    # Without a blob id in SOURCE.md, the copy's own: a reviewer compares it with the tree at the commit (git ls-tree).
    raw = path.read_bytes()
    source["blob"] = source["blob"] or hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest()
    served = [v for v in crd["spec"]["versions"] if v["name"] == version]
    if not served:
        raise SystemExit(f"{path}: version {version} not in the CRD")
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
    upstream = Path(parser.parse_args(argv).upstream).resolve()
    if not upstream.is_dir():
        print(f"upstream directory {upstream} not found; pass its path as the first argument", file=sys.stderr)
        return 2
    charts = {c[0]: chart_entry(upstream, *c) for c in CHARTS}
    DATA_FILE.parent.mkdir(parents=True, exist_ok=True)
    DATA_FILE.write_text(json.dumps({"charts": charts}, indent=1, sort_keys=True) + "\n")
    CRD_DIR.mkdir(parents=True, exist_ok=True)
    for name, folder, saved, version in CRDS:
        fixture = crd_fixture(upstream, folder, saved, version)
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
    print(f"wrote {DATA_FILE.relative_to(REPO)}, {len(CRDS)} CRD fixtures in {CRD_DIR.relative_to(REPO)} and {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
