"""EC2 pages its Capacity Block answers (botocore ec2 paginators-1.json): every page is read, none is dropped."""

from __future__ import annotations

from helpers.capacity import A_END, A_START, B_END, B_START, BLOCK_A, BLOCK_B, A, B, reservation
from helpers.preflight import LOCAL_ZONE, stubbed
from ultraserver.status.aws import read_reservations
from ultraserver.status.extend import offerings


def _block(block: str, cr_id: str) -> dict:
    return {
        "CapacityBlockId": block,
        "UltraserverType": "u-p6e-gb200x72",
        "AvailabilityZone": LOCAL_ZONE,
        "CapacityReservationIds": [cr_id],
        "State": "active",
    }


def test_blocks_and_their_status_on_a_second_page_are_read() -> None:
    ec2, stub = stubbed("ec2")
    for answer in (
        reservation(A, "active", A_START, A_END, BLOCK_A),
        reservation(B, "scheduled", B_START, B_END, BLOCK_B),
    ):
        stub.add_response(
            "describe_capacity_reservations",
            {"CapacityReservations": [answer]},
            {"CapacityReservationIds": [answer["CapacityReservationId"]]},
        )
    ids = {"CapacityBlockIds": [BLOCK_A, BLOCK_B]}
    stub.add_response("describe_capacity_blocks", {"CapacityBlocks": [_block(BLOCK_A, A)], "NextToken": "p2"}, ids)
    stub.add_response("describe_capacity_blocks", {"CapacityBlocks": [_block(BLOCK_B, B)]}, {**ids, "NextToken": "p2"})
    first = {"CapacityBlockId": BLOCK_A, "InterconnectStatus": "ok", "TotalCapacity": 18}
    second = {"CapacityBlockId": BLOCK_B, "InterconnectStatus": "impaired", "TotalCapacity": 18}
    stub.add_response("describe_capacity_block_status", {"CapacityBlockStatuses": [first], "NextToken": "p2"}, ids)
    stub.add_response("describe_capacity_block_status", {"CapacityBlockStatuses": [second]}, {**ids, "NextToken": "p2"})
    found = read_reservations([A, B], ec2)
    stub.assert_no_pending_responses()
    assert (found[B].block_state, found[B].interconnect) == ("active", "impaired")
    assert found[A].interconnect == "ok"


def test_extension_offerings_on_a_second_page_are_listed() -> None:
    ec2, stub = stubbed("ec2")
    asked = {"CapacityBlockExtensionDurationHours": 24, "CapacityReservationId": A}

    def offering(ident: str) -> dict:
        return {"CapacityBlockExtensionOfferingId": ident, "UpfrontFee": "100.00", "CurrencyCode": "USD"}

    stub.add_response(
        "describe_capacity_block_extension_offerings",
        {"CapacityBlockExtensionOfferings": [offering("cbe-1")], "NextToken": "p2"},
        asked,
    )
    stub.add_response(
        "describe_capacity_block_extension_offerings",
        {"CapacityBlockExtensionOfferings": [offering("cbe-2")]},
        {**asked, "NextToken": "p2"},
    )
    assert [o.offering_id for o in offerings(ec2, A, 24)] == ["cbe-1", "cbe-2"]
