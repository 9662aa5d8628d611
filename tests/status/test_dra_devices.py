"""status's cluster side in DRA mode counts the devices the nodes' ResourceSlices publish (there is no allocatable
nvidia.com/gpu or vpc.amazonaws.com/efa then), so a healthy DRA-mode UltraServer is not reported short of EFA."""

from __future__ import annotations

from helpers.fake_cluster import healthy_cluster
from helpers.resource_slices import efa_slice
from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.status.cluster import read_cluster
from ultraserver.verify.expect import expectation


def test_a_healthy_dra_mode_ultraserver_has_all_its_devices() -> None:
    expected = expectation(parse_settings(stack_config("gb200-x72-dra")))
    [group] = expected.groups
    sides, unread = read_cluster(healthy_cluster(expected, 2), expected.groups)
    assert unread == "" and sides is not None
    side = sides[group.name]
    assert (side.nodes, side.ready, side.short_efa) == (18, 18, ())
    assert (side.gpus, side.efa) == (18 * group.gpus_per_node, 18 * group.efa_devices)


def test_a_dra_mode_node_publishing_no_efa_device_is_short() -> None:
    expected = expectation(parse_settings(stack_config("gb200-x72-dra")))
    cluster = healthy_cluster(expected, 2)
    node = cluster.slices[1]["spec"]["nodeName"]
    cluster.slices[1] = efa_slice(node, (0, 0, 0, 0))
    sides, _ = read_cluster(cluster, expected.groups)
    assert sides is not None and sides[expected.groups[0].name].short_efa == (node,)


def test_a_plugins_mode_node_reads_allocatable_and_no_slices() -> None:
    expected = expectation(parse_settings(stack_config("gb200-x72")))
    cluster = healthy_cluster(expected, 2)
    cluster.slices = [{"spec": {"driver": "dra.net", "nodeName": "x"}}]  # never read in plugins mode
    sides, _ = read_cluster(cluster, expected.groups)
    assert sides is not None and sides["nvl72"].efa == 18 * expected.groups[0].efa_devices
