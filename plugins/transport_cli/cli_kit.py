"""What the CLI's commands need (this plugin's own; other plugins never import it).

* ``AppState`` (``app_state``, re-exported here) sits in ``click.Context.obj``.
* ``common_options`` adds ``--vault``, ``--state-dir`` and ``--json`` to a command;
  ``ensure_common_options`` adds whichever a raw command from another plugin lacks.
* ``emit(envelope, as_json, render)`` (from ``emit``) prints a result (prose or JSON) and
  sets the exit code.

Import cost matters here: this module is loaded on every start-up (no ops imports).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from echo_core import EchoError, json_text, terminal_safe
from plugins.transport_cli.app_state import AppState
from plugins.transport_cli.emit import emit

if TYPE_CHECKING:
    from echo_core import EchoContext

__all__ = ["AppState", "LiteralArgsCommand", "common_options", "current_context", "emit",
           "ensure_common_options", "group_options", "json_requested", "pass_echo_context",
           "report_error"]

F = TypeVar("F", bound=Callable[..., Any])


def _remember_flag(name: str) -> Callable[[click.Context, click.Parameter, Any], Any]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        # a flag left off (False) never clears what a group's option already set
        if value is not None and value is not False and isinstance(ctx.obj, AppState):
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


def _vault_options() -> list[click.Option]:
    return [
        click.Option(["--vault"], expose_value=False, callback=_remember_flag("vault"),
                     metavar="PATH|URL", help="The vault: a folder or URL (default: "
                     "$ECHO_VAULT, the config file, or the embedded vault)."),
        click.Option(["--state-dir"], expose_value=False, callback=_remember_flag("state_dir"),
                     metavar="DIR", help="Per-machine state folder (default: "
                     "$ECHO_STATE_DIR or XDG state)."),
    ]


def ensure_common_options(command: click.Command) -> None:
    """Give a raw command (another plugin's) the ``--vault``, ``--state-dir`` and
    ``--json`` options it lacks; the values land on the ``AppState`` (``as_json`` too)."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            ensure_common_options(sub)
        return
    names = {opt for p in command.params for opt in getattr(p, "opts", ())}
    if "--json" not in names:
        command.params.append(click.Option(
            ["--json"], is_flag=True, expose_value=False, callback=_remember_flag("as_json"),
            help="Print the result as JSON (for machines)."))
    if "--vault" not in names:
        command.params.extend(_vault_options())


def group_options() -> list[click.Option]:
    """``--json``, ``--vault`` and ``--state-dir`` for a group of commands (``scope``,
    ``triage``): given before the sub-command, they hold for it (``scope --json show``)."""
    return [click.Option(["--json"], is_flag=True, expose_value=False,
                         callback=_remember_flag("as_json"),
                         help="Print the result as JSON (for machines)."), *_vault_options()]


def json_requested(as_json: bool) -> bool:
    """``as_json`` from a command's own ``--json``, or a group's given before it."""
    state = click.get_current_context().find_object(AppState)
    return as_json or (state is not None and state.as_json)


def current_context(*, tolerant: bool = False) -> EchoContext:
    """The ``EchoContext`` of the running command (``tolerant``: see ``AppState.context``)."""
    state = click.get_current_context().find_object(AppState)
    if state is None:
        raise EchoError("no echo-memory app state; run commands through `echo-memory`")
    return state.context(tolerant=tolerant)


def pass_echo_context(func: F) -> F:
    """Decorator: call ``func(ctx, ...)`` with the command's ``EchoContext``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(current_context(), *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def report_error(error: EchoError, as_json: bool) -> int:
    """Print an ``EchoError`` (stderr, or JSON on stdout) and return its exit code."""
    if as_json:
        payload = {"ok": False, "error": {"code": error.code_name, "exit": int(error.code),
                                          "message": error.message}}
        click.echo(json_text(payload))
    else:
        click.echo(f"error: {terminal_safe(error.message)}", err=True)
    return int(error.code)


#: A word that names an option (``--dryrun``, ``--knid=person``): two dashes, then a letter,
#: letters, digits, ``-`` or ``_`` up to the end or an ``=``. Text such as ``-- a dash``,
#: ``---`` or ``--> next`` names none.
_OPTION_WORD = re.compile(r"--[A-Za-z][A-Za-z0-9_-]*")


class LiteralArgsCommand(click.Command):
    """A command whose positional arguments may start with ``-`` (markdown bullets).

    Tokens that are not one of the command's own options are positional, so
    ``append x.md "- 2026-03-01: done" --json`` works without ``--``; ``-`` stays a
    positional (stdin). A word shaped like an option name that the command lacks
    (``--dryrun``, ``--knid=person``; see ``_OPTION_WORD``) is an unknown option, exit 2
    with click's own "No such option" message and its suggestion, wherever it stands: a
    typo must never become the text a verb writes. Text that does start so goes after a
    ``--`` separator (``append x.md -- --literal``).
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
            elif _OPTION_WORD.fullmatch(name):
                options.append(token)  # click's parser refuses it, naming the closest
            else:
                positionals.append(token)
        return super().parse_args(ctx, [*options, "--", *positionals])
