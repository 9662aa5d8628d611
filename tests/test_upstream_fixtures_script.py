"""scripts/regen_upstream_fixtures.py reads the Kueue SOURCE.md rows (full paths and globs) and its configuration."""

from __future__ import annotations

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
