"""A smoke-test training step: every rank joins NCCL, all-reduces 1 GiB and checks the sum.

Replace this file with your own training script; the job runs it with torchrun, one rank per GPU.
"""

import os

import torch
import torch.distributed as dist


def main() -> None:
    """All-reduce a tensor of ones across every GPU of the job and check the result."""
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    ones = torch.ones(1 << 28, device="cuda")
    dist.all_reduce(ones)
    if ones[0].item() != dist.get_world_size():
        raise SystemExit(f"all_reduce returned {ones[0].item()}, expected {dist.get_world_size()}")
    if dist.get_rank() == 0:
        print(f"all_reduce over {dist.get_world_size()} GPUs: ok")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
