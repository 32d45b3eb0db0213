"""Operation command lines run without click: the CLI's ``run_direct`` answer.

Building the click CLI (importing click, deriving a command per operation, parsing)
costs a cold process ~10-15 ms; an agent's ``recall --json`` or ``resolve`` pays it on
every call. ``run_line(argv, state)`` parses the command lines it can parse exactly as
the derived click command would, from the same declaration, runs the operation and
prints through the same ``emit``; for anything else it returns None and click runs the
line, so every message, help text and error stays click's.

What it takes (anything else goes to click):

* the words of one operation's command at the start of the line (not a word that also
  names a group of other commands, and not an operation with a required or ``--flag``
  CLI-only extra argument), and no plugin outside echo-memory's own distribution adding
  raw commands (one of those could take the same name: click would refuse both);
* for an operation with optional positional extras (``capture TITLE [-]``): none of them
  given (they reach its ``prepare`` as None, as click gives them); for one with
  ``literal_args``: no word starting with ``-`` other than its options, which click's
  literal parsing would make a positional;
* after them: its positional values, its long or short options (``--name VALUE``,
  ``--name=VALUE``, flags, repeated list options), ``--json``, ``--vault`` and
  ``--state-dir``; every value converting as click converts it (an int within its
  range, a float), required values all given, every word valid UTF-8, no value that
  starts with ``-``;
* no ``--help`` / ``-h`` / ``--version`` / ``--``, and no progress bar to draw (``--json``,
  or stderr not a terminal).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from echo_core import FieldInfo, Operation, OperationRegistry, PluginHost
    from plugins.transport_cli.app_state import AppState

__all__ = ["parse_line", "run_line"]

#: The distribution whose plugins' raw commands are known not to shadow an operation
#: (tests/test_plugin_registration checks it): any other plugin adding raw commands
#: sends every line to click.
OWN_DISTRIBUTION = "echo-memory"
_NEVER = frozenset({"--help", "-h", "--version", "--"})
_COMMON_VALUED = {"--vault": "vault", "--state-dir": "state_dir"}


class _NotDirect(Exception):
    """This line is click's to parse."""


def _raw_commands_are_own(host: PluginHost) -> bool:
    return all(host.installed_by(name, OWN_DISTRIBUTION)
               for name in host.implementers("register_commands"))


def _find(registry: OperationRegistry, argv: Sequence[str]) -> tuple[str, int] | None:
    """The operation whose command starts ``argv`` (longest), and its word count."""
    best: tuple[str, int] | None = None
    prefixes: set[tuple[str, ...]] = set()
    for entry in registry.for_cli():
        words = tuple(entry.command)
        prefixes.update(words[:i] for i in range(1, len(words)))
        if tuple(argv[:len(words)]) == words and (best is None or len(words) > best[1]):
            best = (entry.name, len(words))
    if best is None or tuple(argv[:best[1]]) in prefixes:
        return None  # a group word (its default command, or none): click's
    return best


def _number(info: FieldInfo, text: str) -> Any:
    from echo_core import Kind

    bounds = info.bounds_for("cli")
    try:
        value: Any = int(text) if info.type.kind is Kind.INT else float(text)
    except ValueError:
        raise _NotDirect from None
    if (bounds.ge is not None and value < bounds.ge) or (
            bounds.le is not None and value > bounds.le):
        raise _NotDirect
    return value


def _value(info: FieldInfo, text: str) -> Any:
    from echo_core import Kind

    if text.startswith("-") or not _utf8(text):
        raise _NotDirect
    if info.type.kind in (Kind.INT, Kind.FLOAT):
        return _number(info, text)
    return text


