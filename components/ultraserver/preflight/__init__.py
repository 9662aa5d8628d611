"""Live checks of an AWS account before a deploy: capacity blocks, zones, AMIs, subnets, quotas.

``target`` derives what to check from the stack's settings, ``clients`` asks AWS (and turns access failures
into one error), ``capacity`` and ``checks`` hold the checks, ``report`` prints them. ``ultraserver preflight``
runs them all.
"""
