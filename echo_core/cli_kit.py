"""What every CLI command needs, for the CLI plugin and any plugin adding commands.

* ``AppState`` sits in ``click.Context.obj``: global flags, the plugin host, and a lazily
  built ``EchoContext``.
* ``common_options`` adds ``--vault``, ``--state-dir`` and ``--json`` to a command.
* ``emit(envelope, as_json, render)`` prints a result (prose or JSON) and sets the exit code.
* ``terminal_safe`` / ``json_text``: what reaches a terminal never carries raw control
  characters (ESC, BEL, other C0/C1 controls, bidi overrides, lone surrogates).
* ``read_text_source`` reads stdin (``-``) or a file as strict UTF-8, a usage error
  naming the argument otherwise.

Import cost matters here: this module is loaded on every start-up (no ops imports).
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from echo_core.actions import Action
from echo_core.errors import EchoError, ExitCode

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.models import Envelope
    from echo_core.plugins import PluginHost

F = TypeVar("F", bound=Callable[..., Any])


class AppState:
    """Process-wide CLI state: flags and the plugin host; the context is built on demand."""

    def __init__(self, host: PluginHost, vault: str | None = None, state_dir: str | None = None) -> None:
        self.host = host
        self.vault = vault
        self.state_dir = state_dir
        self._context: EchoContext | None = None

    def context(self) -> EchoContext:
        """The ``EchoContext`` for this invocation (built once)."""
        if self._context is None:
            from echo_core.context import create_context

            self._context = create_context(vault=self.vault, state_dir=self.state_dir, host=self.host)
        return self._context


def _remember_flag(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is not None and isinstance(ctx.obj, AppState):
            setattr(ctx.obj, name, value)
        return value

    return callback


def common_options(func: F) -> F:
    """Add ``--vault``, ``--state-dir`` and ``--json`` (as the ``as_json`` argument)."""
    func = click.option(
        "--json", "as_json", is_flag=True, help="Print the result as JSON (for machines)."
    )(func)
    func = click.option(
        "--state-dir", expose_value=False, callback=_remember_flag("state_dir"),
        metavar="DIR", help="Per-machine state folder (default: $ECHO_STATE_DIR or XDG state).",
    )(func)
    func = click.option(
        "--vault", expose_value=False, callback=_remember_flag("vault"), metavar="PATH|URL",
        help="The vault: a folder or URL (default: $ECHO_VAULT, the config file, or the "
        "embedded vault).",
    )(func)
    return func


def current_context() -> EchoContext:
    """The ``EchoContext`` of the running command."""
    state = click.get_current_context().find_object(AppState)
    if state is None:
        raise EchoError("no echo-memory app state; run commands through `echo-memory`")
    return state.context()


def pass_echo_context(func: F) -> F:
    """Decorator: call ``func(ctx, ...)`` with the command's ``EchoContext``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(current_context(), *args, **kwargs)

    return wrapper  # type: ignore[return-value]


# Characters that drive or disguise a terminal: C0 controls but tab and newline (a CR
# only when it does not end a CRLF line), DEL, C1 controls, the bidi controls, and lone
# surrogates (undecodable input; they cannot even be encoded for output).
_UNSAFE_PROSE = re.compile(
    "[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
    "\u2066-\u2069\ud800-\udfff]|\r(?!\n)"
)
# One log line: the same, plus every line break and tab (a client-chosen request path
# must not start a line of its own in a log).
_UNSAFE_LINE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
    "\u2066-\u2069\ud800-\udfff]"
)
# In JSON, json.dumps already escapes C0; these remain raw with ensure_ascii=False.
_UNSAFE_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                          "\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def terminal_safe(text: str, *, one_line: bool = False) -> str:
    """``text`` with every terminal control character shown as an escape (``\\x1b``,
    ``\\u202e``); tabs, newlines and CRLF line ends are kept unless ``one_line`` (for a
    log line: they are escaped too). Other text is unchanged."""
    unsafe = _UNSAFE_LINE if one_line else _UNSAFE_PROSE
    if unsafe.search(text) is None:
        return text
    return unsafe.sub(_escape, text)