def _utf8(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_line(op: Operation[Any], words: Sequence[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(values, common)`` from the words after ``op``'s command, as its click command
    would parse them: ``values`` by parameter name (click's defaults for what is not
    given), ``common`` the ``--json`` / ``--vault`` / ``--state-dir`` given. Raises
    ``_NotDirect`` for a line click must parse."""
    import attrs

    from echo_core import Kind, fields_of
    from plugins.transport_cli.cli_values import option_name

    fields = [f for f in fields_of(op.params)
              if f.spec.cli is not None and not f.spec.cli.from_prepare]
    positional = [f for f in fields if f.spec.cli and f.spec.cli.positional]
    by_option: dict[str, FieldInfo] = {}
    for info in fields:
        cli = info.spec.cli
        if cli is not None and not cli.positional:
            by_option[option_name(info)] = info
            if cli.short:
                by_option[cli.short] = info
    given: dict[str, Any] = {}
    common: dict[str, Any] = {}
    words_left: list[str] = []
    tokens = iter(words)
    for token in tokens:
        if token in _NEVER:
            raise _NotDirect
        if not token.startswith("-") or token == "-":
            if token == "-" or not _utf8(token):
                raise _NotDirect
            words_left.append(token)
            continue
        name, eq, inline = token.partition("=")
        if name == "--json":
            if eq:
                raise _NotDirect
            common["as_json"] = True
            continue
        if name in _COMMON_VALUED:
            text = inline if eq else next(tokens, None)
            if text is None or not text or text.startswith("-") or not _utf8(text):
                raise _NotDirect
            common[_COMMON_VALUED[name]] = text
            continue
        option = by_option.get(name)
        if option is None:
            raise _NotDirect
        if option.type.kind is Kind.BOOL:
            if eq:
                raise _NotDirect
            given[option.name] = True
            continue
        text = inline if eq else next(tokens, None)
        if text is None:
            raise _NotDirect
        value = _value(option, text)
        if option.type.kind is Kind.LIST:
            given.setdefault(option.name, []).append(value)
        else:
            given[option.name] = value
    values: dict[str, Any] = {}
    for info in positional:
        cli = info.spec.cli
        assert cli is not None
        if cli.variadic:
            values[info.name] = tuple(_value(info, w) for w in words_left)
            words_left = []
            if not values[info.name] and info.default_for("cli") is attrs.NOTHING:
                raise _NotDirect
        elif words_left:
            values[info.name] = _value(info, words_left.pop(0))
        elif info.default_for("cli") is attrs.NOTHING:
            raise _NotDirect
        else:
            values[info.name] = None
    if words_left:
        raise _NotDirect
    for info in fields:
        if info in positional:
            continue
        if info.name in given:
            value = given[info.name]
            values[info.name] = tuple(value) if isinstance(value, list) else value
            continue
        default = info.default_for("cli")
        kind = info.type.kind
        if kind is Kind.BOOL:
            values[info.name] = False
        elif kind is Kind.LIST:
            values[info.name] = ()
        elif default is attrs.NOTHING:
            raise _NotDirect  # a required option left out
        else:
            values[info.name] = None if default in (None, "") else default
    return values, common


def _extras_may_be_absent(surface: Any) -> bool:
    """Whether a line may leave out every CLI-only extra of ``surface``: each is an
    optional positional (``capture TITLE [-]``). A line giving one has a word left over
    (or ``-``), which ``parse_line`` refuses, so it goes to click."""
    return all(not extra.flag and not extra.required for extra in surface.extra)


def run_line(argv: Sequence[str], state: AppState | None) -> int | None:
    """Run ``argv`` when it is an operation line this module parses (see the module
    docstring); its exit code, else None."""
    if state is None or not argv or argv[0].startswith("-"):
        return None
    if any(token in _NEVER for token in argv):
        return None
    from echo_core import OperationRegistry

    host = state.host
    if not _raw_commands_are_own(host):
        return None
    registry = OperationRegistry.from_host(host)
    found = _find(registry, argv)
    if found is None:
        return None
    op = registry.load(found[0])
    surface = op.cli if op is not None else None
    if op is None or surface is None or not _extras_may_be_absent(surface):
        return None
    try:
        values, common = parse_line(op, argv[found[1]:])
    except _NotDirect:
        return None
    values.update({extra.name: None for extra in surface.extra})  # none given
    as_json = bool(common.get("as_json")) or state.as_json
    isatty = getattr(sys.stderr, "isatty", None)
    if not as_json and isatty is not None and isatty():
        return None  # click draws the progress bar
    state.vault = common.get("vault", state.vault)
    state.state_dir = common.get("state_dir", state.state_dir)
    _run(op, values, as_json, state)
    return 0


def _run(op: Operation[Any], values: dict[str, Any], as_json: bool, state: AppState) -> None:
    """What the derived command's callback does with the parsed values."""
    from echo_core import fields_of, parse_params, run_operation, spelled_for
    from plugins.transport_cli.cli_values import cli_arguments
    from plugins.transport_cli.emit import emit

    assert op.cli is not None
    arguments = cli_arguments(op, values)
    declared = {f.name for f in fields_of(op.params)
                if f.spec.cli is not None and not f.spec.cli.from_prepare}
    checked = parse_params(op.params, arguments, surface="cli", operation=op.name,
                           prepared=set(arguments) - declared)
    ctx = state.context(tolerant=not op.needs_config)
    state.started(op, checked)
    with spelled_for("cli", op):
        envelope = run_operation(op, ctx, checked)
        emit(envelope, as_json, op.render, exact_when_piped=op.cli.exact_when_piped)
