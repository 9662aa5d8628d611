"""How long ``ultraserver <command> --help`` takes from a fresh interpreter, per subcommand (the target: under 0.5 s).

Run: ``python benchmarks/cli_start.py [--repeats 5]``. Each line is the best of ``--repeats`` runs of the installed
entry (``python -m ultraserver <command> --help``), wall and CPU seconds (user + system, which a machine loaded by
other processes moves less than the wall), and how many modules of ours and in all it imported. The
subprocesses may write bytecode, as an installed package has it. Timings are measurements for this machine, not
assertions: on a loaded machine, compare with the floor line (``python -c pass``) of the same run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from plan_scale import ROOT, SUBPROCESS_ENV, best_times

COMMANDS = ("plan", "preflight", "verify", "status", "extend", "versions", "stacks", "rehearse")
COUNT = (
    "import runpy, sys\n"
    "sys.argv = ['ultraserver', {command!r}, '--help']\n"
    "try:\n    runpy.run_module('ultraserver', run_name='__main__')\n"
    "except SystemExit:\n    pass\n"
    "print(sum(m.startswith('ultraserver') for m in sys.modules), len(sys.modules), file=sys.stderr)\n"
)


def modules(command: str) -> tuple[int, int]:
    """Modules of ours, and in all, that ``--help`` of ``command`` imports."""
    probe = [sys.executable, "-c", COUNT.format(command=command)]
    done = subprocess.run(probe, cwd=ROOT, env=SUBPROCESS_ENV, capture_output=True, text=True)
    ours, total = done.stderr.split()[-2:]
    return int(ours), int(total)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5, help="runs per command; the best counts (default: 5)")
    repeats = parser.parse_args(argv).repeats
    seconds, cpu = best_times([sys.executable, "-c", "pass"], repeats)
    print(f"python -c pass (the interpreter's own start): {seconds:.3f}s ({cpu:.3f} CPU s)")
    for command in COMMANDS:
        seconds, cpu = best_times([sys.executable, "-m", "ultraserver", command, "--help"], repeats)
        ours, total = modules(command)
        print(f"ultraserver {command} --help: {seconds:.3f}s ({cpu:.3f} CPU s), {ours} modules of ours, {total} in all")


if __name__ == "__main__":
    main()
