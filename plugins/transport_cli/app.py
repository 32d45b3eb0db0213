"""The ``echo-memory`` console entry point: runs a command line, through the click CLI
(``click_app``) or, for the few a plugin answers alone (``run_direct``: ``hook EVENT``),
without it.

Start-up does only what the command needs: resolve which plugins are disabled, load the
plugins (each keeps its heavy imports lazy); then either a plugin answers the command
line directly (no click, no derived commands: ~10 ms less on every Claude Code hook), or
every plugin is asked for its commands. This module imports no click.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

from echo_core import (
    EchoError,
    ExitCode,
    PluginHost,
    UnavailableError,
    changes_made,
)
from plugins.transport_cli.app_state import AppState
from plugins.transport_cli.interrupt import Interrupted, report_interrupt
from plugins.transport_cli.warning_lines import clean_warnings


def __getattr__(name: str) -> Any:
    """``build_cli`` and the help text live in ``click_app`` (imported on first use)."""
    if name in ("build_cli", "HELP", "EchoGroup", "help_width"):
        from plugins.transport_cli import click_app

        return getattr(click_app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _startup_host() -> PluginHost:
    from echo_core import create_host, resolve_config

    try:
        disabled: tuple[str, ...] = resolve_config().disabled
    except EchoError:
        disabled = ()  # a broken config file is reported when a command needs it
    return create_host(disabled=disabled)


def _as_reported(error: EchoError, changed: int = 0) -> EchoError:
    """``error``, or for a vault backend that could not be reached (``BackendUnavailable``)
    the ``UnavailableError`` saying so (exit 69), and that the command was not queued: a
    write that queues answers with its own ``queued`` envelope and never gets here.
    ``changed``: the notes the command had changed before the backend went away (a
    multi-step command such as session-end): said instead of "nothing was written"."""
    from echo_core import BackendUnavailable  # echo_core.protocols: not needed by --help

    if isinstance(error, BackendUnavailable):
        done = (f"{changed} note{'s' if changed != 1 else ''} had been written before that, "
                "the rest was not," if changed else "nothing was written")
        return UnavailableError(f"vault unreachable: {error}; {done} and this "
                                "command was not queued (only capture, append, put and fm "
                                "wait in the outbox): run it again once the vault is back")
    return error


def main(argv: Sequence[str] | None = None, *, collector_on: bool | None = None) -> None:
    """Run the CLI; exits with the stable codes of DESIGN §3.

    A command line a plugin answers without click (``run_direct``: ``hook EVENT``) runs
    without importing click or deriving the commands; every other goes through the click
    CLI. An ``OSError`` or ``UnicodeError`` that no layer turned into an ``EchoError``
    prints one line and exits 1 (``ECHO_DEBUG=1`` prints the traceback too); a Ctrl-C
    prints one line and exits 130 (``interrupt``), once the command has unwound. Run as a
    process of its own (no ``argv``), the interpreter's last garbage collection at exit
    is skipped (``gc.freeze`` at exit): it would traverse every object still alive,
    0.4 s after a 100k-note lint, only to free memory the system takes back anyway (the
    console script, ``run``, skips the whole teardown). Such a process also runs its
    start-up and a command line answered without click with the collector paused
    (``collector_paused``): they allocate tens of thousands of objects that form no
    garbage cycle, and the ~30 passes they set off cost ~4-5 ms of a ~110 ms cold
    recall. Once answered that way, the process exits with the
    collector still paused: turned on again, it would run one pass over everything the
    command allocated (5-9 ms at 100k notes, measured with ``gc.callbacks``) just before
    the exit frees it all anyway. A line that goes to click (``serve`` may run for days)
    runs with the collector on, unless it was off when the process started:
    ``collector_on`` is that state when a caller paused the collector before this (the
    console script, ``plugins.cli_start``, pauses it for its imports); None reads it now.
    """
    own_process = argv is None
    if own_process:
        atexit.register(gc.freeze)  # before the command runs: after the handlers it adds
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json" in args
    state: AppState | None = None
    changes_before = changes_made()
    try:
        with clean_warnings():
            with _paused_when_own_process(own_process, collector_on) as resume:
                host = _startup_host()
                state = AppState(host)
                code = _run_direct(host, args, state)
                if code is None and _cached_help(host, args):
                    code = 0
                if code is None:
                    resume()
            if code is None:
                _run_click(host, args, state, as_json)
                code = 0
    except EchoError as error:
        from plugins.transport_cli.cli_kit import report_error

        sys.exit(report_error(_as_reported(error, changes_made() - changes_before), as_json))
    except BrokenPipeError:
        sys.exit(0)
    except (KeyboardInterrupt, Interrupted):  # every finally has run: one line, 130
        sys.exit(report_interrupt(state))
    except (OSError, UnicodeError) as crash:  # last resort: one line, never a traceback
        from plugins.transport_cli.crash_guard import report_crash

        sys.exit(report_crash(crash))
    sys.exit(code)


def run(*, collector_on: bool | None = None) -> NoReturn:
    """``main`` in a process of its own (what the console script, ``plugins.cli_start``,
    calls), ended without the interpreter's teardown once it has answered
    (``process_exit.exit_now``: the freeing of every module and object costs 3-4 ms of a
    cold recall at 100k notes, for memory the system takes back anyway). The exit status
    is ``main``'s; ``collector_on`` is passed to it."""
    try:
        main(collector_on=collector_on)
    except SystemExit as done:
        from plugins.transport_cli.process_exit import exit_now

        exit_now(done.code)
    raise AssertionError("main always ends in SystemExit")


