"""The operation registry: every ``Operation`` the plugins register, checked once.

``OperationRegistry.from_host(host)`` collects ``register_operations``. A malformed
declaration, or two operations claiming one CLI command, MCP tool or skill name, is left
out (the first claimant keeps the name) and reported by ``plugins`` and ``doctor`` naming
the operations and their plugins (``registration_problems``); strict hosts refuse it. Surfaces ask for what they
serve: ``for_cli()``, ``for_mcp(profile)``, ``skills()``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.errors import EchoError, ExitCode
from echo_core.operations.declaration import Operation, SkillSpec

if TYPE_CHECKING:
    from echo_core.plugins import PluginHost
    from echo_core.registrations import RegistrationProblem

HOOK = "register_operations"


def declaration_problems(name: str, obj: object) -> str | None:
    """Why ``obj`` registered under ``name`` is not a usable operation (None when it is)."""
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
    for message in OperationRegistry(valid, owners).problems():
        plugins = tuple(sorted({o for n, o in owners.items() if f"operation {n!r}" in message}))
        problems.append(RegistrationProblem("duplicate", HOOK, "", plugins, message))
    return problems


@attrs.frozen
class OperationRegistry:
    """Operations by name, in registration order, with the plugin that registered each."""

    operations: Mapping[str, Operation[Any]]
    owners: Mapping[str, str] = attrs.field(factory=dict)

    @classmethod
    def from_host(cls, host: PluginHost) -> OperationRegistry:
        """The registry of ``host``'s plugins (cached on the host).

        A broken registration never takes the other verbs down: a malformed declaration
        is left out, and of two operations claiming one name, CLI command, MCP tool or
        skill the first registered keeps it; ``plugins`` and ``doctor`` report each
        problem naming the plugins (``registration_problems``). With
        ``ECHO_STRICT_PLUGINS=1`` (``host.strict``) a problem is an ``EchoError`` (1)."""
        cached = getattr(host, "_operation_registry", None)
        if isinstance(cached, OperationRegistry):
            return cached
        found = host.registrations(HOOK)
        owners = {name: host.owner_of(HOOK, name) for name in found}
        registry = cls(dict(found), owners)
        problems = registry.problems()
        if problems and host.strict:
            raise EchoError("operations: " + "; ".join(problems) + ". Fix or disable the "
                            "plugin named (ECHO_DISABLE_PLUGINS=<plugin>).", ExitCode.FAILURE)
        if problems:
            registry = cls(registry.usable(), owners)
        host._operation_registry = registry  # type: ignore[attr-defined]
        return registry

    def usable(self) -> dict[str, Operation[Any]]:
        """The well-formed operations, each CLI command, tool and skill name kept by the
        first operation claiming it."""
        kept: dict[str, Operation[Any]] = {}
        claimed: set[tuple[str, object]] = set()
        for name, op in self.operations.items():
            if declaration_problems(name, op) is not None:
                continue
            keys = {("cli", op.command), ("mcp", op.tool_name),
                    *(("skill", s.name) for s in op.skills)}
            keys = {k for k in keys if k[1]}
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
            keys: list[tuple[Any, dict[Any, str], str]] = [
                (op.command, commands, "CLI command"), (op.tool_name, tools, "MCP tool")]
            keys += [(skill.name, skills, "skill") for skill in op.skills]
            for key, seen, what in keys:
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

    def __iter__(self) -> Iterator[Operation[Any]]:
        return iter(self.operations.values())

    def get(self, name: str) -> Operation[Any] | None:
        """The operation ``name``, or None."""
        return self.operations.get(name)

    def for_cli(self) -> list[Operation[Any]]:
        """Operations with a CLI surface, in registration order."""
        return [op for op in self if op.cli is not None]

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
