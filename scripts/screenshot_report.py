"""Regenerate docs/plan-report-gb200-x72.png: the HTML report of the shipped gb200-x72 stack in headless Chromium.

Run ``python scripts/screenshot_report.py`` (from any folder) with the Python that has the project's dependencies,
e.g. ``.venv/bin/python`` after the README's setup; ``--output FILE`` writes elsewhere. Needs Debian's ``chromium``
(``apt-get install -y --no-install-recommends chromium``). The report names the clock it was made with, so the
picture changes with the date even when nothing else does.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# This checkout's package and the tests' helpers (not a package on the path), whatever the current folder.
sys.path[:0] = [str(ROOT / "components"), str(ROOT / "tests")]
SETUP = (
    "python3 -m venv .venv && .venv/bin/pip install -c constraints.txt -e '.[test]', then "
    ".venv/bin/python scripts/screenshot_report.py"
)
try:
    from helpers.browser import FLAGS as BROWSER_FLAGS
    from ultraserver.cli import main
except ImportError as missing:  # a Python without the project's dependencies
    sys.exit(f"screenshot_report.py needs the project's dependencies ({missing.name} is missing): {SETUP}")

TARGET = ROOT / "docs" / "plan-report-gb200-x72.png"
# The browser test's flags (offline, no first-run UI, no background fetches), plus no scrollbars in the picture.
FLAGS = [*BROWSER_FLAGS, "--hide-scrollbars"]


def screenshot(target: Path = TARGET, width: int = 1400, height: int = 1900) -> None:
    """Write the gb200-x72 report and its screenshot (the top of the page: groups, cards, warnings, graph)."""
    browser = shutil.which("chromium")
    if browser is None:
        sys.exit("chromium is not installed: apt-get install -y --no-install-recommends chromium")
    with tempfile.TemporaryDirectory() as work:
        report = Path(work) / "report.html"
        with contextlib.redirect_stdout(io.StringIO()):
            code = main(["plan", "--project-dir", str(ROOT), "--stack", "gb200-x72", "--html", str(report)])
        if code != 0:
            sys.exit(f"ultraserver plan exited {code}")
        profile = Path(work) / "profile"
        subprocess.run(
            [
                browser,
                *FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={width},{height}",
                f"--screenshot={target}",
                report.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    print(f"wrote {target}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Regenerate the README's picture of the gb200-x72 HTML report.")
    parser.add_argument(
        "--output", type=Path, default=TARGET, help=f"PNG to write (default: {TARGET.relative_to(ROOT)})"
    )
    screenshot(parser.parse_args().output.resolve())
