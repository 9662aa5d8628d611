"""The recorded-resource type shared by the offline engine, the plan report and the policy rules.

Neutral on purpose: no Pulumi import, so the policy pack can read recorded resources without loading
Pulumi's mock engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STACK_TYPE = "pulumi:pulumi:Stack"


@dataclass
class PlanResource:
    """One resource the program declares."""

    urn: str
    type: str
    name: str
    parent: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    dependencies: list[str] = field(default_factory=list)
    custom: bool = True
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The plan-JSON form (the stable contract)."""
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "inputs": self.inputs,
            "dependencies": self.dependencies,
        }
