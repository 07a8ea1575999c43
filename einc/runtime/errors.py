"""Errors a user can cause when running a module; each message is a single line."""
from __future__ import annotations

import re

from einc.diagnostics import VALUE


class RunError(Exception):
    """Bad inputs, a bad module file, a failed assert or shape check, an unavailable device.
    One that comes from a line of the program (a failed assert) has its `location` and `code`
    and reads `file:line:col: error[Ennn]: message`, as a compile error's header does."""

    def __init__(self, message: str, location: str | None = None, code: str | None = None):
        super().__init__(message, location, code)   # all three: a RunError pickles whole
        self.message = message
        self.location = location
        self.code = code

    def __str__(self) -> str:
        return self.message if self.location is None else f"{self.location}: error[{self.code}]: {self.message}"


_ASSERT_AT = re.compile(r"assertion failed at (.+?:\d+:\d+): (.*)", re.DOTALL)


class FailedCheck(RunError):
    """A failed `assert` or compiled shape check of the module; `text` is the module's message
    (`assertion failed at FILE:LINE:COL: ..` for an assert, E006 at that line)."""

    def __init__(self, text: str):
        found = _ASSERT_AT.fullmatch(text)
        if found:
            super().__init__(f"assertion failed: {found.group(2)}", found.group(1), VALUE)
        else:
            super().__init__(text)
        self.text = text
        self.args = (text,)