@contextlib.contextmanager
def _paused_when_own_process(own_process: bool, collector_on: bool | None = None
                             ) -> Iterator[Callable[[], None]]:
    """For a process of its own: the collector paused while the block runs and left
    paused after it (the process is about to exit; ``main``) unless the block calls the
    ``resume`` it is given, which turns it on again at once if it was on
    (``collector_on``, else as found). Else nothing: ``main`` called in-process, as tests
    do, leaves the host's collector alone."""
    if not own_process:
        yield lambda: None
        return
    was_enabled = gc.isenabled() if collector_on is None else collector_on
    gc.disable()
    resumed = False

    def resume() -> None:
        nonlocal resumed
        if was_enabled and not resumed:
            resumed = True
            gc.enable()

    try:
        yield resume
    except BaseException:
        resume()
        raise


def _run_direct(host: PluginHost, args: list[str], state: AppState) -> int | None:
    """The exit code of the plugin that answers ``args`` without click (``run_direct``),
    or None when none does (nor does any for a line starting with an option)."""
    if not args or args[0].startswith("-"):
        return None
    code: int | None = host.hook.run_direct(argv=tuple(args), state=state)
    return code


def _cached_help(host: PluginHost, args: list[str]) -> bool:
    """True once ``--help`` / ``-h`` was answered from the kept page (``help_cache``)."""
    from plugins.transport_cli.help_cache import is_help_line, print_cached_help

    return is_help_line(args) and print_cached_help(host, args)


def _run_click(host: PluginHost, args: list[str], state: AppState, as_json: bool = False
               ) -> None:
    """Build the click CLI and run ``args``; click's own outcomes become exits (usage 2,
    abort 130); an ``EchoError`` and a Ctrl-C (``Interrupted``) propagate to ``main``.
    Under ``as_json`` a usage error click finds (an unknown option, a value out of range,
    a missing argument) is the JSON error object every other error is, on stdout."""
    import click

    from echo_core import terminal_safe
    from plugins.transport_cli.click_app import build_cli

    try:
        cli = build_cli(host)
        if _printed_help(cli, host, args, state):
            return
        cli.main(args=args, prog_name="echo-memory", standalone_mode=False, obj=state)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.ClickException as problem:
        message = _with_quote_hint(problem, problem.message)
        problem.message = terminal_safe(message)  # type: ignore[misc]  # click's Final
        if as_json:
            sys.exit(_report_json(problem))
        problem.show()
        sys.exit(int(ExitCode.USAGE))
    except click.Abort as abort:
        if isinstance(abort.__cause__, KeyboardInterrupt):  # a Ctrl-C while click parsed
            raise Interrupted from abort.__cause__
        click.echo("aborted", err=True)
        sys.exit(130)


#: click's message for words left over once every argument took its own.
EXTRA_WORDS = "Got unexpected extra argument"


def _with_quote_hint(problem: Any, message: str) -> str:
    """``message``, plus for words left over after the command's last argument (most
    often a text of several words not quoted: ``resolve ada king lovelace``) the
    command line with that argument quoted."""
    import shlex

    import click

    ctx = getattr(problem, "ctx", None)
    if ctx is None or not message.startswith(EXTRA_WORDS):
        return message
    words = message.partition("(")[2].rpartition(")")[0]
    arguments = [p for p in ctx.command.params if isinstance(p, click.Argument)]
    values = [ctx.params.get(p.name) for p in arguments]
    if not words or not values or not all(isinstance(v, str) for v in values):
        return message
    example = " ".join([ctx.command_path, *map(shlex.quote, values[:-1]),
                        shlex.quote(f"{values[-1]} {words}")])
    return (f"{message}: a {arguments[-1].human_readable_name} of several words goes in "
            f"quotes ({example})")


def _report_json(problem: Any) -> int:
    """Print click's ``problem`` as the JSON usage error (``report_error``), naming the
    command's help page when click knows the command; the exit code (2)."""
    from echo_core import usage_error
    from plugins.transport_cli.cli_kit import report_error

    where = getattr(problem, "ctx", None)
    hint = f" (see `{where.command_path} --help`)" if where is not None else ""
    return report_error(usage_error(problem.format_message() + hint), True)


def _printed_help(cli: Any, host: PluginHost, args: list[str], state: AppState) -> bool:
    """For ``--help`` / ``-h``: print the root help page as click's help option does and
    keep it for the next run (``help_cache``); False for any other line."""
    import click

    from plugins.transport_cli.help_cache import is_help_line, remember_help

    if not is_help_line(args):
        return False
    with cli.make_context("echo-memory", [], resilient_parsing=True, obj=state) as ctx:
        text = ctx.get_help()
    click.echo(text, color=ctx.color)
    remember_help(host, args, text)
    return True
