"""Regenerate components/ultraserver/facts/data/network_cards.json, the network-card catalog the EFA engine reads.

Run: python scripts/regen_network_cards.py (from the repo root, with the `test` extra installed: it reads moto's data)

p5, p5en and p6-b200 come from the DescribeInstanceTypes snapshot that moto ships
(moto/ec2/resources/instance_types.json.gz). moto has no p6e-gb200 entry, so its facts are written
out below, each with the public source it was checked against.
"""

from __future__ import annotations

import gzip
import json
from importlib import resources
from pathlib import Path
from typing import Any

import moto

OUT = Path(__file__).resolve().parent.parent / "components" / "ultraserver" / "facts" / "data" / "network_cards.json"
FROM_MOTO = ("p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge")

EC2_EFA = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html#efa-for-p6e"
EKS_US = "https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-nvidia-ultraserver.html"
PCLUSTER_6930 = "https://github.com/aws/aws-parallelcluster/pull/6930"
PCLUSTER_7262 = "https://github.com/aws/aws-parallelcluster/pull/7262"
EC2_MULTI_CARD = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html"
EC2_AC_SPECS = "https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html"
EKS_AMI_LOCAL_DISKS = "awslabs/amazon-eks-ami templates/al2023/runtime/bin/setup-local-disks (raid10 needs 4 disks)"


def gb200() -> dict[str, Any]:
    """Hand-checked p6e-gb200.36xlarge facts (no DescribeInstanceTypes snapshot is public)."""
    cards: list[dict[str, Any]] = [
        {"index": 0, "interface_types": ["interface"], "maximum_interfaces": 2, "bandwidth_gbps": 100}
    ]
    for index in range(1, 17):
        odd = index % 2 == 1
        cards.append(
            {
                "index": index,
                "interface_types": ["efa-only"] if odd else ["interface", "efa", "efa-only"],
                "maximum_interfaces": 1 if odd else 2,
                "bandwidth_gbps": 400 if odd else 200,
            }
        )
    return {
        "architecture": "arm64",
        "gpus": 4,
        "instance_store_disks": 3,
        "maximum_efa_interfaces": 16,
        "presets": ["one-per-nci-group", "all-odd-cards", "maximum"],
        "default_preset": "one-per-nci-group",
        "nci_groups": [[1, 3], [5, 7], [9, 11], [13, 15]],
        # Each GPU's 400 Gbps EFA budget covers its NCI group and the even cards that share those NICs.
        "efa_bandwidth_groups": [
            {"cards": [first, first + 1, first + 2, first + 3], "maximum_gbps": 400} for first in (1, 5, 9, 13)
        ],
        "cards": cards,
        "source": {
            "cards": f"17 network cards; card 0 ENA-only (interface) up to 100 Gbps; odd cards EFA-only 400 Gbps; "
            f"even cards ENA or EFA up to 200 Gbps: {EC2_EFA}; {EKS_US}",
            "maximum_interfaces": f"1 on odd and 2 on even cards: PR author's comment on {PCLUSTER_6930} "
            "(not an AWS document; card 0 assumed to follow the even rule)",
            "nci_groups": f"GPU NCI groups [1,3] [5,7] [9,11] [13,15]: {EC2_EFA}",
            "efa_bandwidth_groups": f"physical NIC pairs [1,2] [3,4] ... [15,16]; each GPU's 400 Gbps EFA budget is "
            f"shared within its group; instance maximum 1600 Gbps: {EC2_EFA}",
            "maximum_efa_interfaces": f"no public EfaInfo.MaximumEfaInterfaces; AWS recommends at most 8 "
            f"({EC2_EFA}); ParallelCluster configures EFA on all 16 secondary cards ({PCLUSTER_6930}, "
            f"{PCLUSTER_7262}) and its queues_stack.py says only that the limit is below 17",
            "presets": f"one-per-nci-group and all-odd-cards are the two layouts AWS recommends ({EC2_EFA}; "
            f"{EKS_US} shows vpc.amazonaws.com/efa: 4); maximum follows {PCLUSTER_7262}",
            "architecture": EKS_US,
            "gpus": EKS_US,
            "instance_store_disks": f"3 x 7500 GB NVMe SSD: {EC2_AC_SPECS}; {EKS_US}; "
            f"RAID10 needs 4: {EKS_AMI_LOCAL_DISKS}",
        },
    }


def from_moto(instance_type: str, info: dict[str, Any], moto_version: str) -> dict[str, Any]:
    """Catalog entry from a DescribeInstanceTypes record."""
    network = info["NetworkInfo"]
    cards = [
        {
            "index": card["NetworkCardIndex"],
            "interface_types": card["InterfaceTypes"],
            "maximum_interfaces": card["MaximumNetworkInterfaces"],
            "bandwidth_gbps": int(card["PeakBandwidthInGbps"]),
        }
        for card in network["NetworkCards"]
    ]
    total_gbps = int(network["NetworkPerformance"].split()[0])
    snapshot = f"DescribeInstanceTypes snapshot in moto {moto_version} (moto/ec2/resources/instance_types.json.gz)"
    return {
        "architecture": info["ProcessorInfo"]["SupportedArchitectures"][0],
        "gpus": info["GpuInfo"]["Gpus"][0]["Count"],
        "instance_store_disks": sum(d["Count"] for d in info.get("InstanceStorageInfo", {}).get("Disks", [])),
        "maximum_efa_interfaces": network["EfaInfo"]["MaximumEfaInterfaces"],
        "presets": ["maximum"],
        "default_preset": "maximum",
        "efa_bandwidth_groups": [{"cards": [card["index"] for card in cards], "maximum_gbps": total_gbps}],
        "cards": cards,
        "source": {
            "cards": f"NetworkInfo.NetworkCards (InterfaceTypes, MaximumNetworkInterfaces, PeakBandwidthInGbps): "
            f"{snapshot}",
            "maximum_efa_interfaces": f"NetworkInfo.EfaInfo.MaximumEfaInterfaces: {snapshot}",
            "efa_bandwidth_groups": f"NetworkInfo.NetworkPerformance ({network['NetworkPerformance']}): {snapshot}",
            "presets": f"maximum = EFA-only on every card, card 0 at device index 1: {EC2_MULTI_CARD}",
            "architecture": f"ProcessorInfo.SupportedArchitectures: {snapshot}",
            "gpus": f"GpuInfo: {snapshot}",
            "instance_store_disks": f"InstanceStorageInfo.Disks[].Count: {snapshot}",
        },
    }


def main() -> None:
    """Write the catalog."""
    raw = resources.files("moto.ec2.resources").joinpath("instance_types.json.gz").read_bytes()
    snapshot = json.loads(gzip.decompress(raw))
    catalog = {"p6e-gb200.36xlarge": gb200()}
    for instance_type in FROM_MOTO:
        catalog[instance_type] = from_moto(instance_type, snapshot[instance_type], moto.__version__)
    document = {
        "about": "Network-card facts per EFA instance type for the EFA layout engine. "
        "Regenerate with scripts/regen_network_cards.py; every entry names its sources.",
        "instance_types": catalog,
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()
