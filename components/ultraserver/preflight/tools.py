"""Programs `pulumi up` runs on the deployer's machine, checked before the deploy instead of discovered by it.

pulumi-eks's kubeconfig authenticates with an exec plugin running ``aws eks get-token`` (pulumi/pulumi-eks
nodejs/eks/cluster/cluster.ts:215 and :268 at v4.3.0, ``command: "aws"`` with ``eks get-token``); the Kubernetes
provider runs it for every Helm release and manifest. Helm itself is built into pulumi-kubernetes, so no helm binary
is needed.
"""

from __future__ import annotations

import re
import shutil
import subprocess

from ultraserver.preflight.report import FAIL, PASS, check
from ultraserver.problems import Problem

NAME = "AWS CLI (aws eks get-token)"
# The EKS user guide's floor for kubeconfig authentication with `aws eks get-token`: "Version 2.12.3 or later or
# version 1.27.160 or later of the AWS CLI" (docs.aws.amazon.com/eks/latest/userguide/create-kubeconfig.html,
# Prerequisites; checked 2026-11-25).
MINIMUM = {1: (1, 27, 160), 2: (2, 12, 3)}
INSTALL = "install AWS CLI v2 (docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html)"


def aws_cli_version() -> str | None:
    """`aws --version`'s output, or None when no aws is on PATH or it does not answer."""
    aws = shutil.which("aws")
    if not aws:
        return None
    try:
        run = subprocess.run([aws, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (run.stdout or run.stderr).strip() or None


def check_aws_cli(version_output: str | None) -> Problem:
    """PASS when the AWS CLI on PATH is new enough for `aws eks get-token`; FAIL with how to install it otherwise."""
    if version_output is None:
        return check(NAME, FAIL, "no aws on PATH (the cluster's kubeconfig runs `aws eks get-token`)", INSTALL)
    found = re.match(r"aws-cli/([0-9]+)\.([0-9]+)\.([0-9]+)", version_output)
    if not found:
        return check(NAME, FAIL, f"cannot read the version in {version_output!r}", INSTALL)
    version = tuple(int(part) for part in found.groups())
    floor = MINIMUM.get(version[0])
    if floor is None or version < floor:
        allowed = " or ".join(".".join(map(str, v)) + "+" for v in MINIMUM.values())
        return check(NAME, FAIL, f"aws-cli {'.'.join(found.groups())} is older than EKS needs ({allowed})", INSTALL)
    return check(NAME, PASS, f"aws-cli {'.'.join(found.groups())}")
