"""The Pulumi program: load the stack settings, build the platform, export its outputs."""

from ultraserver.components.program import run

run()
