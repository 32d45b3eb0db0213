"""Errors with stable exit codes (DESIGN §3).

Every failure a user can act on is an ``EchoError``: a message that says what to do
next, and a code that transports map to an exit status (CLI) or an error code (MCP).
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Stable process exit codes shared by every transport."""

    OK = 0
    FAILURE = 1
    USAGE = 2
    NOT_FOUND = 44
    UNAVAILABLE = 69
    LOCK_HELD = 75
    DUPLICATE_GATE = 76
    NOT_CONFIGURED = 78


#: Short machine names for each code, used in JSON output and MCP errors.
CODE_NAMES: dict[ExitCode, str] = {
    ExitCode.OK: "ok",
    ExitCode.FAILURE: "failure",
    ExitCode.USAGE: "usage",
    ExitCode.NOT_FOUND: "not-found",
    ExitCode.UNAVAILABLE: "unavailable",
    ExitCode.LOCK_HELD: "lock-held",
    ExitCode.DUPLICATE_GATE: "duplicate-gate",
    ExitCode.NOT_CONFIGURED: "not-configured",
}


class EchoError(Exception):
    """A failure with a user-facing message and a stable exit code.

    ``message`` must say what went wrong *and* what to do next.
    """

    def __init__(self, message: str, code: ExitCode = ExitCode.FAILURE) -> None:
        super().__init__(message)
        self.message = message
        self.code = ExitCode(code)

    @property
    def code_name(self) -> str:
        """The short machine name of ``code`` (``"not-found"``, ``"usage"``, ...)."""
        return CODE_NAMES[self.code]

    def __repr__(self) -> str:
        return f"EchoError({self.message!r}, {self.code.name})"


def usage_error(message: str) -> EchoError:
    """Validation or usage problem (exit 2)."""
    return EchoError(message, ExitCode.USAGE)


def not_found(message: str) -> EchoError:
    """A named thing does not exist (exit 44)."""
    return EchoError(message, ExitCode.NOT_FOUND)
