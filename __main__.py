"""The Pulumi program: load the stack settings, build the platform, export its outputs."""

from ultraserver.program import run

run()
