"""Preflight: EKS offers every add-on version the stack pins, for the stack's Kubernetes minor and region.

Some of the toolkit's add-on pins are unverified (``facts/pins/addons.py``); this is where they meet the real account.
``aws eks describe-addon-versions --addon-name NAME --kubernetes-version MINOR`` lists what EKS offers.
"""

from __future__ import annotations

from ultraserver.preflight.clients import Client, call_all
from ultraserver.preflight.report import FAIL, PASS, check
from ultraserver.preflight.target import PreflightTarget
from ultraserver.problems import Problem

SHOWN = 3
"""How many offered versions a fail line names."""


def check_addon_versions(target: PreflightTarget, eks: Client) -> list[Problem]:
    """One line per pinned add-on: PASS when EKS offers its version for the minor, FAIL naming what it offers."""
    minor = target.kubernetes_version
    found = []
    for addon, version in sorted(target.addon_versions.items()):
        answer = call_all(eks, "describe_addon_versions", addonName=addon, kubernetesVersion=minor)
        offered = [v.get("addonVersion", "") for a in answer.get("addons", []) for v in a.get("addonVersions", [])]
        label = f"add-on {addon} {version}"
        if version in offered:
            found.append(check(label, PASS, f"offered for Kubernetes {minor}"))
            continue
        newest = ", ".join(offered[:SHOWN]) or "none"
        found.append(
            check(
                label,
                FAIL,
                f"EKS in {target.region} does not offer {version} for Kubernetes {minor} (offers {newest})",
                "set the add-on's version in the stack's addons section to one EKS offers, with "
                "acceptUntestedVersions: true, or update the toolkit (docs/versions.md)",
            )
        )
    return found
