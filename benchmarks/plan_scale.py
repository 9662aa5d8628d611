"""How the offline plan scales with the number of UltraServers, and how many node groups each layout needs.

Run: ``python benchmarks/plan_scale.py [--sizes 1 4 16 32 100 1000]``. For each size it plans two stacks,
one managed node group per UltraServer and grouped mode (one self-managed Auto Scaling group per resource
group of up to FLEET_PER_GROUP UltraServers, a toolkit choice: Auto Scaling documents no cap on the instances
of one group, only 500 groups per region), and prints resources, managed node groups (against the EKS quota of
30), GPUs, VPC CIDR blocks, the wall time and the peak resident memory of the process so far (getrusage). GPU subnets
beyond the primary /16 go into secondary blocks of 100.64.0.0/10 (config/subnets.py). Timings are
measurements for this machine, not assertions.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

import yaml
from ultraserver.config.subnets import free_blocks, ips_needed
from ultraserver.facts import limits
from ultraserver.offline import run_plan
from ultraserver.offline.report import NODE_GROUP, gpu_groups

MANAGED_NODE_GROUP_QUOTA = limits.MANAGED_NODE_GROUPS_PER_CLUSTER.maximum
ROOT = Path(__file__).resolve().parent.parent
FLEET_PER_GROUP = 50
"""UltraServers per self-managed group in grouped mode (900 nodes; 1,000 UltraServers make 20 groups)."""
PRIMARY = "10.0.0.0/16"
GPU_PODS_PER_NODE = 8


def secondary_blocks(ultraservers: int) -> list[str]:
    """The secondary VPC blocks the GPU subnets of ``ultraservers`` x72 UltraServers need beyond the primary /16."""
    ips = ips_needed(ultraservers * 18, GPU_PODS_PER_NODE, 1)
    return free_blocks([PRIMARY], -(-ips // 2**16) if ips > 2**15 else 0)


def stack_config(ultraservers: int, grouped: bool) -> dict:
    """A stack of ``ultraservers`` u-p6e-gb200x72 UltraServers in the Dallas Local Zone."""
    if grouped:
        groups = [
            {
                "name": f"fleet-{i}",
                "mode": "self-managed",
                "availabilityZone": "us-east-1-dfw-2a",
                "capacityReservationResourceGroupArn": (
                    f"arn:aws:resource-groups:us-east-1:111122223333:group/fleet-{i}"
                ),
                "ultraserverCount": min(FLEET_PER_GROUP, ultraservers - i * FLEET_PER_GROUP),
            }
            for i in range((ultraservers + FLEET_PER_GROUP - 1) // FLEET_PER_GROUP)
        ]
    else:
        ids = [f"cr-{i:017x}" for i in range(ultraservers)]
        groups = [{"name": "nvl72", "availabilityZone": "us-east-1-dfw-2a", "capacityReservationIds": ids}]
    return {
        "config": {
            "aws:region": "us-east-1",
            # A new VPC: the deployer reaches a public endpoint limited to its CIDRs (docs/deploy.md, first deploy).
            "ultraserver-eks:cluster": {"name": "bench", "endpointPublicAccessCidrs": ["203.0.113.0/24"]},
            "ultraserver-eks:network": {
                "availabilityZones": ["us-east-1a", "us-east-1b"],
                "gpuPodsPerNode": GPU_PODS_PER_NODE,
                "vpcCidr": PRIMARY,
                "secondaryVpcCidrs": secondary_blocks(ultraservers),
            },
            "ultraserver-eks:gpuNodeGroups": groups,
        }
    }


def measure(project: Path, ultraservers: int, grouped: bool) -> str:
    """Plan one generated stack and describe it in one line."""
    stack = f"bench-{ultraservers}-{'grouped' if grouped else 'per-us'}"
    (project / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(stack_config(ultraservers, grouped)))
    start = time.perf_counter()
    plan = run_plan(project, stack)
    seconds = time.perf_counter() - start
    # Linux reports ru_maxrss in KiB: the process's peak so far, so sizes run smallest first.
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    managed = len(plan.of_type(NODE_GROUP))
    gpus = sum(g.full_size * 4 for g in gpu_groups(plan))
    flag = "" if managed <= MANAGED_NODE_GROUP_QUOTA else f"  over the quota of {MANAGED_NODE_GROUP_QUOTA}"
    mode = "grouped" if grouped else "per-UltraServer"
    blocks = 1 + len(plan.of_type("aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation"))
    return (
        f"{ultraservers:5d}  {mode:15s}  {len(plan.resources):9d}  {managed:11d}  {gpus:6d}  {blocks:6d}  "
        f"{seconds:7.2f}s  {peak_mib:8.1f} MiB{flag}"
    )


def size_arg(value: str) -> int:
    """--sizes: a whole number of UltraServers, 1 or more (0 would make a stack without GPU groups)."""
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"got {value!r}; allowed: a whole number of UltraServers, 1 or more")
    return int(value)


def main(argv: list[str] | None = None) -> None:
    """Plan stacks of growing size and print one line per stack."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--sizes",
        type=size_arg,
        nargs="+",
        default=[1, 4, 16, 32, 100, 1000],
        help="UltraServers per planned stack (default: 1 4 16 32 100 1000)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copy(ROOT / "Pulumi.yaml", project)
        shutil.copy(ROOT / "__main__.py", project)
        (project / "stacks").mkdir()
        print("  UltraServers  mode           resources  managed NGs  GPUs    blocks  plan time  peak memory")
        for size in args.sizes:
            for grouped in (False, True):
                print(measure(project, size, grouped))


if __name__ == "__main__":
    main()
