"""``DefaultCommandGroup``: a CLI word that is both a command and a group.

``reflect`` runs a command (``reflect PROPOSALS``, ``reflect --transcript PATH``) and
also has sub-commands (``reflect corpus``). Declarations say so by their command words:
an operation whose words are ``("reflect",)`` and another's ``("reflect", "corpus")``
make ``reflect`` a ``DefaultCommandGroup`` whose default command is the first.

Routing, decided on the words after the group's name: the group's own options
(``--json``, ``--vault PATH``, ``--state-dir DIR``) are skipped; then, when the next word
is a sub-command's name, the sub-command runs as in any group; when it is anything else
(a file name, ``-``, another option), the default command runs with every word, as if it
were the only command of that name (so with only the group's options, it says what is
missing). Nothing after the name, or ``--help`` before any other word, shows the group's
help: the default command's usage, help and options, then the sub-commands. A file
named like a sub-command is given as ``./corpus``.

Without a default command the class behaves exactly as ``click.Group``.
"""

from __future__ import annotations

from typing import Any

import click


class DefaultCommandGroup(click.Group):
    """A group that runs ``default`` when its first word is not a sub-command (see the
    module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.default_command: click.Command | None = None

    def set_default(self, command: click.Command) -> None:
        """Run ``command`` when the first word is not a sub-command; the group is listed
        with the command's help."""
        self.default_command = command
        self.help = command.help
        self.short_help = command.short_help

    def routes_to_default(self, args: list[str], ctx: click.Context) -> bool:
        """Whether ``args`` (the words after the group's name) run the default command."""
        if self.default_command is None:
            return False
        takes_value: dict[str, bool] = {}
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                for name in (*param.opts, *param.secondary_opts):
                    takes_value[name] = not (param.is_flag or param.count)
        helps = set(self.get_help_option_names(ctx))
        tokens = iter(args)
        for token in tokens:
            name = token.split("=", 1)[0]
            if name in helps:
                return False
            if name in takes_value:
                if takes_value[name] and "=" not in token:
                    next(tokens, None)
                continue
            return token not in self.commands
        return bool(args)  # only the group's options: the default says what is missing

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        """The default command's context (under this group's name and parent) when
        ``args`` route to it, else this group's."""
        probe = click.Context(self, info_name=info_name, parent=parent)
        if self.default_command is not None and self.routes_to_default(list(args), probe):
            return self.default_command.make_context(info_name, args, parent=parent, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)

    def _default(self) -> click.Command:
        command = self.default_command
        assert command is not None
        real = getattr(command, "real", None)  # a command built on first use
        built: click.Command = real() if callable(real) else command
        return built

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The default command's usage, help and options, the usage of a sub-command,
        then the sub-commands."""
        if self.default_command is None:
            super().format_help(ctx, formatter)
            return
        default = self._default()
        sub = click.Context(default, info_name=ctx.info_name, parent=ctx.parent)
        default.format_usage(sub, formatter)
        formatter.write_usage(ctx.command_path, "COMMAND [ARGS]...", prefix="   or: ")
        default.format_help_text(sub, formatter)
        default.format_options(sub, formatter)
        self.format_commands(ctx, formatter)
        formatter.write_paragraph()
        formatter.write_text(f"Run `{ctx.command_path} COMMAND --help` for a command's options.")
        default.format_epilog(sub, formatter)
