"""A stack file of your own in stacks/ (README step 2: a copy of a shipped stack with your values) is checked as
``ultraserver plan`` checks it: its settings are valid and it plans. The shipped-stack tests do not walk it
(stacks/shipped-stacks.txt names theirs); with no stack of your own, these tests are skipped."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from helpers.cli import run_main
from helpers.stacks import OWN_STACKS, ROOT, stack_config
from ultraserver import clock
from ultraserver.config.settings import parse_settings
from ultraserver.problems import ConfigError, format_problems


def where(stack: str) -> str:
    return f"stacks/Pulumi.{stack}.yaml"


@pytest.mark.parametrize("stack", OWN_STACKS)
def test_your_stack_settings_are_valid(stack: str) -> None:
    # Your stack is judged at the wall clock, as `ultraserver plan` judges it (a block that has ended is an error).
    with clock.pinned(datetime.now(timezone.utc)):
        try:
            parse_settings(stack_config(stack), stack=stack)
        except ConfigError as err:
            pytest.fail(
                f"{where(stack)} (your stack, not a shipped one) has invalid settings:\n"
                f"{format_problems(err.items)}\n"
                f"fix: correct these keys in {where(stack)} (every key is in docs/settings.md), "
                f"or move the file out of stacks/",
                pytrace=False,
            )


@pytest.mark.parametrize("stack", OWN_STACKS)
def test_your_stack_plans(stack: str) -> None:
    with clock.pinned(datetime.now(timezone.utc)):
        run = run_main("plan", "--stack", stack, "--project-dir", str(ROOT))
    if run.code != 0:
        pytest.fail(
            f"{where(stack)} (your stack, not a shipped one) does not plan (exit {run.code}):\n"
            f"{run.stderr.strip() or run.stdout[-2000:]}\n"
            f"fix: run `ultraserver plan --stack {stack}` and correct what it reports in {where(stack)}",
            pytrace=False,
        )
