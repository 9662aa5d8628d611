"""NodeConfig documents and their MIME multipart user data."""

from __future__ import annotations

import pytest
import yaml
from helpers.mime import parts
from ultraserver.builders.nodeconfig import ClusterDetails, NodeConfigSpec, kubelet_flags, node_config, user_data
from ultraserver.problems import ConfigError

CLUSTER = ClusterDetails("gb200", "https://ABC.gr7.us-east-1.eks.amazonaws.com", "Y2VydA==", "10.100.0.0/16")


def test_default_is_raid0_only() -> None:
    (part,) = parts(user_data(NodeConfigSpec()))
    assert part.get_content_type() == "application/node.eks.aws"
    document = yaml.safe_load(str(part.get_payload()))
    assert document == {
        "apiVersion": "node.eks.aws/v1alpha1",
        "kind": "NodeConfig",
        "spec": {"instance": {"localStorage": {"strategy": "RAID0"}}},
    }


def test_cluster_section_and_kubelet_flags() -> None:
    flags = kubelet_flags({"team": "ml", "a": "b"}, [("nvidia.com/gpu", "true", "NoSchedule")])
    spec = NodeConfigSpec(local_storage="RAID10", kubelet_flags=flags, cluster=CLUSTER)
    (part,) = parts(user_data(spec))
    document = yaml.safe_load(str(part.get_payload()))
    assert document["spec"]["cluster"] == {
        "name": "gb200",
        "apiServerEndpoint": "https://ABC.gr7.us-east-1.eks.amazonaws.com",
        "certificateAuthority": "Y2VydA==",
        "cidr": "10.100.0.0/16",
    }
    assert document["spec"]["kubelet"]["flags"] == [
        "--node-labels=a=b,team=ml",
        "--register-with-taints=nvidia.com/gpu=true:NoSchedule",
    ]
    assert document["spec"]["instance"]["localStorage"]["strategy"] == "RAID10"
    assert document == node_config(spec)


def test_no_flags_without_labels_or_taints() -> None:
    assert kubelet_flags({}, []) == []
    assert "kubelet" not in node_config(NodeConfigSpec())["spec"]


def test_user_data_is_stable_between_runs() -> None:
    spec = NodeConfigSpec(cluster=CLUSTER)
    assert user_data(spec) == user_data(NodeConfigSpec(cluster=CLUSTER))


def test_unknown_storage_strategy() -> None:
    with pytest.raises(ConfigError, match="localStorage: 'RAID5'.*RAID0, RAID10, Mount"):
        node_config(NodeConfigSpec(local_storage="RAID5"))
