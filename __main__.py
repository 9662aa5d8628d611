"""The Pulumi program: load the stack settings, build the platform, export its outputs."""

from ultraserver.resources.program import run

run()
