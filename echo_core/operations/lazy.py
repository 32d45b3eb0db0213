"""``OperationRef``: an operation registered by reference, imported on first use.

Start-up cost is what every verb pays (``--help``, each Claude Code hook call), and
building an operation's parameter classes costs about a millisecond each. A plugin with
many verbs may therefore register an ``OperationRef``: the few facts a surface needs to
list and route the verb (its name, CLI words, MCP tool name, skill names, one-line
summary) and where the declaration lives. The registry hands out the real ``Operation``
(importing its module) only when a surface needs more: the CLI builds a command when that
command runs or shows its help, the MCP server and the skills build load them all. A test
of the plugin should check that each reference matches what it loads (``mismatch``).

``OperationRef`` is a ``NamedTuple``, not attrs (house style's exception for the start-up
path, issue 15): the built-in verbs' index builds one per verb at every start-up, and
importing attrs costs ~10 ms of a ~75 ms ``--help``. It is immutable and compared by value,
as the attrs class was.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # imported by load(): listing a reference needs no declaration class
    from echo_core.operations.declaration import Operation


class OperationRef(NamedTuple):
    """Where operation ``name`` is declared (``module``'s attribute ``attr``), with what
    the CLI needs to list it and the registry needs to check clashes without importing."""

    name: str
    module: str
    attr: str
    summary: str
    command: tuple[str, ...] = ()
    tool_name: str = ""
    skill_names: tuple[str, ...] = ()
    group_help: str = ""

    def load(self) -> Operation[Any]:
        """The declaration (imported on first call; Python caches the module)."""
        from echo_core.operations.declaration import Operation

        op = getattr(importlib.import_module(self.module), self.attr)
        if not isinstance(op, Operation):
            raise TypeError(f"{self.module}.{self.attr} is not an Operation")
        return op

    @classmethod
    def of(cls, op: Operation[Any], module: str, attr: str) -> OperationRef:
        """The reference that describes ``op`` (for writing and checking an index)."""
        group_help = op.cli.group_help if op.cli is not None and len(op.command) > 1 else ""
        return cls(op.name, module, attr, op.summary, op.command, op.tool_name,
                   tuple(s.name for s in op.skills), group_help)

    def mismatch(self) -> str | None:
        """What differs between this reference and the declaration it loads (None when
        they agree)."""
        loaded = OperationRef.of(self.load(), self.module, self.attr)
        if loaded == self:
            return None
        diffs = [f"{field}: {mine!r} != {theirs!r}"
                 for field, mine, theirs in zip(self._fields, self, loaded, strict=True)
                 if mine != theirs]
        return f"{self.module}.{self.attr}: " + "; ".join(diffs)
