"""Test helper: turn aws.ec2.LaunchTemplate arguments into the EC2 CreateLaunchTemplate request and check it.

Works for both spellings: snake_case keyword arguments (launch_template_args) and the camelCase inputs a
resource is recorded with under Pulumi mocks. The walk follows botocore's ec2 service model, so a
field EC2 does not know, a wrong type or a value outside an enum is reported; botocore's
ParamValidator then checks required members, types and ranges of the whole request.
"""

from __future__ import annotations

import re
from typing import Any, cast

import botocore.session
from botocore.model import Shape, StructureShape
from botocore.validate import ParamValidator

OPERATION = botocore.session.get_session().get_service_model("ec2").operation_model("CreateLaunchTemplate")
INPUT = cast(StructureShape, OPERATION.input_shape)
# Pulumi names that differ from EC2's beyond snake/camel to Pascal case.
RENAMES = {
    "securityGroups": "Groups",
    "vpcSecurityGroupIds": "SecurityGroupIds",
    "securityGroupNames": "SecurityGroups",
}
# Pulumi-only settings of the resource, not part of the EC2 request.
RESOURCE_ONLY = {"updateDefaultVersion", "defaultVersion", "region", "description"}


def _camel(key: str) -> str:
    """snake_case or camelCase to camelCase."""
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _pascal(key: str) -> str:
    """The EC2 member name of a Pulumi field."""
    camel = _camel(key)
    return RENAMES.get(camel, camel[:1].upper() + camel[1:])


def _convert(value: Any, shape: Shape, path: str, problems: list[str]) -> Any:
    """Value reshaped to ``shape``, noting fields and values EC2 would not accept."""
    kind = shape.type_name
    if kind == "structure":
        assert isinstance(shape, StructureShape)
        if not isinstance(value, dict):
            problems.append(f"{path}: expected a structure, got {value!r}")
            return value
        out = {}
        for key, item in value.items():
            member = _pascal(key)
            if member not in shape.members:
                problems.append(f"{path}.{member}: not a field of {shape.name}")
                continue
            if item is not None:
                out[member] = _convert(item, shape.members[member], f"{path}.{member}", problems)
        return out
    if kind == "list":
        element = shape.member  # type: ignore[attr-defined]
        if isinstance(value, dict) and set(getattr(element, "members", {})) >= {"Key", "Value"}:
            value = [{"key": k, "value": v} for k, v in value.items()]  # Pulumi tag maps are EC2 tag lists
        if not isinstance(value, list):
            problems.append(f"{path}: expected a list, got {value!r}")
            return value
        return [_convert(item, element, f"{path}[{n}]", problems) for n, item in enumerate(value)]
    if kind == "boolean" and value in ("true", "false"):
        return value == "true"  # Pulumi carries some EC2 booleans as strings
    if kind in ("integer", "long") and isinstance(value, float) and value.is_integer():
        return int(value)  # mocks record numbers as floats
    allowed = (getattr(shape, "enum", []) or _documented_values(shape)) if kind == "string" else []
    if allowed and value not in allowed:
        problems.append(f"{path}: {value!r} is not one of {allowed}")
    return value


def _documented_values(shape: Shape) -> list[str]:
    """Values a plain string member lists in its documentation ("Valid values: a | b"), if any."""
    match = re.search(r"Valid values:((?:\s*<code>[^<]+</code>\s*\|?)+)", shape.documentation or "")
    return re.findall(r"<code>([^<]+)</code>", match.group(1)) if match else []


def create_launch_template_request(args: dict[str, Any], name: str = "lt") -> tuple[dict[str, Any], list[str]]:
    """The CreateLaunchTemplate request for LaunchTemplate arguments, and the fields that do not map."""
    problems: list[str] = []
    data_shape = INPUT.members["LaunchTemplateData"]
    fields = {_camel(key): value for key, value in args.items() if value is not None}
    template_name = fields.pop("name", None) or fields.pop("namePrefix", None) or name
    tags = fields.pop("tags", None)
    data = {key: value for key, value in fields.items() if key not in RESOURCE_ONLY}
    request: dict[str, Any] = {
        "LaunchTemplateName": re.sub(r"[^A-Za-z0-9().\-/_]", "-", template_name),
        "LaunchTemplateData": _convert(data, data_shape, "LaunchTemplateData", problems),
    }
    if tags:
        spec_shape = INPUT.members["TagSpecifications"]
        request["TagSpecifications"] = _convert(
            [{"resource_type": "launch-template", "tags": tags}], spec_shape, "TagSpecifications", problems
        )
    return request, problems


def request_problems(args: dict[str, Any], name: str = "lt") -> list[str]:
    """Everything botocore's ec2 model finds wrong with the request these arguments make."""
    request, problems = create_launch_template_request(args, name)
    report = ParamValidator().validate(request, INPUT)
    if report.has_errors():
        problems.append(report.generate_report())
    return problems
