"""How many addresses the VPC CNI holds on each node, which the subnet sizing (config/subnets.py) must cover.

aws/amazon-vpc-cni-k8s README.md (master b52188387, 2026-08-20; read 2026-11-27):
- ``WARM_ENI_TARGET`` "Default: 1": ipamd keeps "1 elastic network interface and all of its IP addresses available
  for pod assignment", a whole spare interface of addresses on every node; "If WARM_IP_TARGET is set, then this
  environment variable is ignored". pulumi-eks sets WARM_ENI_TARGET to 1 unless told otherwise
  (pulumi/pulumi-eks nodejs/eks/addons/cni-addon.ts:387-390 at v4.3.0).
- ``MINIMUM_IP_TARGET``: "a target number for a floor on how many total IP addresses are allocated"; ``WARM_IP_TARGET``
  "the number of free IP addresses that the ipamd daemon should attempt to keep available"; "It is strongly suggested
  to set MINIMUM_IP_TARGET when using WARM_IP_TARGET".
Its docs/eni-and-ip-target.md: "If you plan to run around 10 pods, the advice is to set MINIMUM_IP_TARGET slightly
higher than that, like 12, and have WARM_IP_TARGET=2"; it also warns that WARM_IP_TARGET adds EC2 calls (throttling) for
clusters with high pod churn. GPU nodes run a fixed set of DaemonSets and few, long jobs (low churn), so the floor
is the planned pods per GPU node (network.gpuPodsPerNode, which the subnets are sized for) and the warm pool 2: a
node holds at most its pods plus 2 addresses, inside the sizing's headroom, instead of its pods plus a whole ENI.
"""

from __future__ import annotations

WARM_IP_TARGET = 2
"""Free addresses ipamd keeps on a node beyond those in use (the eni-and-ip-target.md advice)."""


def configuration_values(minimum_ips: int) -> dict[str, dict[str, str]]:
    """The vpc-cni add-on's configurationValues: the warm pool by addresses, with ``minimum_ips`` per node from the
    start (the add-on's env values are strings)."""
    return {"env": {"WARM_IP_TARGET": str(WARM_IP_TARGET), "MINIMUM_IP_TARGET": str(minimum_ips)}}
