"""Ctrl-C ends every command with exit 130 and one line saying it was interrupted: also when it lands inside a lazy
import of the Pulumi SDK (which swallows it and leaves a half-imported module behind), in argument parsing, or
while the CLI itself is still being imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import GUARD_SECONDS
from helpers.stacks import ROOT

# The process sends itself SIGINT when it imports ``target``, so the interrupt lands exactly inside that import
# (the signal handler runs at the next bytecode of the importing code).
DRIVER = """
import os, signal, sys
target = sys.argv.pop(1)
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.addaudithook(lambda event, args: event == "import" and args[0] == target and os.kill(os.getpid(), signal.SIGINT))
sys.argv[0] = "ultraserver"
from ultraserver.__main__ import run
raise SystemExit(run())
"""
RUNNING = "ultraserver: interrupted (Ctrl-C) before the command finished; run it again for its result"
STARTING = "ultraserver: interrupted (Ctrl-C) while starting; nothing was done"


def interrupted(tmp_path: Path, target: str, *args: str) -> subprocess.CompletedProcess[str]:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: []\n")
    env = {"PYTHONPATH": str(ROOT / "components"), "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    command = [sys.executable, str(driver), target, *(a.replace("KUBECONFIG", str(kubeconfig)) for a in args)]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=GUARD_SECONDS)


@pytest.mark.parametrize(
    ("target", "args", "line"),
    [
        # pulumi_aws.ec2 loads lazily on first use; the interrupt inside it used to end as exit 3, "module
        # 'pulumi_aws.ec2' has no attribute 'SecurityGroup'".
        ("pulumi_aws.ec2.security_group", ["plan", "--stack", "gb200-x72"], RUNNING),
        ("kmock", ["rehearse", "--stack", "gb200-x72"], RUNNING),
        ("kubernetes.client", ["verify", "--stack", "gb200-x72", "--kubeconfig", "KUBECONFIG"], RUNNING),
        ("boto3", ["status", "--stack", "gb200-x72"], RUNNING),
        ("boto3", ["preflight", "--stack", "gb200-x72"], RUNNING),
        ("boto3", ["extend", "--stack", "gb200-x72", "--group", "g", "--hours", "24"], RUNNING),
        ("ultraserver.config.settings", ["stacks"], RUNNING),
        ("ultraserver.rehearse.faults", ["--help"], RUNNING),  # building the parser
        ("ultraserver.cli.options", ["versions"], STARTING),  # importing the CLI
    ],
    ids=lambda v: v if isinstance(v, str) else "-".join(v[:1]),
)
def test_ctrl_c_exits_130_saying_so(tmp_path: Path, target: str, args: list[str], line: str) -> None:
    done = interrupted(tmp_path, target, *args)
    assert done.returncode == 130, done.stderr[-2000:]
    assert done.stderr.rstrip().splitlines()[-1] == line
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