def json_text(payload: Any) -> str:
    """``payload`` as indented JSON whose every control character is a ``\\u`` escape
    (valid JSON that decodes to the same strings)."""
    text = json.dumps(payload, indent=2, ensure_ascii=False)
    if _UNSAFE_JSON.search(text) is None:
        return text
    return _UNSAFE_JSON.sub(_json_escape, text)


def read_text_source(source: str, what: str) -> str:
    """The UTF-8 text of stdin (``source == "-"``) or of the file ``source``.

    Errors: ``EchoError`` (2) naming ``what`` (the argument, e.g. "BODY") when the file
    cannot be read or the bytes are not UTF-8.
    """
    from echo_core.errors import usage_error

    where = "stdin" if source == "-" else repr(source)
    try:
        if source == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(source, "rb") as handle:
                data = handle.read()
    except OSError as exc:
        raise usage_error(f"{what}: cannot read {where}: {exc.strerror}; pass a readable "
                          "file or - for stdin") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise usage_error(f"{what}: {where} is not UTF-8 text (byte {exc.start}); give "
                          "UTF-8 text") from None


#: The exit status of a not-ok envelope, by action (any other: 1).
_NOT_OK_EXIT: dict[str, ExitCode] = {Action.DUPLICATE_GATE: ExitCode.DUPLICATE_GATE,
                                     Action.QUEUED: ExitCode.UNAVAILABLE}


def emit(envelope: Envelope[object], as_json: bool,
         render: Callable[[Envelope[Any]], str] | None = None,
         *, exact_when_piped: bool = False) -> None:
    """Print ``envelope`` as JSON or prose and exit non-zero when it is not ``ok``.

    A ``queued`` envelope (the outbox took the write) prints its message, whatever the
    verb's ``render``. Prose goes through ``terminal_safe``; with ``exact_when_piped``
    (note text for ``get``) it is printed exactly as it is when stdout is not a terminal.
    A gate stop exits 76, a write kept in the outbox because the vault folder is missing
    69; any other not-ok envelope exits 1.
    """
    if as_json:
        click.echo(json_text(envelope.to_dict()))
    else:
        text = render(envelope) if render and envelope.action != Action.QUEUED else envelope.message
        if text:
            if exact_when_piped and not _stdout_is_terminal():
                click.echo(text, color=True)  # color=True: click keeps ANSI sequences as is
            else:
                click.echo(terminal_safe(text))
        for warning in envelope.warnings:
            click.echo(f"warning: {terminal_safe(warning)}", err=True)
    if not envelope.ok:
        sys.exit(int(_NOT_OK_EXIT.get(envelope.action, ExitCode.FAILURE)))


def _stdout_is_terminal() -> bool:
    isatty = getattr(sys.stdout, "isatty", None)
    return bool(isatty and isatty())


def report_error(error: EchoError, as_json: bool) -> int:
    """Print an ``EchoError`` (stderr, or JSON on stdout) and return its exit code."""
    if as_json:
        payload = {"ok": False, "error": {"code": error.code_name, "exit": int(error.code),
                                          "message": error.message}}
        click.echo(json_text(payload))
    else:
        click.echo(f"error: {terminal_safe(error.message)}", err=True)
    return int(error.code)


class LiteralArgsCommand(click.Command):
    """A command whose positional arguments may start with ``-`` (markdown bullets).

    Tokens that are not one of the command's own options are positional, so
    ``append x.md "- 2026-03-01: done" --json`` works without ``--``.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value: dict[str, bool] = {}
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                for name in (*param.opts, *param.secondary_opts):
                    takes_value[name] = not (param.is_flag or param.count)
        options: list[str] = []
        positionals: list[str] = []
        tokens = iter(args)
        for token in tokens:
            if token == "--":
                positionals.extend(tokens)
                break
            name = token.split("=", 1)[0]
            if name in takes_value:
                options.append(token)
                if takes_value[name] and "=" not in token:
                    options.append(next(tokens, ""))
            else:
                positionals.append(token)
        return super().parse_args(ctx, [*options, "--", *positionals])
