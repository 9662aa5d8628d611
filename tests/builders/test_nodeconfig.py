"""NodeConfig documents and their MIME multipart user data."""

from __future__ import annotations

import subprocess

import yaml
from helpers.mime import parts
from ultraserver.builders.nodeconfig import ClusterDetails, NodeConfigSpec, kubelet_flags, node_config, user_data

CLUSTER = ClusterDetails("gb200", "https://ABC.gr7.us-east-1.eks.amazonaws.com", "Y2VydA==", "10.100.0.0/16")


def nodeconfig_part(text: str):  # type: ignore[no-untyped-def]
    """The one application/node.eks.aws part."""
    (part,) = [p for p in parts(text) if p.get_content_type() == "application/node.eks.aws"]
    return part


def test_default_is_raid0_only() -> None:
    part = nodeconfig_part(user_data(NodeConfigSpec()))
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
    part = nodeconfig_part(user_data(spec))
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


def test_host_imex_service_is_disabled_and_masked_after_the_nodeconfig() -> None:
    nodeconfig, script = parts(user_data(NodeConfigSpec()))
    assert nodeconfig.get_content_type() == "application/node.eks.aws"
    assert script.get_content_type() == "text/x-shellscript"
    text = str(script.get_payload())
    assert text.startswith("#!/bin/bash\n")
    # disable --now may fail when the unit is absent; that must not stop the script (mask works either way).
    assert "systemctl disable --now nvidia-imex.service 2>/dev/null || true\n" in text
    assert text.rstrip().endswith("systemctl mask nvidia-imex.service")
    assert subprocess.run(["bash", "-n"], input=text, text=True, check=False).returncode == 0


def test_host_imex_script_is_harmless_when_the_service_is_absent(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A fake systemctl that knows no units: `disable` fails, `mask` succeeds (as on a host without the package).
    calls = tmp_path / "calls"
    fake = tmp_path / "systemctl"
    fake.write_text(f'#!/bin/bash\necho "$*" >> {calls}\n[ "$1" = mask ] || exit 1\n')
    fake.chmod(0o755)
    (_, script) = parts(user_data(NodeConfigSpec()))
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin"}
    run = subprocess.run(["bash"], input=str(script.get_payload()), text=True, env=env, check=False)
    assert run.returncode == 0
    assert calls.read_text().splitlines() == ["disable --now nvidia-imex.service", "mask nvidia-imex.service"]


def test_host_imex_script_can_be_left_out() -> None:
    assert [p.get_content_type() for p in parts(user_data(NodeConfigSpec(disable_host_imex=False)))] == [
        "application/node.eks.aws"
    ]
