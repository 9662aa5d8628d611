"""Regenerate docs/plan-report-gb200-x72.png: the HTML report of the shipped gb200-x72 stack in headless Chromium.

Run from the repository root: ``PYTHONPATH=components python scripts/screenshot_report.py``. Needs Debian's
``chromium`` (``apt-get install -y --no-install-recommends chromium``). The report names the clock it was made
with, so the picture changes with the date even when nothing else does.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ultraserver.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from helpers.browser import FLAGS as BROWSER_FLAGS  # noqa: E402 - the tests' helpers are not a package on the path

ROOT = Path(__file__).resolve().parent.parent
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
    print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    screenshot()
