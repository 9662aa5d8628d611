"""How the offline plan scales with the number of UltraServers, and how many node groups each layout needs.

Run: ``python benchmarks/plan_scale.py [--sizes 1 4 16 32 100]``. For each size it plans two stacks,
one managed node group per UltraServer and grouped mode (one self-managed Auto Scaling group per resource
group of up to 25 UltraServers: managed groups target one reservation each, and 25 x 18 = 450 nodes is the
most one group may hold), and prints resources, managed node groups (against the EKS quota of 30), GPUs and
the wall time of the plan. Timings are measurements for this machine, not assertions.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import yaml
from ultraserver.facts import limits
from ultraserver.offline import run_plan
from ultraserver.offline.report import NODE_GROUP, gpu_groups

MANAGED_NODE_GROUP_QUOTA = limits.MANAGED_NODE_GROUPS_PER_CLUSTER.maximum
ROOT = Path(__file__).resolve().parent.parent
FLEET_PER_GROUP = limits.NODES_PER_MANAGED_NODE_GROUP.maximum // 18


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
            # Private-only endpoint: the deployer runs inside the VPC (README "Reachability").
            "ultraserver-eks:cluster": {"name": "bench", "deployerAccess": "in-vpc"},
            "ultraserver-eks:network": {"availabilityZones": ["us-east-1a", "us-east-1b"], "gpuPodsPerNode": 8},
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
    managed = len(plan.of_type(NODE_GROUP))
    gpus = sum(g.full_size * 4 for g in gpu_groups(plan))
    flag = "" if managed <= MANAGED_NODE_GROUP_QUOTA else f"  over the quota of {MANAGED_NODE_GROUP_QUOTA}"
    mode = "grouped" if grouped else "per-UltraServer"
    return f"{ultraservers:5d}  {mode:15s}  {len(plan.resources):9d}  {managed:13d}  {gpus:6d}  {seconds:7.2f}s{flag}"


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
        default=[1, 4, 16, 32, 100],
        help="UltraServers per planned stack (default: 1 4 16 32 100)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copy(ROOT / "Pulumi.yaml", project)
        shutil.copy(ROOT / "__main__.py", project)
        (project / "stacks").mkdir()
        print("UltraServers  mode             resources  managed NGs  GPUs    plan time")
        for size in args.sizes:
            for grouped in (False, True):
                print(measure(project, size, grouped))


if __name__ == "__main__":
    main()
