"""The Kueue Configuration the toolkit generates has only fields of Kueue 0.19.2's Go types, with their JSON types.

The schema is derived from apis/config/v1beta2/configuration_types.go at v0.19.2 by
scripts/regen_upstream_fixtures.py (tests/fixtures/kueue-configuration-v1beta2.json).
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from helpers.stacks import ROOT
from ultraserver.builders import kueue
from ultraserver.facts.hardware.devices import DeviceMode

SCHEMA = json.loads((ROOT / "tests" / "fixtures" / "kueue-configuration-v1beta2.json").read_text())


def errors(config: dict[str, Any]) -> list[str]:
    return [e.message for e in jsonschema.Draft202012Validator(SCHEMA).iter_errors(config)]


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.35", "1.36"])
def test_the_generated_configuration_fits_the_go_types(version: str) -> None:
    config = kueue.kueue_configuration(["gpu-operator"], "kueue-system", DeviceMode("dra", version))
    assert errors(config) == []
    mapped = "deviceClassMappings" in config["resources"]
    assert mapped == (version != "1.33") and ("featureGates" in config) == (version == "1.33")


def test_a_misspelt_or_mistyped_field_is_caught() -> None:
    config = kueue.kueue_configuration(mode=DeviceMode("plugins", "1.35"))
    config["resources"]["deviceClassMapping"] = config["resources"].pop("deviceClassMappings")
    assert any("deviceClassMapping" in e for e in errors(config))
    typed = kueue.kueue_configuration(mode=DeviceMode("plugins", "1.33"))
    typed["featureGates"] = {"KueueDRAIntegration": "false"}
    assert errors(typed)
