"""``python -m ultraserver`` and the installed ``ultraserver`` script: the command-line interface.

The CLI's own imports take a moment; a Ctrl-C during them ends as one during a command does (exit 130, one line),
not with a traceback.
"""

import sys


def run() -> int:
    """Import the CLI and run it in this process."""
    try:
        from ultraserver.cli import console
    except KeyboardInterrupt:
        print("ultraserver: interrupted (Ctrl-C) while starting; nothing was done", file=sys.stderr)
        return 130
    return console()


if __name__ == "__main__":
    raise SystemExit(run())
