"""A job's DRA-mode ResourceClaimTemplate as a Kubernetes object (builders/device_claims.py builds it)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s


def claim_template_resource(
    name: str, manifest: dict[str, Any] | None, opts: pulumi.ResourceOptions
) -> list[pulumi.Resource]:
    """The template (none when `manifest` is None, i.e. plugins mode), to be created before the job's pods."""
    if manifest is None:
        return []
    return [
        k8s.apiextensions.CustomResource(
            name,
            api_version=manifest["apiVersion"],
            kind=manifest["kind"],
            metadata=manifest["metadata"],
            spec=manifest["spec"],
            opts=opts,
        )
    ]
