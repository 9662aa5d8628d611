"""A job's DRA-mode ResourceClaimTemplate as a Kubernetes object (builders/device_claims.py builds it)."""

from __future__ import annotations

from typing import Any

import pulumi

from ultraserver.resources.replaced_resource import custom_resource


def claim_template_resource(
    name: str, manifest: dict[str, Any] | None, opts: pulumi.ResourceOptions
) -> list[pulumi.Resource]:
    """The template (none when `manifest` is None, i.e. plugins mode), to be created before the job's pods."""
    if manifest is None:
        return []
    return [custom_resource(name, manifest, opts)]
