"""Errors that reach the user as one clear message, never a traceback."""

from __future__ import annotations

import pulumi


class ConfigError(pulumi.RunError):
    """One or more invalid settings; each line names the key, the bad value, what is allowed and the fix."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))
