"""What keeps a traceback off the user's screen: undecodable arguments become a usage
error naming the argument, and an ``OSError`` / ``UnicodeError`` no layer turned into an
``EchoError`` becomes one clean line (``ECHO_DEBUG=1`` keeps the traceback); echo-memory's
warnings (a stale lock broken) print as one ``warning:`` line, not Python's warning format.

Loaded on every start-up: only click and the standard library.
"""

from __future__ import annotations

import errno
import functools
import os
from typing import Any

import click

from echo_core import terminal_safe, usage_error

DEBUG_ENV = "ECHO_DEBUG"

#: What to do about the commonest operating-system errors.
_ADVICE = {
    errno.ENOSPC: "free some disk space, then run the command again",
    errno.EDQUOT: "free some space within your disk quota, then run the command again",
    errno.EROFS: "the file system is read-only; remount it writable or use another vault",
    errno.EACCES: "check the permissions of the vault and state folders",
    errno.EPERM: "check the permissions of the vault and state folders",
    errno.ENAMETOOLONG: "use a shorter note name or a shallower folder",
    errno.ENOENT: "check that the vault folder exists (`echo-memory doctor`)",
    errno.EIO: "the disk reported an input/output error; check the device",
}


def _label(param: click.Parameter) -> str:
    if isinstance(param, click.Option):
        return max(param.opts, key=len)
    return param.human_readable_name


def _undecodable(value: Any) -> bool:
    items = value if isinstance(value, tuple) else (value,)
    for item in items:
        if isinstance(item, str) and not item.isascii():
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False


def _guard(command: click.Command) -> None:
    callback = command.callback
    if callback is None or getattr(callback, "_echo_text_guard", False):
        return
    labels = {p.name: _label(p) for p in command.params if p.name}

    @functools.wraps(callback)
    def checked(*args: Any, **kwargs: Any) -> Any:
        for name, value in kwargs.items():
            if _undecodable(value):
                raise usage_error(f"{labels.get(name, name)} is not valid UTF-8 text (the "
                                  "terminal or the caller sent undecodable bytes); pass UTF-8")
        return callback(*args, **kwargs)

    checked._echo_text_guard = True  # type: ignore[attr-defined]
    command.callback = checked


def guard_text_arguments(command: click.Command) -> None:
    """Make every (sub)command of ``command`` refuse arguments that are not valid UTF-8
    (argv decodes undecodable bytes to lone surrogates) with a usage error (exit 2)."""
    _guard(command)
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            guard_text_arguments(sub)


def os_error_line(exc: OSError | UnicodeError) -> str:
    """One clean line for an error no layer handled: what, errno name, what to do."""
    if isinstance(exc, UnicodeError):
        return ("error: text that is not valid UTF-8 reached echo-memory "
                f"({type(exc).__name__}); give UTF-8 text (set {DEBUG_ENV}=1 for details)")
    name = errno.errorcode.get(exc.errno or 0, type(exc).__name__)
    what = exc.strerror or str(exc) or type(exc).__name__
    where = f": {exc.filename}" if exc.filename else ""
    advice = _ADVICE.get(exc.errno or 0, f"check the vault and retry (set {DEBUG_ENV}=1 "
                                         "for the traceback)")
    return terminal_safe(f"error: {what}{where} ({name}); {advice}")


def report_crash(exc: OSError | UnicodeError, env: dict[str, str] | None = None) -> int:
    """Print ``exc`` as one line on stderr (plus its traceback when ``ECHO_DEBUG=1``) and
    return the exit code, 1."""
    if (env if env is not None else os.environ).get(DEBUG_ENV, "") not in ("", "0"):
        import traceback

        click.echo(terminal_safe("".join(traceback.format_exception(exc))), err=True)
    click.echo(os_error_line(exc), err=True)
    return 1


