"""``ultraserver status``: the live state of a stack's Capacity Blocks, per UltraServer, on the AWS and cluster side.

``aws`` reads reservations, blocks and interconnect; ``cluster`` sums up nodes and idle GPU-hours; ``judge`` says
what is wrong; ``run`` ties them together per group; ``report`` prints; ``extend`` buys extensions.
"""
