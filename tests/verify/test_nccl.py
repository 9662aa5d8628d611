"""nccl-tests all_reduce_perf parser and the EFA verdict, against published outputs (tests/fixtures/samples)."""

from __future__ import annotations

import pytest
from helpers.fake_cluster import nccl_output, sample
from ultraserver.builders.efa_check import LARGE_MESSAGE_BYTES, derived_min_bus_bandwidth_gbps
from ultraserver.verify.nccl import judge_efa, parse_nccl_output

P6E_THRESHOLD = derived_min_bus_bandwidth_gbps(1600)  # 4 EFA devices x 400 Gbit/s on p6e-gb200.36xlarge


def test_p5_eks_mpijob_table_and_footer() -> None:
    run = parse_nccl_output(sample("nccl-allreduce-2x-p5-eks-mpijob.txt"))
    assert [r.size_bytes for r in run.rows][-1] == 2147483648
    assert run.rows[-1].busbw_out_of_place == 437.79 and run.rows[-1].busbw_in_place == 437.89
    assert run.out_of_bounds == 0 and run.avg_busbw == 52.9753
    # The sample shows no NCCL_DEBUG lines: EFA use cannot be proven, so the check fails on that alone.
    judgement = judge_efa(run, derived_min_bus_bandwidth_gbps(3200), LARGE_MESSAGE_BYTES)
    assert [f[0] for f in judgement.findings] == ["NCCL network"]
    assert "437.89 GB/s at 2147483648 B" in judgement.evidence


def test_slurm_prefix_and_full_size_sweep() -> None:
    run = parse_nccl_output(sample("nccl-allreduce-2x-p5-slurm-8B-16G.txt"))
    assert len(run.rows) == 32
    assert run.rows[0].size_bytes == 8 and run.rows[-1].size_bytes == 17179869184
    assert run.rows[-1].best_busbw == 487.26
    assert run.out_of_bounds is None  # the README shows only the table


def test_old_format_with_error_columns_over_efa_passes_its_own_line_rate() -> None:
    run = parse_nccl_output(sample("nccl-debug-ofi-efa-p4d-eks.txt"))
    assert run.uses_efa and not run.uses_socket
    assert [r.size_bytes for r in run.rows] == [8, 16, 1073741824]
    assert run.rows[-1].best_busbw == 32.84 and run.rows[-1].wrong == 0
    p4d_threshold = derived_min_bus_bandwidth_gbps(400)  # 4 x 100 Gbit/s EFA on p4d.24xlarge
    assert judge_efa(run, p4d_threshold, LARGE_MESSAGE_BYTES).findings == ()
    # The same run judged against p6e-gb200's line rate is far too slow.
    (finding,) = judge_efa(run, P6E_THRESHOLD, LARGE_MESSAGE_BYTES).findings
    assert finding[0] == "bus bandwidth at 1073741824 B" and finding[1] == "32.84 GB/s (263 Gbit/s)"


def test_socket_fallback_fails_even_without_a_table() -> None:
    run = parse_nccl_output(sample("nccl-debug-socket-fallback-eks.txt"))
    assert run.uses_socket and not run.uses_efa
    keys = [f[0] for f in judge_efa(run, P6E_THRESHOLD, LARGE_MESSAGE_BYTES).findings]
    assert keys == ["NCCL network", "all_reduce_perf table"]


@pytest.mark.parametrize("network", ["Socket", "socket"])
def test_socket_network_is_matched_case_insensitively(network: str) -> None:
    run = parse_nccl_output(nccl_output(busbw=190.0, network=network))
    assert run.uses_socket
    finding = judge_efa(run, P6E_THRESHOLD, LARGE_MESSAGE_BYTES).findings[0]
    assert finding[1] == "TCP sockets (NET/Socket) on rank 0 (host w-0)"


def test_threshold_is_judged_on_the_largest_message_not_the_average() -> None:
    healthy = parse_nccl_output(nccl_output(busbw=100.01))
    assert healthy.avg_busbw == 170.1
    assert judge_efa(healthy, P6E_THRESHOLD, LARGE_MESSAGE_BYTES).findings == ()
    slow = parse_nccl_output(nccl_output(busbw=99.99))
    (finding,) = judge_efa(slow, P6E_THRESHOLD, LARGE_MESSAGE_BYTES).findings
    assert finding[2] == ">= 800 Gbit/s (100.00 GB/s)"


def test_wrong_values_fail() -> None:
    log = nccl_output().replace("# Out of bounds values : 0 OK", "# Out of bounds values : 3 FAILED")
    (finding,) = judge_efa(parse_nccl_output(log), P6E_THRESHOLD, LARGE_MESSAGE_BYTES).findings
    assert finding[:2] == ("wrong values", "3")


def test_derived_threshold_is_half_the_layout_line_rate() -> None:
    assert P6E_THRESHOLD == 800.0


def test_without_rank_prefixes_the_socket_fallback_names_the_hosts() -> None:
    log = (
        "gpu-a:6831:6840 [0] NCCL INFO Using network Libfabric\n"
        "gpu-b:6310:6318 [0] NCCL INFO Using network Socket\n"
        "gpu-b:6310:6318 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n"
    )
    run = parse_nccl_output(log)
    assert (run.socket_ranks, run.efa_ranks) == (("gpu-b",), ("gpu-a",))
    (finding, _) = judge_efa(run, P6E_THRESHOLD, LARGE_MESSAGE_BYTES).findings
    assert finding[1] == "TCP sockets (NET/Socket) on host gpu-b; Libfabric (EFA) on host gpu-a"


def test_with_rank_prefixes_the_socket_fallback_names_the_hosts_too() -> None:
    log = (
        "[1,0]<stdout>:gpu-a:6831:6840 [0] NCCL INFO Using network Libfabric\n"
        "[1,4]<stdout>:gpu-b:6310:6318 [0] NCCL INFO Using network Socket\n"
        "[1,5]<stdout>:gpu-b:6311:6319 [1] NCCL INFO Using network Socket\n"
    )
    run = parse_nccl_output(log)
    assert run.socket_ranks == ("4", "5") and run.socket_hosts == ("gpu-b",)
    (finding, _) = judge_efa(run, P6E_THRESHOLD, LARGE_MESSAGE_BYTES).findings
    assert finding[1] == "TCP sockets (NET/Socket) on ranks 4, 5 (host gpu-b); Libfabric (EFA) on rank 0"
