"""A smoke-test training loop: every rank joins NCCL, all-reduces 1 GiB a step and checks the sum; it stops cleanly
when the block's reclaim drain says the pod will be evicted.

Replace the step with your own training; keep ``eviction_notice``: the drain writes ``ultraserver.io/evict-at`` on
every pod of an ending block (docs/submitting-jobs.md, "When the block ends"), and the job mounts the pod's
annotations at NOTICE_FILE. Checkpoint once it appears, and be done before that time.
"""

import os
import re
import time
from datetime import datetime, timezone

import torch
import torch.distributed as dist

NOTICE_FILE = "/etc/ultraserver/annotations"
EVICT_AT = "ultraserver.io/evict-at"
STEPS = int(os.environ.get("STEPS", "20"))


def eviction_notice(path: str = NOTICE_FILE) -> datetime | None:
    """When the drain will evict this pod, from the downward API file (one ``key="value"`` line per annotation);
    None while the block is not ending."""
    try:
        with open(path) as handle:
            text = handle.read()
    except OSError:
        return None
    found = re.search(rf'^{re.escape(EVICT_AT)}="([^"]+)"$', text, re.MULTILINE)
    return datetime.fromisoformat(found.group(1).replace("Z", "+00:00")) if found else None


def checkpoint(step: int) -> None:
    """Save what a restart on the next block needs (here: only the step, to show where)."""
    if dist.get_rank() == 0:
        print(f"checkpoint at step {step}")


def main() -> None:
    """All-reduce a tensor of ones across every GPU of the job each step; checkpoint and stop on the drain's notice."""
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    ones = torch.ones(1 << 28, device="cuda")
    for step in range(STEPS):
        # Every rank reads its own pod's notice; the ranks agree by an all-reduce of the flag (one rank told is enough).
        told = torch.tensor([1.0 if eviction_notice() else 0.0], device="cuda")
        dist.all_reduce(told)
        if told.item():
            checkpoint(step)
            left = (eviction_notice() or datetime.now(timezone.utc)) - datetime.now(timezone.utc)
            if dist.get_rank() == 0:
                print(f"evicted in {left.total_seconds():.0f} s: stopping after the checkpoint")
            break
        ones.fill_(1)
        dist.all_reduce(ones)
        if ones[0].item() != dist.get_world_size():
            raise SystemExit(f"all_reduce returned {ones[0].item()}, expected {dist.get_world_size()}")
        time.sleep(1)
    if dist.get_rank() == 0:
        print(f"all_reduce over {dist.get_world_size()} GPUs: ok")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
