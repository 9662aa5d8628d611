"""The faults a rehearsal can inject, by name, with the line ``--help`` shows for each.

A module of its own so the command's parser lists them without loading the rehearsal (``faults`` injects them).
"""

from __future__ import annotations

FAULT_SUMMARIES = {
    "notready": "a GPU node goes NotReady",
    "efa": "a GPU node shows an EFA device count of 0",
    "clique": "an UltraServer's nodes split across two NVLink domains",
    "imex": "an IMEX daemon never becomes ready",
    "socket": "NCCL falls back to TCP sockets",
    "missing-node": "a GPU node is missing at the block's start",
    "reclaim": "EC2's reclaim notice arrives while a job runs",
    "node-fails": "a node of a running job goes NotReady: a spare of its UltraServer takes over, or the loss is "
    "reported",
    "extend-late": "EC2 confirms an extension after the drain cut the block off (35 minutes before the old end, nobody "
    "online): the nodes are released and the group scales back up",
    "drain-forbidden": "the API server refuses (403) the drain's hold of the ClusterQueue during a reclaim: the "
    "refusal is alerted and the other steps are done",
    "no-nodes": "an active block's UltraServer has no node at all: an alert names it",
    "gpu-fails": "a node of a self-managed group reports its GPUs failed with a reason a reboot clears: the drain "
    "reboots it once and says so",
}
