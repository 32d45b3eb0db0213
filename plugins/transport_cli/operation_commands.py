"""The operations as CLI commands, listed without building them (this module is loaded on
every start-up; ``plugins.transport_cli.derived`` builds a command from a declaration).

``add_operations`` attaches one command per registered operation: an ``OperationRef``
becomes a ``LazyOperationCommand`` carrying only its name and one-line summary (what the
top-level ``--help`` prints), so neither its declaration nor the command-building code is
imported until the command runs or shows its own help.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from echo_core import OperationRef
from plugins.transport_cli.cli_kit import group_options

if TYPE_CHECKING:
    from echo_core import Operation


def _command_for(op: Operation[Any]) -> click.Command:
    from plugins.transport_cli.derived import command_for

    return command_for(op)


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
            self._real = _command_for(self._load())
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
    (``load(name)`` gives its declaration). Returns command path -> operation name."""
    added: dict[str, str] = {}
    for entry in entries:
        group = cli
        for word in entry.command[:-1]:
            sub = group.commands.get(word)
            if not isinstance(sub, click.Group):
                help_text = (entry.group_help if isinstance(entry, OperationRef)
                             else entry.cli.group_help if entry.cli else "")
                sub = click.Group(word, help=help_text or f"The {word} commands.",
                                 params=group_options())
                group.add_command(sub)
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
            command = _command_for(entry)
            finish(command)
        group.add_command(command)
        added[" ".join(entry.command)] = entry.name
    return added
