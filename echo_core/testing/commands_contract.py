"""``CommandsContract``: what a plugin's ``register_commands`` must add to the CLI.

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the ``plugin`` fixture (and ``reserved_command_names`` to guard the core's names)::

    from echo_core.testing import CommandsContract

    class TestRecallCommands(CommandsContract):
        @pytest.fixture
        def plugin(self):
            return plugins.recall_bm25

        @pytest.fixture
        def reserved_command_names(self):
            return {"init", "doctor", "plugins"}
"""

from __future__ import annotations

from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from echo_core.testing.plugin_contract import CONTRACT_PLUGIN_NAME, hooks_of, strict_host


def _walk(
    group: click.Group, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command under ``group`` as ``(("a", "b"), command)``, groups included."""
    for name, command in sorted(group.commands.items()):
        path = (*prefix, name)
        yield path, command
        if isinstance(command, click.Group):
            yield from _walk(command, path)


def _help_text(command: click.Command) -> str:
    return (command.help or command.short_help or "").strip()


class CommandsContract:
    """Contract tests for the ``register_commands`` hook.

    Fixtures to override:

    * ``plugin`` -> the plugin object (module) implementing ``register_commands``. Required.
    * ``reserved_command_names`` -> names the plugin must not take (another plugin's or the
      core's commands). Optional; an empty set by default.

    The hook runs through a strict host on a fresh ``click.Group``. Checks: it adds at least
    one ``click.Command``; every command (and sub-command) has help text and answers
    ``--help``; no top-level name is reserved. (The CLI itself adds ``--vault``,
    ``--state-dir`` and ``--json`` to every command that lacks them.)
    """

    @pytest.fixture
    def plugin(self) -> object:
        raise NotImplementedError("override the `plugin` fixture to return your plugin")

    @pytest.fixture
    def reserved_command_names(self) -> set[str]:
        return set()

    @staticmethod
    def build_cli(plugin: object) -> click.Group:
        """A fresh ``echo-memory`` group with only ``plugin``'s commands added."""
        host = strict_host((CONTRACT_PLUGIN_NAME, plugin))
        assert "register_commands" in hooks_of(host, CONTRACT_PLUGIN_NAME), (
            "the plugin does not implement register_commands"
        )
        cli = click.Group("echo-memory")
        host.hook.register_commands(cli=cli)
        return cli

    def test_adds_at_least_one_command(self, plugin: object) -> None:
        cli = self.build_cli(plugin)
        assert cli.commands, "register_commands added no command"
        for name, command in cli.commands.items():
            assert isinstance(command, click.Command), f"{name!r} is not a click.Command"
            assert isinstance(name, str) and name.strip(), f"bad command name {name!r}"

    def test_every_command_has_help_text(self, plugin: object) -> None:
        for path, command in _walk(self.build_cli(plugin)):
            assert _help_text(command), f"command {path!r} has no help text"

    def test_every_command_answers_help(self, plugin: object) -> None:
        cli = self.build_cli(plugin)
        runner = CliRunner()
        for path, _ in _walk(cli):
            result = runner.invoke(cli, [*path, "--help"])
            assert result.exit_code == 0, f"{' '.join(path)} --help failed:\n{result.output}"
            assert "--help" in result.output

    def test_names_do_not_collide_with_reserved_ones(
        self, plugin: object, reserved_command_names: set[str]
    ) -> None:
        taken = set(self.build_cli(plugin).commands) & set(reserved_command_names)
        assert not taken, f"command names already taken: {sorted(taken)}"

    def test_a_direct_answer_is_only_for_its_own_commands_exact_forms(
            self, plugin: object) -> None:
        """``run_direct`` (when the plugin has it) claims no help, no option line, no
        command line of a name it did not add, and no bare command name."""
        host = strict_host((CONTRACT_PLUGIN_NAME, plugin))
        if "run_direct" not in hooks_of(host, CONTRACT_PLUGIN_NAME):
            return
        names = sorted(self.build_cli(plugin).commands)
        lines: list[tuple[str, ...]] = [(), ("--help",), ("-h",), ("--version",),
                                        ("no-such-command-here",),
                                        ("no-such-command-here", "x")]
        for name in names:
            lines += [(name,), (name, "--help"), (name, "-h"), ("--json", name),
                      (name, "--vault", "/nowhere", "x")]
        for argv in lines:
            answer = host.hook.run_direct(argv=argv, state=None)
            assert answer is None, f"run_direct claimed {argv!r}"
