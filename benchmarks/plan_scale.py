"""How the offline plan scales with the number of UltraServers, and how many node groups each layout needs.

Run: ``python benchmarks/plan_scale.py [--sizes 1 4 16 32 100 1000]``. For each size it plans two stacks,
one managed node group per UltraServer and grouped mode (one self-managed Auto Scaling group per resource
group of up to FLEET_PER_GROUP UltraServers, a toolkit choice: Auto Scaling documents no cap on the instances
of one group, only 500 groups per region), and prints resources, managed node groups (against the EKS quota of
30), GPUs, VPC CIDR blocks, the wall time and the peak resident memory of the process so far (getrusage). GPU subnets
beyond the primary /16 go into secondary blocks of 100.64.0.0/10 (config/subnets.py). Timings are
measurements for this machine, not assertions.

Each line also gives the plan's cost per resource and its ratio to the bare offline engine's (the same recording
engine declaring plain resources with no toolkit code). Unless ``--no-floor``, the end compares
``ultraserver plan --stack gb200-x72`` with importing the same Pulumi SDK modules in a fresh interpreter (the import
floor; issue 22 targets at most 1.2x), best of three runs each.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pulumi
import yaml
from ultraserver.config.subnets import free_blocks, ips_needed
from ultraserver.facts import limits
from ultraserver.facts.ultraservers import GPUS_PER_NODE, TYPES
from ultraserver.offline import record, run_plan
from ultraserver.offline.report import NODE_GROUP, gpu_groups

MANAGED_NODE_GROUP_QUOTA = limits.MANAGED_NODE_GROUPS_PER_CLUSTER.maximum
ROOT = Path(__file__).resolve().parent.parent
FLEET_PER_GROUP = 50
"""UltraServers per self-managed group in grouped mode (900 nodes; 1,000 UltraServers make 20 groups)."""
PRIMARY = "10.0.0.0/16"
GPU_PODS_PER_NODE = 8


def secondary_blocks(ultraservers: int) -> list[str]:
    """The secondary VPC blocks the GPU subnets of ``ultraservers`` x72 UltraServers need beyond the primary /16."""
    ips = ips_needed(ultraservers * TYPES["u-p6e-gb200x72"].nodes, GPU_PODS_PER_NODE, 1)
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


def bare_seconds_per_resource(count: int = 2000) -> float:
    """Seconds the offline engine takes per plain resource (no toolkit code), the baseline of the plan's cost."""
    start = time.perf_counter()
    record(lambda: [pulumi.CustomResource("bench:index:Bare", f"r{i}", {"index": i}) for i in range(count)])
    return (time.perf_counter() - start) / count


def best_seconds(code: str, repeats: int = 3) -> float:
    """The fastest of ``repeats`` runs of ``code`` in a fresh interpreter from the repository root."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return min(times)


PLAN_X72 = (
    "import contextlib, io, sys\n"
    "from ultraserver.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
    "    main(['plan', '--stack', 'gb200-x72'])\n"
)


def import_floor() -> str:
    """The gb200-x72 plan against importing the Pulumi SDK modules it uses, as one line."""
    probe = PLAN_X72 + "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0].startswith('pulumi'))))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, check=True, capture_output=True, text=True)
    modules = done.stdout.split()
    floor = best_seconds("".join(f"import {m}\n" for m in modules))
    plan = best_seconds(PLAN_X72)
    return (
        f"plan --stack gb200-x72: {plan:.2f}s; importing its {len(modules)} Pulumi SDK modules: {floor:.2f}s; "
        f"ratio {plan / floor:.2f}"
    )


def measure(project: Path, ultraservers: int, grouped: bool, bare: float) -> str:
    """Plan one generated stack and describe it in one line."""
    stack = f"bench-{ultraservers}-{'grouped' if grouped else 'per-us'}"
    (project / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(stack_config(ultraservers, grouped)))
    start = time.perf_counter()
    plan = run_plan(project, stack)
    seconds = time.perf_counter() - start
    # Linux reports ru_maxrss in KiB: the process's peak so far, so sizes run smallest first.
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    managed = len(plan.of_type(NODE_GROUP))
    gpus = sum(g.full_size * GPUS_PER_NODE for g in gpu_groups(plan))
    flag = "" if managed <= MANAGED_NODE_GROUP_QUOTA else f"  over the quota of {MANAGED_NODE_GROUP_QUOTA}"
    mode = "grouped" if grouped else "per-UltraServer"
    blocks = 1 + len(plan.of_type("aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation"))
    per_resource = seconds / len(plan.resources)
    return (
        f"{ultraservers:5d}  {mode:15s}  {len(plan.resources):9d}  {managed:11d}  {gpus:6d}  {blocks:6d}  "
        f"{seconds:7.2f}s  {per_resource * 1000:6.2f} ms ({per_resource / bare:4.2f}x bare)  {peak_mib:8.1f} MiB{flag}"
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
    parser.add_argument("--no-floor", action="store_true", help="skip the comparison with the SDK import floor")
    args = parser.parse_args(argv)
    bare = bare_seconds_per_resource()
    print(f"bare offline engine: {bare * 1000:.2f} ms per resource")
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        shutil.copy(ROOT / "Pulumi.yaml", project)
        shutil.copy(ROOT / "__main__.py", project)
        (project / "stacks").mkdir()
        print(
            "  UltraServers  mode           resources  managed NGs  GPUs    blocks  plan time  per resource"
            "                 peak memory"
        )
        for size in args.sizes:
            for grouped in (False, True):
                print(measure(project, size, grouped, bare))
    if not args.no_floor:
        print(import_floor())


if __name__ == "__main__":
    main()
