"""CLI commands derived from operation declarations (``echo_core.operations``).

``command_for(op)`` builds a click command from ``op``'s parameter class: positional
arguments and options with the declared help, defaults and CLI bounds (``--limit``
becomes an ``IntRange``), flags for booleans, repeatable options for lists, plus the
surface's CLI-only ``extra`` arguments. The callback gathers the values, lets
``CliSurface.prepare`` turn extras into parameters, validates everything through
``parse_params(surface="cli")`` (the same check MCP uses), runs the operation and prints
its envelope with the operation's ``render``.

Loaded on every start-up (``add_operations`` lists the commands for ``--help``): the
parameter classes, validation and running are imported by the functions that build or
run a command, not by this module.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from echo_core import OperationRef
from plugins.transport_cli.cli_kit import (
    AppState,
    LiteralArgsCommand,
    common_options,
    current_context,
    emit,
    group_options,
    json_requested,
)
from plugins.transport_cli.cli_values import cli_arguments, option_name
from plugins.transport_cli.default_group import DefaultCommandGroup

if TYPE_CHECKING:
    from echo_core import CliArg, CliParam, FieldInfo, Operation

__all__ = ["LazyOperationCommand", "add_operations", "cli_arguments", "command_for",
           "option_name"]


def _click_type(info: FieldInfo) -> Any:
    from echo_core import Kind

    bounds = info.bounds_for("cli")
    kind = info.type.kind
    if kind is Kind.INT:
        return click.IntRange(None if bounds.ge is None else int(bounds.ge),
                              None if bounds.le is None else int(bounds.le))
    if kind is Kind.FLOAT:
        return click.FloatRange(bounds.ge, bounds.le)
    return click.STRING


def _metavar(info: FieldInfo, cli: CliParam) -> str | None:
    if cli.metavar:
        return cli.metavar
    choices = info.choices()
    if choices and len(choices) <= 6:
        return "[" + "|".join(choices) + "]"
    return None


def _help(info: FieldInfo) -> str:
    choices = info.choices()
    cli = info.spec.cli
    text = cli.help if cli is not None and cli.help else info.spec.help_text
    named = [c for c in choices or () if c]  # "" (the default "any") needs no listing
    if len(named) > 6:
        text += f" One of: {', '.join(named)}."
    return text


def _parameter(info: FieldInfo) -> click.Parameter:
    import attrs

    from echo_core import Kind

    cli = info.spec.cli
    assert cli is not None
    if cli.positional:
        required = info.default_for("cli") is attrs.NOTHING
        return click.Argument([info.name], nargs=-1 if cli.variadic else 1,
                              required=required, metavar=cli.metavar or None,
                              type=_click_type(info))
    names = [option_name(info), *([cli.short] if cli.short else [])]
    default = info.default_for("cli")
    if info.type.kind is Kind.BOOL:
        return click.Option([info.name, *names], is_flag=True, default=False, help=_help(info))
    multiple = info.type.kind is Kind.LIST
    # An empty default stays None on click's side, so "not given" is visible to prepare().
    empty = default is attrs.NOTHING or multiple or default in (None, "")
    return click.Option(
        [info.name, *names], type=_click_type(info), multiple=multiple, help=_help(info),
        metavar=_metavar(info, cli), default=None if empty else default,
        show_default=not empty, required=default is attrs.NOTHING and not multiple,
    )


def _extra(arg: CliArg) -> click.Parameter:
    if arg.flag:
        return click.Option([arg.name, arg.flag], help=arg.help, metavar=arg.metavar or None)
    if arg.variadic:
        return click.Argument([arg.name], metavar=arg.metavar or None, nargs=-1)
    return click.Argument([arg.name], metavar=arg.metavar or None, required=arg.required)


def _progress_bar(label: str, run: Callable[[], Any]) -> Any:
    """``run()`` with the operation's ``echo_core.progress`` reports drawn as a bar on
    stderr (opened at the first report) when stderr is a terminal; otherwise nothing is
    reported (a script or a hook reading stderr gets no bar)."""
    from echo_core import progress

    isatty = getattr(sys.stderr, "isatty", None)
    if not (isatty and isatty()):
        return run()

    bars: list[Any] = []
    done = [0]
    with contextlib.ExitStack() as stack:

        def report(count: int, total: int) -> None:
            if not bars:
                bar: Any = click.progressbar(length=total, label=label, show_pos=True,
                                             file=sys.stderr)
                bars.append(stack.enter_context(bar))
            bars[0].update(count - done[0])
            done[0] = count

        with progress.reporting(report):
            return run()


def command_for(op: Operation[Any]) -> click.Command:
    """The click command running ``op`` (named after the last of its CLI words)."""
    from echo_core import fields_of, parse_params, run_operation, spelled_for

    surface = op.cli
    assert surface is not None
    fields = [f for f in fields_of(op.params)
              if f.spec.cli is not None and not f.spec.cli.from_prepare]
    positional = [f for f in fields if f.spec.cli and f.spec.cli.positional]
    options = [f for f in fields if not (f.spec.cli and f.spec.cli.positional)]
    params: list[click.Parameter] = [_parameter(f) for f in positional]
    params += [_extra(a) for a in surface.extra if not a.flag]
    params += [_parameter(f) for f in options]
    params += [_extra(a) for a in surface.extra if a.flag]

    def callback(as_json: bool, **values: Any) -> None:
        as_json = json_requested(as_json)
        arguments = cli_arguments(op, values)
        prepared = set(arguments) - {f.name for f in fields}
        checked = parse_params(op.params, arguments, surface="cli", operation=op.name,
                               prepared=prepared)
        ctx = current_context(tolerant=not op.needs_config)
        state = click.get_current_context().find_object(AppState)
        if state is not None:
            state.started(op, checked)
        with spelled_for("cli", op):  # messages name its --options
            if as_json:
                envelope = run_operation(op, ctx, checked)
            else:
                envelope = _progress_bar(op.name, lambda: run_operation(op, ctx, checked))
            emit(envelope, as_json, op.render, exact_when_piped=surface.exact_when_piped)

    cls = LiteralArgsCommand if surface.literal_args else click.Command
    command = cls(op.command[-1], params=params, callback=callback, help=op.cli_help)
    common_options(command)
    return command


class LazyOperationCommand(click.Command):
    """Stands in for the command of an ``OperationRef``: listed by its summary, built
    (importing the declaration) only when it runs or shows its own help. ``finish`` is
    applied to the built command (the CLI's argument guards)."""

    def __init__(self, name: str, summary: str, load: Callable[[], Operation[Any]],
                 finish: Callable[[click.Command], None]) -> None:
        super().__init__(name, help=summary)
        self._load = load
        self._finish = finish
        self._real: click.Command | None = None

    def real(self) -> click.Command:
        """The command, built on first use."""
        if self._real is None:
            self._real = command_for(self._load())
            self._finish(self._real)
        return self._real

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        return self.real().make_context(info_name, args, parent, **extra)

    def to_info_dict(self, ctx: click.Context) -> dict[str, Any]:
        return self.real().to_info_dict(ctx)


def add_operations(cli: click.Group, entries: list[Operation[Any] | OperationRef],
                   load: Callable[[str], Operation[Any] | None],
                   finish: Callable[[click.Command], None] = lambda command: None,
                   ) -> dict[str, str]:
    """Attach a command for each entry to ``cli`` (creating groups for nested words):
    an ``Operation``'s command is built now, an ``OperationRef``'s when it is used
    (``load(name)`` gives its declaration). Words that are both a command and the group
    of others (``reflect`` and ``reflect corpus``), in either order, make a
    ``DefaultCommandGroup`` running that command by default. Returns command path ->
    operation name."""
    added: dict[str, str] = {}
    for entry in entries:
        group = cli
        for word in entry.command[:-1]:
            sub = group.commands.get(word)
            if not isinstance(sub, click.Group):
                help_text = (entry.group_help if isinstance(entry, OperationRef)
                             else entry.cli.group_help if entry.cli else "")
                new = DefaultCommandGroup(word, help=help_text or f"The {word} commands.",
                                          params=group_options())
                if sub is not None:  # a command of that name: the group's default
                    new.set_default(sub)
                group.add_command(new)
                sub = new
            group = sub
        if isinstance(entry, OperationRef):
            name = entry.name

            def loader(name: str = name) -> Operation[Any]:
                op = load(name)
                assert op is not None
                return op

            command: click.Command = LazyOperationCommand(entry.command[-1], entry.summary,
                                                          loader, finish)
        else:
            command = command_for(entry)
            finish(command)
        same = group.commands.get(entry.command[-1])
        if isinstance(same, DefaultCommandGroup) and same.default_command is None:
            same.set_default(command)  # its sub-commands came first
        else:
            group.add_command(command)
        added[" ".join(entry.command)] = entry.name
    return added
