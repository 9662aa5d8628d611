"""scripts/regen_upstream_fixtures.py reads the Kueue SOURCE.md rows (full paths and globs) and its configuration."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from helpers.modules import load_file

ROOT = Path(__file__).resolve().parent.parent
SOURCE = """# Source
- Repository: https://github.com/kubernetes-sigs/kueue
- Tag: `v0.19.2` -> commit `8eab68778fc1b52affe165fdf5af29d1e9b4f3cb`

| saved file | upstream path |
|---|---|
| values.yaml | charts/kueue/values.yaml |
| crds/kueue.x-k8s.io_*.yaml | config/components/crd/bases/kueue.x-k8s.io_*.yaml (topologies, localqueues) |
"""


def script() -> ModuleType:
    return load_file(ROOT / "scripts" / "regen_upstream_fixtures.py", "regen_upstream")


def test_rows_with_full_paths_and_globs_are_read(tmp_path: Path) -> None:
    (tmp_path / "SOURCE.md").write_text(SOURCE)
    regen = script()
    assert regen.source_of(tmp_path, "values.yaml")["path"] == "charts/kueue/values.yaml"
    crd = regen.source_of(tmp_path, "crds/kueue.x-k8s.io_topologies.yaml")
    assert crd["path"] == "config/components/crd/bases/kueue.x-k8s.io_topologies.yaml"
    assert crd["commit"] == "8eab68778fc1b52affe165fdf5af29d1e9b4f3cb"
    with pytest.raises(SystemExit, match="Chart.yaml"):
        regen.source_of(tmp_path, "Chart.yaml")


def test_kueue_configuration_is_read_from_the_values_string() -> None:
    regen = script()
    values = {
        "managerConfig": {"controllerManagerConfigYaml": "kind: Configuration\nintegrations:\n  frameworks: [pod]\n"}
    }
    assert regen.kueue_configuration(values)["integrations"]["frameworks"] == ["pod"]
    with pytest.raises(SystemExit, match="integrations.frameworks"):
        regen.kueue_configuration({"managerConfig": {"controllerManagerConfigYaml": "kind: Configuration\n"}})


def test_go_structs_become_a_closed_schema_of_their_json_fields() -> None:
    source = (
        "type Outer struct {\n"
        '\tmetav1.TypeMeta `json:",inline"`\n'
        '\tInner `json:",inline"`\n'
        '\tItems []*Item `json:"items,omitempty"`\n'
        '\tGates map[string]bool `json:"gates,omitempty"`\n'
        '\tSkipped string `json:"-"`\n'
        "}\n\n"
        "type Inner struct {\n"
        '\tWait *metav1.Duration `json:"wait"`\n'
        "}\n\n"
        "type Item struct {\n"
        '\tKind Mode `json:"kind"`\n'
        '\tCount int32 `json:"count"`\n'
        "}\n\n"
        "type Mode string\n"
    )
    schema = script().go_struct_schema(source, "Outer")
    outer = schema["$defs"]["Outer"]
    assert sorted(outer["properties"]) == ["apiVersion", "gates", "items", "kind", "wait"]
    assert outer["additionalProperties"] is False
    assert outer["properties"]["items"] == {"type": "array", "items": {"$ref": "#/$defs/Item"}}
    assert schema["$defs"]["Item"]["properties"] == {"kind": {"type": "string"}, "count": {"type": "integer"}}


CHART = """apiVersion: v2
name: demo
dependencies:
  - name: sub
    alias: child
    condition: child.enabled,legacy.enabled
"""
TEMPLATE = """
{{- if .Values.tested.enabled }}
image: {{ .Values.image.repository }}:{{ $.Values.image.tag }}
{{- end }}
{{- with .Values.operator.nodeSelector }}
nodeSelector: {{ toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.probe }}
delay: {{ .initialDelaySeconds }}
{{- end }}
{{- $cfg := .Values.config }}
name: {{ $cfg.name }}
dash: {{ index .Values "dash-key" "inner" }}
{{- range .Values.extraEnv }}
- {{ .name }}
{{- end }}
{{/* .Values.commented.out */}}
"""


def test_template_reads_follow_with_blocks_variables_index_and_subcharts() -> None:
    files = {
        "Chart.yaml": CHART,
        "templates/a.yaml": TEMPLATE,
        "templates/NOTES.txt": "{{ .Values.notes.only }}",
        "charts/sub/templates/b.yaml": "{{ .Values.master.port }}",
    }
    reads = script().chart_reads(files)  # scripts/template_reads.py, as the script imports it
    assert reads.paths == {
        "tested.enabled",
        "image.repository",
        "image.tag",
        "operator.nodeSelector",
        "probe",
        "probe.initialDelaySeconds",
        "config",
        "config.name",
        "dash-key.inner",
        "extraEnv",
        "child.master.port",
        "child.enabled",
        "legacy.enabled",
    }
    # Only tested (if) or opened (with, its body reading one key) is not a whole read; toYaml of `.` is.
    assert "tested.enabled" not in reads.whole and "probe" not in reads.whole
    assert {"operator.nodeSelector", "extraEnv", "image.repository", "config.name"} <= reads.whole


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_files_are_read_from_a_bare_mirror_at_a_tag_with_their_source(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "chart" / "templates").mkdir(parents=True)
    (work / "chart" / "Chart.yaml").write_text("name: demo\n")
    (work / "chart" / "templates" / "a.yaml").write_text("{{ .Values.a }}\n")
    (work / "chart" / "README.md").write_text("not a chart file\n")
    _git("init", "-q", cwd=work)
    _git("add", ".", cwd=work)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c", cwd=work)
    _git("tag", "v1.0.0", cwd=work)
    mirrors = tmp_path / "mirrors"
    _git("clone", "-q", "--bare", str(work), str(mirrors / "owner+demo" / "repo"), cwd=tmp_path)
    regen = script()
    ref = regen.MirrorRef("owner/demo", "v1.0.0")
    data, source = regen.read(mirrors, ref, "chart/Chart.yaml")
    assert data == b"name: demo\n"
    assert source["repository"] == "https://github.com/owner/demo" and source["tag"] == "v1.0.0"
    assert len(source["commit"]) == 40 and len(source["blob"]) == 40
    assert regen.chart_files(mirrors, ref, "chart") == {
        "Chart.yaml": "name: demo\n",
        "templates/a.yaml": "{{ .Values.a }}\n",
    }
    with pytest.raises(SystemExit, match="fetch github:owner/other"):
        regen.read(mirrors, regen.MirrorRef("owner/other", "v1.0.0"), "x")
    with pytest.raises(SystemExit, match="v9.9.9"):
        regen.read(mirrors, regen.MirrorRef("owner/demo", "v9.9.9"), "chart/Chart.yaml")
