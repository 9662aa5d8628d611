"""One piece of day-2 code run against the emulated cluster, as the rehearsal reports it."""

from __future__ import annotations

from dataclasses import dataclass

from ultraserver.verify.verdict import Verdict


@dataclass(frozen=True)
class Stage:
    """One piece of day-2 code run against the emulated cluster: its exit code and its output."""

    name: str
    code: int
    output: str
    verdicts: tuple[Verdict, ...] = ()
    judged: bool = True
    """False for output the stage shows without a verdict of its own (status's cluster side: status judges it
    against the EC2 reservation, which a rehearsal has not)."""
