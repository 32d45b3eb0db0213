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

    ``message`` must say what went wrong *and* what to do next. Each subclass below
    carries its exit code as the class attribute ``code``; ``EchoError(message, code)``
    still works (a plain ``EchoError`` with that code), so catch sites that must also see
    errors raised that way by third-party plugins compare ``exc.code``, not the class.
    """

    code: ExitCode = ExitCode.FAILURE

    def __init__(self, message: str, code: ExitCode | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = ExitCode(code)

    @property
    def code_name(self) -> str:
        """The short machine name of ``code`` (``"not-found"``, ``"usage"``, ...)."""
        return CODE_NAMES[self.code]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, {self.code.name})"


class UsageError(EchoError):
    """A validation or usage problem: a bad argument, path or value (exit 2)."""

    code = ExitCode.USAGE


class NotFoundError(EchoError):
    """A named thing (note, entity, section, record) does not exist (exit 44)."""

    code = ExitCode.NOT_FOUND


class UnavailableError(EchoError):
    """Something the operation needs cannot be reached or used now (exit 69).
    ``echo_core.protocols.BackendUnavailable`` (the vault backend) is one of these."""

    code = ExitCode.UNAVAILABLE


class LockHeldError(EchoError):
    """A lock (the vault's, the outbox flush's) was not obtained in time (exit 75)."""

    code = ExitCode.LOCK_HELD


class EditedMeanwhile(EchoError):
    """A note an operation was about to replace changed while it ran (a person's edit,
    which takes no lock): nothing of the operation was written, so the edit is kept.
    Running it again plans from the new text (exit 1). ``path``: that note."""

    code = ExitCode.FAILURE

    def __init__(self, path: str) -> None:
        super().__init__(f"{path} was edited while this operation ran; nothing was "
                         "written, so the edit is kept. Run the operation again")
        self.path = path


class DuplicateGateError(EchoError):
    """A write a gate refused (exit 76). Capture reports a gate stop as an envelope
    (``action="duplicate-gate"``); this is for callers that must raise it."""

    code = ExitCode.DUPLICATE_GATE


class NotConfiguredError(EchoError):
    """Setup is missing: no vault configured or initialised, no plugin for it (exit 78)."""

    code = ExitCode.NOT_CONFIGURED


def usage_error(message: str) -> UsageError:
    """Validation or usage problem (exit 2)."""
    return UsageError(message)


def not_found(message: str) -> NotFoundError:
    """A named thing does not exist (exit 44)."""
    return NotFoundError(message)
