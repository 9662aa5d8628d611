"""Facts about the EKS AL2023 ARM64 NVIDIA AMI that the node user data acts on (findings in docs/node-image.md)."""

from __future__ import annotations

# The host IMEX daemon's systemd unit. The AMI build installs the nvidia-imex package but enables only
# nvidia-fabricmanager and nvidia-persistenced (awslabs/amazon-eks-ami
# templates/al2023/provisioners/install-nvidia-driver.sh; templates/al2023/runtime/gpu/setup-nvidia.sh).
# Whether the package's own preset enables the unit is UNVERIFIED. A running host daemon breaks DRA-managed
# ComputeDomains (kubernetes-sigs/dra-driver-nvidia-gpu issue #524: "you need to disable that so that the DRA
# driver can orchestrate the IMEX daemons"), so the nodes disable and mask it either way.
HOST_IMEX_SERVICE = "nvidia-imex.service"

NODECONFIG_CONTENT_TYPE = "application/node.eks.aws"
"""MIME type of a nodeadm NodeConfig part in EC2 user data (amazon-eks-ami, nodeadm docs)."""

# GPUDirect RDMA between EFA and GB200 GPUs on the R580 driver needs the NVIDIA kernel module parameter
# NVreg_GrdmaPciTopoCheckOverride=1; without it NCCL silently falls back to TCP sockets (NVIDIA/aicr pull request
# #668, "required on the NVIDIA driver so EFA can attach dma-buf to the Grace PCI topology. Without it, NCCL silently
# falls back to Socket on NET", merged 2026-04-24). A node shows the value in /proc/driver/nvidia/params as
# "GrdmaPciTopoCheckOverride: 1" (NVIDIA/aicr issue #2459, which also reports that the R595 driver no longer has the
# parameter). Whether the EKS AL2023 NVIDIA AMI sets it is UNVERIFIED.
GRDMA_TOPO_OVERRIDE = "NVreg_GrdmaPciTopoCheckOverride"
NVIDIA_PARAMS_FILE = "/proc/driver/nvidia/params"
