"""``python -m ultraserver``: the command-line interface."""

from ultraserver.cli import console

raise SystemExit(console())
