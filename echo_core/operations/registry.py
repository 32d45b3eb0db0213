"""The operation registry: every ``Operation`` the plugins register, checked once.

``OperationRegistry.from_host(host)`` collects ``register_operations``. A malformed
declaration, or two operations claiming one CLI command, MCP tool or skill name, is left
out (the first claimant keeps the name) and reported by ``plugins`` and ``doctor`` naming
the operations and their plugins (``registration_problems``); strict hosts refuse it. Surfaces ask for what they
serve: ``for_cli()``, ``for_mcp(profile)``, ``skills()``.

``OperationRegistry`` is a plain ``__slots__`` class, not attrs (house style's exception
for the start-up path, issue 15): every start-up, ``--help`` included, builds one, and
importing attrs costs ~10 ms of a ~75 ms ``--help``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

from echo_core.errors import EchoError, ExitCode
from echo_core.operations.lazy import OperationRef
from echo_core.operations.names import NAME, TOOL_NAME

if TYPE_CHECKING:  # the declaration classes are imported when an Operation is checked
    from echo_core.operations.declaration import Operation, SkillSpec
    from echo_core.plugins import PluginHost
    from echo_core.registrations import RegistrationProblem

HOOK = "register_operations"


Entry: TypeAlias = "Operation[Any] | OperationRef"


def declaration_problems(name: str, obj: object) -> str | None:
    """Why ``obj`` registered under ``name`` is not a usable operation (None when it is).
    An ``OperationRef`` is checked as far as it goes without importing its module."""
    if isinstance(obj, OperationRef):
        if obj.name != name:
            return f"{name!r} is registered under another name than its own ({obj.name!r})"
        bad = [what for what, ok in (
            ("name must be kebab-case", NAME.match(name)),
            ("MCP tool name must be echo_ + snake_case",
             not obj.tool_name or TOOL_NAME.match(obj.tool_name)),
            ("CLI words must be kebab-case", all(NAME.match(w) for w in obj.command)),
        ) if not ok]
        return f"{name!r}: {'; '.join(bad)}" if bad else None
    from echo_core.operations.declaration import Operation

    if not isinstance(obj, Operation):
        return f"{name!r} is not an Operation ({type(obj).__name__})"
    if obj.name != name:
        return f"{name!r} is registered under another name than its own ({obj.name!r})"
    found = obj.problems()
    return f"{name!r}: {'; '.join(found)}" if found else None


def registration_problems(host: PluginHost) -> list[RegistrationProblem]:
    """Every registration problem of ``host``'s plugins, for ``plugins`` and ``doctor``:
    names taken twice in any registration hook, malformed operation declarations, and
    two operations claiming one CLI command, MCP tool or skill (each naming the plugins).
    Never raises."""
    from echo_core.registrations import RegistrationProblem

    problems = list(host.check_registrations({HOOK: declaration_problems}))
    found = host.registrations(HOOK)
    owners = {name: host.owner_of(HOOK, name) for name in found}
    valid = {n: op for n, op in found.items() if declaration_problems(n, op) is None}
    for name, entry in list(valid.items()):
        if isinstance(entry, OperationRef):  # the deep check: import it
            try:
                problem = declaration_problems(name, entry.load()) or entry.mismatch()
            except Exception as exc:  # noqa: BLE001 - an import error is the problem
                problem = f"{name!r}: cannot load {entry.module}.{entry.attr}: {exc!r}"
            if problem:
                problems.append(RegistrationProblem(
                    "invalid", HOOK, name, (owners.get(name, ""),),
                    f"{HOOK}: {problem} (plugin {owners.get(name, '')!r})"))
                del valid[name]
    for message in OperationRegistry(valid, owners).problems():
        plugins = tuple(sorted({o for n, o in owners.items() if f"operation {n!r}" in message}))
        problems.append(RegistrationProblem("duplicate", HOOK, "", plugins, message))
    return problems


class OperationRegistry:
    """Operations by name, in registration order, with the plugin that registered each.

    Read-only once built (``operations`` and ``owners`` are not to be changed); compared
    by them. The references it loads are kept (``load``).
    """

    __slots__ = ("_loaded", "operations", "owners")

    def __init__(self, operations: Mapping[str, Entry],
                 owners: Mapping[str, str] | None = None) -> None:
        self.operations = operations
        self.owners: Mapping[str, str] = {} if owners is None else owners
        self._loaded: dict[str, Operation[Any]] = {}

    def __eq__(self, other: object) -> bool:
        if type(other) is not OperationRegistry:
            return NotImplemented
        return (self.operations, self.owners) == (other.operations, other.owners)

    __hash__ = None  # type: ignore[assignment]  # its mappings are not hashable

    def __repr__(self) -> str:
        return f"OperationRegistry(operations={self.operations!r}, owners={self.owners!r})"

    @classmethod
    def from_host(cls, host: PluginHost) -> OperationRegistry:
        """The registry of ``host``'s plugins (cached on the host until a plugin is added
        or fails: a blocked plugin's operations are gone from the next registry).

        A broken registration never takes the other verbs down: a malformed declaration
        is left out, and of two operations claiming one name, CLI command, MCP tool or
        skill the first registered keeps it; ``plugins`` and ``doctor`` report each
        problem naming the plugins (``registration_problems``). With
        ``ECHO_STRICT_PLUGINS=1`` (``host.strict``) a problem is an ``EchoError`` (1)."""
        cached = getattr(host, "_operation_registry", None)
        if isinstance(cached, tuple) and cached[0] == host.generation:
            registry: OperationRegistry = cached[1]
            return registry
        found = host.registrations(HOOK)
        owners = {name: host.owner_of(HOOK, name) for name in found}
        registry = cls(dict(found), owners)
        problems = registry.problems()
        if problems and host.strict:
            raise EchoError("operations: " + "; ".join(problems) + ". Fix or disable the "
                            "plugin named (ECHO_DISABLE_PLUGINS=<plugin>).", ExitCode.FAILURE)
        if problems:
            registry = cls(registry.usable(), owners)
        host._operation_registry = (host.generation, registry)  # type: ignore[attr-defined]
        return registry

    def usable(self) -> dict[str, Entry]:
        """The well-formed operations, each CLI command, tool and skill name kept by the
        first operation claiming it."""
        kept: dict[str, Entry] = {}
        claimed: set[tuple[str, object]] = set()
        for name, op in self.operations.items():
            if declaration_problems(name, op) is not None:
                continue
            keys = {k for k in _claims(op) if k[1]}
            if keys & claimed:
                continue
            claimed |= keys
            kept[name] = op
        return kept

    def _owner(self, name: str) -> str:
        return self.owners.get(name) or "?"

    def problems(self) -> list[str]:
        """Every malformed declaration and every clash of CLI command, tool or skill name."""
        found: list[str] = []
        commands: dict[tuple[str, ...], str] = {}
        tools: dict[str, str] = {}
        skills: dict[str, str] = {}
        for name, op in self.operations.items():
            problem = declaration_problems(name, op)
            if problem:
                found.append(f"{problem} (plugin {self._owner(name)!r})")
                continue
            seen_by: dict[str, tuple[dict[Any, str], str]] = {
                "cli": (commands, "CLI command"), "mcp": (tools, "MCP tool"),
                "skill": (skills, "skill")}
            for surface, key in _claims(op):
                seen, what = seen_by[surface]
                if not key:
                    continue
                shown = " ".join(key) if isinstance(key, tuple) else key
                if key in seen:
                    other = seen[key]
                    found.append(f"{what} {shown!r} is declared by operation {other!r} "
                                 f"(plugin {self._owner(other)!r}) and operation {name!r} "
                                 f"(plugin {self._owner(name)!r})")
                else:
                    seen[key] = name
        return found

    def load(self, name: str) -> Operation[Any] | None:
        """The declaration of ``name`` (an ``OperationRef`` imported once), or None."""
        entry = self.operations.get(name)
        if entry is None or not isinstance(entry, OperationRef):
            return entry
        if name not in self._loaded:
            self._loaded[name] = entry.load()
        return self._loaded[name]

    def __iter__(self) -> Iterator[Operation[Any]]:
        """Every operation, loaded."""
        for name in self.operations:
            op = self.load(name)
            if op is not None:
                yield op

    def get(self, name: str) -> Operation[Any] | None:
        """The operation ``name`` (loaded), or None."""
        return self.load(name)

    def for_cli(self) -> list[Entry]:
        """Entries with a CLI surface, in registration order; references stay unloaded
        (the CLI builds their commands when they run)."""
        out: list[Entry] = []
        for entry in self.operations.values():
            if isinstance(entry, OperationRef):
                if entry.command:
                    out.append(entry)
            elif entry.cli is not None:
                out.append(entry)
        return out

    def for_mcp(self, profile: str = "full") -> list[Operation[Any]]:
        """Operations served over MCP in ``profile`` (``core``: only core ones)."""
        return [op for op in self if op.mcp is not None
                and (profile == "full" or op.profile == "core")]

    def by_tool(self, tool: str) -> Operation[Any] | None:
        """The operation behind MCP tool ``tool``, or None."""
        return next((op for op in self if op.tool_name == tool), None)

    def skills(self) -> list[tuple[Operation[Any], SkillSpec]]:
        """Every declared Claude Code skill with its operation, in registration order."""
        return [(op, skill) for op in self for skill in op.skills]


def _claims(entry: Entry) -> list[tuple[str, Any]]:
    """The names an entry claims: its CLI words, MCP tool and skills."""
    if isinstance(entry, OperationRef):
        skills = entry.skill_names
    else:
        skills = tuple(s.name for s in entry.skills)
    return [("cli", entry.command), ("mcp", entry.tool_name),
            *(("skill", name) for name in skills)]
