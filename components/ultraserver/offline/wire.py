"""The Pulumi wire format the offline engine records: its sentinels (sdk/python/lib/pulumi/runtime/rpc.py), and plain
JSON made from it."""

from __future__ import annotations

from typing import Any

SIG = "4dabf18193072939515e22adb298388d"
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


def resource_reference(urn: str, resource_id: str) -> dict[str, str]:
    """A resource reference as an output value carries it."""
    return {SIG: RESOURCE_SIG, "urn": urn, "id": resource_id}


def plain(value: Any) -> Any:
    """Turn a wire-format value into plain JSON: secrets masked, references as URNs, ints as ints."""
    if isinstance(value, dict):
        sig = value.get(SIG)
        if sig == SECRET_SIG:
            return "[secret]"
        if sig == RESOURCE_SIG:
            return value.get("urn", "")
        if sig is not None:
            return f"[{sig}]"
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value == UNKNOWN:
        return "[unknown]"
    return value
