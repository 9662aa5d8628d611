"""DRA-mode claims: a whole node's GPUs and EFA devices by count; part of a node pairs each GPU with its EFA devices."""

from __future__ import annotations

import kubernetes_validate
import pytest
from helpers.manifests import paired_requests
from ultraserver.builders import device_claims
from ultraserver.facts.hardware import devices, efa
from ultraserver.facts.kubernetes.kueue_admission import devices_per_class
from ultraserver.problems import ConfigError

GB200 = "p6e-gb200.36xlarge"
# Card groups per GPU on p6e-gb200 (EC2 "EFA for P6e-GB200": cards 1-4 serve GPU 0, 5-8 GPU 1, ...).
GPU_CARDS = {0: {1, 2, 3, 4}, 1: {5, 6, 7, 8}, 2: {9, 10, 11, 12}, 3: {13, 14, 15, 16}}


def node(preset: str) -> devices.NodeDevices:
    return devices.node_devices(GB200, efa.layout_for(GB200, preset, None))


@pytest.mark.parametrize(("preset", "per_gpu"), [("one-per-nci-group", 1), ("all-odd-cards", 2), ("maximum", 4)])
def test_each_gpu_gets_the_efa_devices_of_its_own_card_group(preset: str, per_gpu: int) -> None:
    pairs = devices.pairing(GB200, efa.layout_for(GB200, preset, None))
    assert [p.gpu for p in pairs] == [0, 1, 2, 3]
    for pair in pairs:
        assert len(pair.efa_cards) == per_gpu
        assert set(pair.efa_cards) <= GPU_CARDS[pair.gpu]
    assert node(preset).efa_devices == efa.summarize_layout(GB200, efa.layout_for(GB200, preset, None)).efa_devices


@pytest.mark.parametrize("preset", efa.PRESETS)
def test_a_whole_node_claim_takes_every_device_by_count_without_a_constraint(preset: str) -> None:
    # It takes all of them: a PCIe-root constraint could not pick better devices, only make the claim unsatisfiable.
    spec = device_claims.claim_spec(node(preset))
    assert "constraints" not in spec["devices"]
    assert [r["exactly"] for r in spec["devices"]["requests"]] == [
        {"deviceClassName": devices.GPU_DEVICE_CLASS, "allocationMode": "ExactCount", "count": 4},
        {
            "deviceClassName": devices.EFA_DEVICE_CLASS,
            "allocationMode": "ExactCount",
            "count": node(preset).efa_devices,
        },
    ]


@pytest.mark.parametrize("preset", efa.PRESETS)
@pytest.mark.parametrize("gpus", [1, 2, 3])
def test_a_claim_of_part_of_a_node_pairs_each_gpu_with_its_efa_devices_on_one_pcie_root(preset: str, gpus: int) -> None:
    spec = device_claims.claim_spec(node(preset), gpus)
    requests = {r["name"]: r["exactly"] for r in spec["devices"]["requests"]}
    pairs = paired_requests(spec)
    assert len(pairs) == gpus
    for gpu, (gpu_request, efa_request) in enumerate(pairs):
        assert requests[gpu_request] == {
            "deviceClassName": devices.GPU_DEVICE_CLASS,
            "allocationMode": "ExactCount",
            "count": 1,
        }
        assert requests[efa_request]["deviceClassName"] == devices.EFA_DEVICE_CLASS
        assert requests[efa_request]["count"] == node(preset).efa_per_gpu[gpu]
    assert all(c["matchAttribute"] == "resource.kubernetes.io/pcieRoot" for c in spec["devices"]["constraints"])
    kubernetes_validate.validate(
        device_claims.claim_template("t", "ml", node(preset), gpus), devices.DRA_MIN_KUBERNETES, strict=True
    )


@pytest.mark.parametrize("gpus", [0, 5, True, "2"])
def test_a_gpu_count_outside_the_node_is_a_problem(gpus: object) -> None:
    with pytest.raises(ConfigError, match="allowed: 1 to 4, the GPUs of one node"):
        device_claims.claim_spec(node("maximum"), gpus)  # type: ignore[arg-type]


@pytest.mark.parametrize("preset", efa.PRESETS)
def test_kueue_counts_the_claim_as_the_nodes_gpus_and_efa_devices(preset: str) -> None:
    counts, refusal = devices_per_class(device_claims.claim_spec(node(preset)))
    assert refusal is None
    assert counts == {devices.GPU_DEVICE_CLASS: 4, devices.EFA_DEVICE_CLASS: node(preset).efa_devices}


@pytest.mark.parametrize("preset", efa.PRESETS)
def test_the_template_is_valid_resource_k8s_io_v1_on_kubernetes_1_35(preset: str) -> None:
    template = device_claims.claim_template("job-devices", "ml", node(preset))
    assert template["apiVersion"] == "resource.k8s.io/v1"
    kubernetes_validate.validate(template, devices.DRA_MIN_KUBERNETES, strict=True)


def test_validation_of_the_template_is_live() -> None:
    template = device_claims.claim_template("job-devices", "ml", node("maximum"), 2)
    template["spec"]["spec"]["devices"]["constraints"][0]["matchAtribute"] = "x"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(template, devices.DRA_MIN_KUBERNETES, strict=True)


def test_a_type_without_one_card_group_per_gpu_is_claimed_whole_without_a_constraint() -> None:
    other = next(t for t in efa.supported_instance_types() if t != GB200)
    layout = efa.layout_for(other, None, None)
    spec = device_claims.claim_spec(devices.node_devices(other, layout))
    assert "constraints" not in spec["devices"]
    counts, _ = devices_per_class(spec)
    assert counts == {
        devices.GPU_DEVICE_CLASS: devices.gpus_per_node(other),
        devices.EFA_DEVICE_CLASS: efa.summarize_layout(other, layout).efa_devices,
    }
