"""What would roll a capacity-block group's nodes, read the same way from this plan and from the deployed state.

A managed node group replaces every node when its Kubernetes version, AMI release, AMI type, labels or taints
change, or when its launch template gets a new version (any change to the template's data). An Auto Scaling
group with a new template version launches new nodes with it. Inside a capacity block there is no spare
capacity for that surge, so EKS requires the group at desired size 0 first (EKS user guide capacity-blocks-mng).

The deployed state comes from a previous ``ultraserver plan --json`` or from ``pulumi stack export``; both hold
each resource's inputs (camelCase) and dependencies, so one reader serves both.
"""

from __future__ import annotations

import base64
import binascii
import email
from collections.abc import Mapping
from typing import Any

import yaml

from ultraserver.facts.aws.aws_ids import AMI_RELEASE
from ultraserver.facts.pins.ami import NODECONFIG_CONTENT_TYPE
from ultraserver.policy.model import AUTOSCALING_GROUP, PlanResource, is_unknown, tags_of
from ultraserver.problems import ConfigError, Described, Problem

# Node-group inputs whose change replaces the group's nodes (EKS UpdateNodegroupVersion / UpdateNodegroupConfig).
ROLLING_GROUP_INPUTS = ("version", "releaseVersion", "amiType", "labels", "taints")
# Launch-template inputs that are not launch-template data: changing them makes no new version.
TEMPLATE_METADATA = frozenset(
    {"tags", "tagsAll", "name", "namePrefix", "description", "updateDefaultVersion", "defaultVersion", "latestVersion"}
)
SECRET = "[secret]"
DEFAULTS_KEY = "__defaults"
_SECRET_SIG = ("4dabf18193072939515e22adb298388d", "1b47061264138c4ac30d75fd1eb44270")


def is_placeholder(value: Any) -> bool:
    """A value nobody knows yet: unknown in a preview, "[unknown]"/"[secret]", or an offline placeholder.

    Offline placeholders all say so ("offline" in the value, ultraserver/offline/placeholders.py); they stand for
    what AWS will return, so they can be compared with nothing.
    """
    if is_unknown(value):
        return True
    return isinstance(value, str) and (value in ("[unknown]", SECRET) or "offline" in value)


def node_config_parts(user_data: Any) -> Any:
    """Base64 MIME user data as its parts, NodeConfig parts parsed and without the cluster section.

    The cluster section (endpoint, CA, service CIDR) is an output of the cluster, a placeholder offline, and
    changes only with a new cluster; every other NodeConfig field is compared.
    """
    if not isinstance(user_data, str) or is_placeholder(user_data):
        return user_data
    try:
        text = base64.b64decode(user_data, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return user_data
    parts: list[Any] = []
    for part in email.message_from_string(text).walk():
        if part.is_multipart():
            continue
        payload = str(part.get_payload())
        if part.get_content_type() == NODECONFIG_CONTENT_TYPE:
            document = yaml.safe_load(payload)
            if isinstance(document, dict) and isinstance(document.get("spec"), dict):
                document["spec"].pop("cluster", None)
            parts.append(document)
        else:
            parts.append(payload)
    return parts


def rolling_fields(group: PlanResource, template: PlanResource | None) -> dict[str, Any]:
    """The inputs of a group and its launch template whose change rolls the group's nodes."""
    fields: dict[str, Any] = {}
    if group.type != AUTOSCALING_GROUP:
        fields.update({key: group.inputs.get(key) for key in ROLLING_GROUP_INPUTS})
    if template is not None:
        fields["imageId"] = template.inputs.get("imageId")
        fields["amiRelease"] = tags_of(template.inputs).get(AMI_RELEASE)
        fields["launchTemplate"] = {
            key: node_config_parts(value) if key == "userData" else value
            for key, value in template.inputs.items()
            if key not in TEMPLATE_METADATA
        }
    return fields


def _flatten(value: Any, path: str, out: dict[str, Any]) -> None:
    """Leaf paths (``a.b[0].c``) and values."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            _flatten(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _flatten(item, f"{path}[{index}]", out)
        if not value:
            out[path] = []
    else:
        out[path] = value


def changed_fields(before: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """Top-level fields of ``before`` whose value differs now; values not known on either side are skipped.

    Only fields the deployed state names are compared, so a partial state (e.g. only ``version``) works too.
    """
    changed = []
    for key, old in before.items():
        if key not in now:
            continue
        was: dict[str, Any] = {}
        is_now: dict[str, Any] = {}
        _flatten(old, key, was)
        _flatten(now[key], key, is_now)
        for path in sorted(set(was) | set(is_now)):
            a, b = was.get(path), is_now.get(path)
            if is_placeholder(a) or is_placeholder(b) or a == b:
                continue
            changed.append(path)
    return changed


def _plain(value: Any) -> Any:
    """Stack-export values as the program declared them: secrets masked, provider-filled defaults dropped.

    Bridged providers record the fields their Check filled with defaults in ``__defaults`` next to them; the
    program never set those, so the plan does not show them either.
    """
    if isinstance(value, Mapping):
        if value.get(_SECRET_SIG[0]) == _SECRET_SIG[1]:
            return SECRET
        filled = value.get(DEFAULTS_KEY)
        dropped = {DEFAULTS_KEY, *(filled if isinstance(filled, list) else [])}
        return {k: _plain(v) for k, v in value.items() if k not in dropped}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def deployed_resources(data: Any, source: str = "--deployed") -> list[PlanResource]:
    """Resources of a ``pulumi stack export`` file or of an ``ultraserver plan --json`` file, or ConfigError."""
    if isinstance(data, Mapping) and isinstance(data.get("deployment"), Mapping):
        raw = data["deployment"].get("resources") or []
    elif isinstance(data, Mapping) and isinstance(data.get("resources"), list):
        raw = data["resources"]
    else:
        raise ConfigError(
            Problem(
                source,
                Described("a file with neither deployment.resources nor resources"),
                "a `pulumi stack export` file (deployment.resources) or an `ultraserver plan --json` file (resources)",
                "pass the output of `pulumi stack export --file FILE` or of `ultraserver plan --stack NAME --json "
                "FILE` from the deployed commit",
            )
        )
    out = []
    for item in raw:
        if not isinstance(item, Mapping) or not isinstance(item.get("urn"), str):
            continue
        urn = item["urn"]
        out.append(
            PlanResource(
                urn=urn,
                type=str(item.get("type", "")),
                name=str(item.get("name") or urn.rsplit("::", 1)[-1]),
                parent=str(item.get("parent") or ""),
                inputs=_plain(item.get("inputs") or {}),
                dependencies=[d for d in item.get("dependencies") or [] if isinstance(d, str)],
                custom=bool(item.get("custom", True)),
            )
        )
    return out
