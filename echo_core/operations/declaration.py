"""``Operation``: one declaration per verb, from which every surface is derived.

An operation is registered through ``register_operations`` (the core's own verbs come
through that hook too). The CLI turns it into a command, the MCP server into a tool, the
``claude-code`` build target into a skill; a third party's transport walks the same
registry. What a surface needs differently is declared here, next to the rest:
``CliSurface`` / ``McpSurface`` (``None`` leaves the operation off that surface) and the
per-parameter ``CliParam`` / ``McpParam`` overrides of ``echo_core.operations.params``.

``run(ctx, params)`` takes the context and an instance of ``params`` (already checked by
``parse_params``) and returns an ``Envelope``; it never prints. ``render(envelope)`` is
the readable form people see (the CLI's prose; the text content of an MCP result).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import attrs

from echo_core.operations.names import NAME, TOOL_NAME

if TYPE_CHECKING:
    from echo_core.models import Envelope

Access = Literal["read", "write", "destructive"]
Profile = Literal["core", "full"]
P = TypeVar("P")


def lazy_type(module: str, name: str) -> Callable[[], type]:
    """``Operation.result`` for a class imported only when a schema is asked for."""

    def load() -> type:
        import importlib

        cls: type = getattr(importlib.import_module(module), name)
        return cls

    return load


@attrs.frozen
class CliArg:
    """A CLI-only argument or option that ``CliSurface.prepare`` turns into parameters
    (a file to read, ``-`` for stdin). ``flag`` set: an option; else a positional.
    ``variadic``: a positional that takes every word left (a tuple, maybe empty), so
    ``prepare`` sees the words a person forgot to quote and can say so precisely."""

    name: str
    help: str
    metavar: str = ""
    required: bool = True
    flag: str | None = None
    variadic: bool = False


@attrs.frozen
class CliSurface:
    """How the operation appears on the command line.

    ``command``: the words that run it (default: the operation's name; ``("scope",
    "show")`` nests it under a group). ``help``: the long help shown by ``--help`` (its
    first line is the summary; default: ``Operation.summary``). ``extra``: CLI-only
    arguments; ``prepare(values)`` gets every parsed value (parameters and extras) and
    returns the parameter mapping (e.g. reading a JSON file into it). ``literal_args``:
    positional values may start with ``-``. ``exact_when_piped``: prose is printed
    byte-exact when stdout is not a terminal (note text). ``group_help``: the help of
    the group a nested command creates (the first operation naming it wins)."""

    command: tuple[str, ...] = ()
    help: str = ""
    extra: tuple[CliArg, ...] = ()
    prepare: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None
    literal_args: bool = False
    exact_when_piped: bool = False
    group_help: str = ""


@attrs.frozen
class McpSurface:
    """How the operation appears as an MCP tool: ``tool`` (default ``echo_`` + the name
    in snake_case) and ``description`` (default: the operation's)."""

    tool: str = ""
    description: str = ""


@attrs.frozen
class SkillSpec:
    """A Claude Code skill (``skills/<name>/SKILL.md``) for this operation: a
    model-facing ``description`` (what and when), a markdown ``body`` that teaches it,
    ``argument_hint`` and whether the model may start it on its own. The built skill
    also lists the command's usage, derived from the declaration."""

    name: str
    description: str
    body: str
    argument_hint: str | None = None
    model_invocable: bool = True


@attrs.frozen
class Operation(Generic[P]):
    """One verb (see the module docstring).

    ``access``: ``read`` / ``write`` / ``destructive``, or a function of the parameters
    (``capture`` writes unless ``dry_run``). ``lock_param``: the parameter naming the one
    note path a write touches (per-path locking); ``None`` for an entity-level write.
    ``profile``: ``core`` tools are served by ``ECHO_MCP_TOOLS=core`` too. ``result``:
    the attrs class of ``Envelope.data``, or a function returning it (the output schema
    is derived from it). ``skill``: the Claude Code skill(s) built for it.
    ``needs_vault``: surfaces check first that the vault is one (its marker; see
    ``echo_core.operations.preflight``), so a missing or mistyped vault path gets the same
    message and exit code from every verb; False for a verb that makes or diagnoses
    vaults (init, doctor). ``needs_config``: False lets the verb run with a broken config
    file (defaults in its place, ``ctx.config.problem`` saying what is wrong): doctor.
    ``fresh``: the verb answers from the indexes, so surfaces first let them catch up
    with notes changed outside echo-memory (``echo_core.ops.freshness``): ``"quick"``
    (a bounded check), ``"full"`` (every note stat-ed: ``load``), ``None`` (no check)."""

    name: str
    summary: str
    description: str
    params: type[P]
    run: Callable[[Any, P], Envelope[Any]]
    result: type | Callable[[], type] | None = None
    access: Access | Callable[[P], Access] = "read"
    profile: Profile = "full"
    lock_param: str | None = None
    render: Callable[[Envelope[Any]], str] | None = None
    cli: CliSurface | None = CliSurface()
    mcp: McpSurface | None = McpSurface()
    skill: SkillSpec | tuple[SkillSpec, ...] | None = None
    needs_vault: bool = True
    needs_config: bool = True
    fresh: Literal["quick", "full"] | None = None

    def result_type(self) -> type | None:
        """The result class (``result`` may be a function returning it, so declarations
        need not import the operation's module)."""
        if self.result is None or isinstance(self.result, type):
            return self.result
        return self.result()

    def access_for(self, params: P) -> Access:
        """The access of one call (the rule applied to its parameters)."""
        access = self.access(params) if callable(self.access) else self.access
        return access if access in ("read", "write", "destructive") else "write"

    @property
    def may_write(self) -> bool:
        """False only for an operation that always reads."""
        return self.access != "read"

    @property
    def skills(self) -> tuple[SkillSpec, ...]:
        """The Claude Code skills this operation declares (none, one or several)."""
        if self.skill is None:
            return ()
        return self.skill if isinstance(self.skill, tuple) else (self.skill,)

    @property
    def command(self) -> tuple[str, ...]:
        """The CLI words (empty when the operation is not on the CLI)."""
        if self.cli is None:
            return ()
        return self.cli.command or (self.name,)

    @property
    def tool_name(self) -> str:
        """The MCP tool name (empty when not served over MCP)."""
        if self.mcp is None:
            return ""
        return self.mcp.tool or "echo_" + self.name.replace("-", "_")

    @property
    def tool_description(self) -> str:
        """What the MCP tool says to a model."""
        return (self.mcp.description if self.mcp and self.mcp.description
                else self.description)

    @property
    def cli_help(self) -> str:
        """The CLI help text."""
        return (self.cli.help if self.cli and self.cli.help else self.summary)

    def problems(self) -> list[str]:
        """What is wrong with this declaration (empty when it is well formed)."""
        from echo_core.operations.params import fields_of

        found: list[str] = []
        if not NAME.match(self.name):
            found.append(f"name {self.name!r} must be kebab-case (e.g. 'note-count')")
        if not self.summary.strip() or not self.description.strip():
            found.append("summary and description must not be empty")
        if not callable(self.run):
            found.append("run must be callable")
        try:
            names = [f.name for f in fields_of(self.params)]
        except TypeError as exc:
            found.append(f"params: {exc}")
            names = []
        if self.lock_param is not None and self.lock_param not in names:
            found.append(f"lock_param {self.lock_param!r} is not a parameter")
        if self.mcp is not None and not TOOL_NAME.match(self.tool_name):
            found.append(f"MCP tool name {self.tool_name!r} must be echo_ + snake_case")
        if self.cli is not None and not all(NAME.match(w) for w in self.command):
            found.append(f"CLI command {' '.join(self.command)!r} must be kebab-case words")
        return found
