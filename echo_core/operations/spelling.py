"""Messages that name an argument the way the caller types it (issue 13, item 15).

A message written once in the core ("nothing written; run again with --apply") is read
on the command line, by a model over MCP, and by Python code calling ``invoke``. Each
surface runs an operation (and renders its result) inside ``spelled_for(surface, op)``;
then ``spell("apply")`` gives ``--apply`` on the CLI, ``apply: true`` over MCP and
``apply=True`` in Python, from the operation's own declaration (a CLI ``flag`` override
such as restore's ``--yes`` included). ``current_surface()`` lets a message choose
between whole phrasings (a CLI command line vs an MCP tool call).

Outside any surface (tests, scripts) the spelling is Python's.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any, Literal

import attrs

from echo_core.operations.params import fields_of

Surface = Literal["cli", "mcp", "core"]


@attrs.frozen
class _Caller:
    surface: Surface
    params: type | None


_CALLER: ContextVar[_Caller] = ContextVar("echo_caller", default=_Caller("core", None))


@contextlib.contextmanager
def spelled_for(surface: Surface, operation: Any = None) -> Iterator[None]:
    """Within the block, messages spell arguments for ``surface`` (the options of
    ``operation``'s parameter class, when given)."""
    params = getattr(operation, "params", None)
    token = _CALLER.set(_Caller(surface, params if isinstance(params, type) else None))
    try:
        yield
    finally:
        _CALLER.reset(token)


def current_surface() -> Surface:
    """Which surface the running operation was called from (``"core"`` when none)."""
    return _CALLER.get().surface


def spell(name: str, value: Any = True) -> str:
    """Argument ``name`` set to ``value`` as the current caller writes it: ``--merge-into
    ada`` / ``--force`` (CLI), ``merge_into: "ada"`` / ``force: true`` (MCP),
    ``merge_into='ada'`` (Python). A name the operation does not declare keeps its field
    spelling on the CLI (``--name``)."""
    caller = _CALLER.get()
    if caller.surface == "mcp":
        return f"{name}: {json.dumps(value, ensure_ascii=False)}"
    if caller.surface == "core":
        return f"{name}={value!r}"
    flag, negate = "--" + name.replace("_", "-"), False
    for info in fields_of(caller.params) if caller.params is not None else ():
        cli = info.spec.cli
        if info.name == name and cli is not None:
            flag, negate = cli.flag or flag, cli.negate
    if isinstance(value, bool):
        return flag if value != negate else f"(without {flag})"
    import shlex  # only a message with a CLI value needs it

    return f"{flag} {shlex.quote(str(value))}"
