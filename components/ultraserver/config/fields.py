"""Field types of the settings model: patterns described in words, CIDRs, zones, times, and the base model.

Each type carries the text error messages show as "allowed" (``PATTERNS`` for regexes, ``check`` for
validators), so a bad value is reported as the stack key, the value, what is allowed and the fix.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    GetCoreSchemaHandler,
    GetPydanticSchema,
    StrictStr,
    StringConstraints,
    ValidationInfo,
    WithJsonSchema,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError, core_schema

from ultraserver import clock
from ultraserver.config.files import SECRET_PLACEHOLDER
from ultraserver.facts.aws import aws_ids
from ultraserver.facts.capacity import capacity_blocks
from ultraserver.facts.hardware import efa
from ultraserver.facts.hardware.ultraservers import MAX_NODES
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.pins import ami

_TIME_OF_DAY = re.compile(r"[T ][0-9]{2}:[0-9]{2}")
PATTERNS: dict[str, str] = {}
"""Regex -> what it allows, in words; error messages show the words, the JSON Schema the regex."""


PATTERN_FIXES: dict[str, str] = {}
"""The fix of a pattern whose error says more than "correct <key>" (keyed as PATTERNS)."""


def pattern(regex: str, allowed: str, *, empty: bool = False, secret: bool = False, fix: str = "") -> GetPydanticSchema:
    """Strict string constraints matching ``regex`` (or empty when ``empty``), described as ``allowed`` in errors.

    Use as ``Annotated[str, pattern(...)]``. With ``secret`` (a value no rule reads further), a Pulumi secret passes
    unchecked: offline it is a placeholder (the backend that decrypts it is not asked), and the program checks the
    real value when `pulumi up` runs it.
    """
    full = f"^(?:{regex})?$" if empty else f"^(?:{regex})$"
    PATTERNS[full] = allowed + (" (or empty)" if empty else "")
    if fix:
        PATTERN_FIXES[full] = fix
    constraints = StringConstraints(strict=True, pattern=full)

    def schema(source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        checked = handler.generate_schema(Annotated[source, constraints])
        return core_schema.no_info_wrap_validator_function(_unless_secret, checked) if secret else checked

    return GetPydanticSchema(schema)


def _unless_secret(value: Any, checked: Callable[[Any], Any]) -> Any:
    return value if value == SECRET_PLACEHOLDER else checked(value)


def problem_error(allowed: str, fix: str, suggestion: Any = None) -> PydanticCustomError:
    """A validation error that carries its own 'allowed' and 'fix' text (and the value the fix proposes, if one)."""
    return PydanticCustomError("ultraserver", "{allowed}", {"allowed": allowed, "fix": fix, "suggestion": suggestion})


def check(test: Callable[[Any], str | None], fix: str = "") -> AfterValidator:
    """An after-validator: ``test`` returns what is allowed when the value is bad, else None."""

    def run(value: Any) -> Any:
        allowed = test(value)
        if allowed:
            raise problem_error(allowed, fix or "correct the value")
        return value

    return AfterValidator(run)


def _cidr_allowed(value: str) -> str | None:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as err:
        if "host bits set" in str(err):
            return f"a network address without host bits (here {ipaddress.ip_network(value, strict=False)})"
        return "a CIDR such as 203.0.113.0/24"
    return None


def _to_text(value: Any) -> Any:
    """Tag and label values YAML read as numbers or booleans, as the text the user wrote."""
    if isinstance(value, dict):
        return {
            k: (str(v).lower() if isinstance(v, bool) else str(v)) if isinstance(v, (int, float)) else v
            for k, v in value.items()
        }
    return value


def _parse_time(value: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise problem_error(
            "an ISO 8601 time such as 2026-12-01T11:30:00Z", "copy the time from describe-capacity-blocks"
        ) from None
    if moment.tzinfo is None or not _TIME_OF_DAY.search(value):
        # Read as UTC it could be hours off a block given in local time; --now refuses a naive time the same way.
        # A date alone (Python reads 2026-12-08+00:00 as a date without a zone) gets the hour blocks end at.
        if not _TIME_OF_DAY.search(value):
            moment = moment.replace(hour=capacity_blocks.BLOCK_END_UTC[0], minute=capacity_blocks.BLOCK_END_UTC[1])
        suggestion = f"{moment:%Y-%m-%dT%H:%M:%S}Z"
        raise problem_error(
            "a time with its time zone, such as 2026-12-01T11:30:00Z",
            f"write {suggestion} if it is UTC, as describe-capacity-blocks prints it",
            suggestion,
        )
    return moment


def kubernetes_version_check(version: str, info: ValidationInfo) -> str:
    """A minor at the GB200 floor that EKS offers today and the toolkit pins an AMI release for."""
    today = (info.context or {}).get("today") or clock.now().date()
    usable = eks_versions.supported(tuple(ami.RELEASE_VERSIONS), today)
    if version in usable:
        return version
    why = "; the toolkit pins no GB200 AMI release for it yet" if eks_versions.offered(version, today) else ""
    why = why or "; EKS does not offer it"
    if not eks_versions.at_floor(version):
        why = "; below the floor: GB200 needs DRA"
    # Suggest the default, else the oldest version still in standard support (extended support costs more).
    standard = [v for v in usable if not eks_versions.past_standard_support(v, today)]
    fallback = (standard or usable or [eks_versions.FLOOR_TEXT])[0]
    suggestion = eks_versions.DEFAULT_TEXT if eks_versions.DEFAULT_TEXT in standard else fallback
    span = eks_versions.offered_span(tuple(ami.RELEASE_VERSIONS))
    if not usable and span is not None:
        # No pinned minor at all on this day: the day is outside the calendar the toolkit knows, not the version.
        raise problem_error(
            f"a version EKS offers on {today}, the day the settings are judged at; the toolkit knows EKS's offer "
            f"from {span[0]} to {span[1]} only",
            f"judge the stack at a moment from {span[0]} to {span[1]} (--now, rehearse --at, the clock), or update "
            "the toolkit",
        )
    raise problem_error(
        f"{eks_versions.FLOOR_TEXT} or newer, one of {', '.join(usable) or 'none today (update the toolkit)'}{why}",
        f'set kubernetesVersion: "{suggestion}"',
    )


def all_nodes(value: Any) -> Any:
    """imexCheck.nodes: "all" means every node of the UltraServer (None); other words are refused by name."""
    if isinstance(value, str) and value != "all":
        raise problem_error(
            f'an integer 2 to {MAX_NODES}, or "all"', 'write nodes: 2 (up to the UltraServer size) or nodes: "all"'
        )
    return None if value == "all" else value


Cidr = Annotated[StrictStr, check(_cidr_allowed, "write the network address, e.g. 10.0.0.0/16")]
Zone = Annotated[
    str,
    pattern(aws_ids.ZONE, "a zone name such as us-east-1a or us-east-1-dfw-2a"),
]
SecurityGroupId = Annotated[str, pattern(aws_ids.SECURITY_GROUP_ID, "a security group id like sg-0123456789abcdef0")]
SubnetId = Annotated[str, pattern(aws_ids.SUBNET_ID, "a subnet id like subnet-0123456789abcdef0")]
SnsTopicArn = Annotated[
    str,
    pattern(aws_ids.SNS_TOPIC_ARN, "an SNS topic ARN arn:aws:sns:<region>:<12-digit account>:<topic name>", empty=True),
]
# A secret e-mail address passes offline: no rule reads it further.
EmailAddress = Annotated[
    str, pattern(r"[^@\s]+@[^@\s]+\.[^@\s]+", "an e-mail address such as ops@example.com", secret=True)
]
ManifestMirror = Annotated[
    str, pattern(r"https://[^\s/]+(/[^\s]*)?|/[^\s]*", "an https:// URL prefix or an absolute directory", empty=True)
]
"""Where pinned manifests are read instead of their URLs: an https:// URL prefix or an absolute local directory."""
# An oci:// path is a repository name: lowercase components of letters and digits joined by '.', '_', '__' or
# dashes (OCI distribution spec v1.1.0 spec.md, "Pulling manifests", read 2026-11-27: "<name> MUST match the
# following regular expression: [a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(\/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*");
# Helm refuses any other before it connects ("invalid reference", Helm v4.1.4: tests/resources/test_chart_mirror.py).
_PORT = r"(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?"
"""An optional TCP port, 1 to 65535 (Go's dial refuses any other: 'invalid port')."""
_AUTHORITY = rf"[A-Za-z0-9.-]+{_PORT}"
"""An ASCII host name or address with its optional port: the same rule for both schemes a chart mirror takes."""
ChartMirror = Annotated[
    str,
    pattern(
        rf"https://{_AUTHORITY}(/[A-Za-z0-9._~%+@/-]*)?|oci://{_AUTHORITY}(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*/?",
        "an https:// Helm repository URL or an oci:// registry path (ASCII host, optional port 1-65535 and path; "
        "an oci:// path in lowercase letters and digits joined by '/', '.', '_' or '-')",
        empty=True,
    ),
]
"""Where every chart is pulled instead of its own repository: a Helm repository holding each chart under its name,
or an OCI registry path holding each at `<path>/<chart>` (facts/pins/charts.py ``chart_reference``)."""
ImageMirror = Annotated[
    str,
    pattern(
        rf"{_AUTHORITY}(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*",
        "a registry host with an optional port and path, e.g. 123456789012.dkr.ecr.us-east-1.amazonaws.com/ecr-public "
        "(no scheme; the path in lowercase letters and digits joined by '/', '.', '_' or '-')",
        empty=True,
    ),
]
"""Where the toolkit's own job images are pulled instead of their registries (facts/pins/manifests.py
``mirrored_image``): the same OCI repository-name rule as an oci:// chart mirror."""
PrincipalArn = Annotated[
    str,
    pattern(
        aws_ids.PRINCIPAL_ARN,
        "an IAM role or user ARN (arn:aws:iam::<account>:role/<name>)",
    ),
]
AddonVersion = Annotated[
    str,
    pattern(
        r"v[0-9]+\.[0-9]+\.[0-9]+-eksbuild\.[0-9]+", "an EKS add-on version such as v1.20.4-eksbuild.1", empty=True
    ),
]
Tags = Annotated[dict[StrictStr, StrictStr], BeforeValidator(_to_text)]
Time = Annotated[StrictStr, AfterValidator(_parse_time), WithJsonSchema({"type": "string", "format": "date-time"})]
InstanceType = Annotated[
    StrictStr,
    check(
        lambda v: None if v in efa.supported_instance_types() else "one of " + ", ".join(efa.supported_instance_types())
    ),
    WithJsonSchema({"type": "string", "enum": efa.supported_instance_types()}),
]
EFA_LAYOUT_SCHEMA = {
    "oneOf": [
        {"type": "string", "enum": list(efa.PRESETS)},
        {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "networkCardIndex": {"type": "integer", "minimum": 0},
                    "deviceIndex": {"type": "integer", "minimum": 0},
                    "interfaceType": {"type": "string", "enum": list(efa.INTERFACE_TYPES)},
                },
                "required": list(efa.CUSTOM_KEYS),
                "additionalProperties": False,
            },
        },
    ]
}


def efa_layout_shape(value: Any) -> str | None:
    if isinstance(value, str):
        return None if value in efa.PRESETS else "one of " + ", ".join(efa.PRESETS) + ", or a list of interfaces"
    if isinstance(value, list):
        return None
    return "a preset name or a list of {networkCardIndex, deviceIndex, interfaceType}"


PROJECT = "ultraserver-eks"
"""The Pulumi project's name (Pulumi.yaml): the namespace of the stack keys."""


class Model(BaseModel):
    """Frozen, no unknown keys, camelCase stack keys."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        arbitrary_types_allowed=True,
        allow_inf_nan=False,
    )
