"""``python -m ultraserver``: the command-line interface."""

from ultraserver.cli import main

raise SystemExit(main())
