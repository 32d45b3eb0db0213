"""``scope show`` and ``scope set``, declared once (SPEC §4.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from echo_core.models import Envelope
from echo_core.operations import CliParam, CliSurface, McpSurface, Operation, lazy_type, param
from echo_core.text_source import read_text_source
from echo_core.verbs.groups import SCOPE_HELP as GROUP_HELP


@attrs.frozen(kw_only=True)
class ShowScopeParams:
    """``scope show`` takes nothing."""


def run_show(ctx: Any, p: ShowScopeParams) -> Envelope[Any]:
    """``ops.scope.show_scope``."""
    from echo_core.ops.scope import show_scope

    return show_scope(ctx)


SCOPE_SHOW = Operation(
    "scope-show", "Print the scope, when it was set, and how many sessions were logged since.",
    ("Show the current scope: what the agent is working on now. Use it to check the "
     "focus before planning work. Returns the scope text, scope_updated and how many "
     "sessions were logged since."),
    ShowScopeParams, run_show, lazy_type("echo_core.ops.scope", "ScopeResult"), mcp=McpSurface(tool="echo_get_scope"),
    cli=CliSurface(command=("scope", "show"), group_help=GROUP_HELP),
)


@attrs.frozen(kw_only=True)
class SetScopeParams:
    """What ``scope set`` takes."""

    scope: str = param(help="The new focus, e.g. 'Ship the recall index; then the MCP "
                       "server' (on the CLI, - reads it from stdin).", min_length=1,
                       max_length=2000, cli=CliParam(positional=True, metavar="TEXT"))


def _stdin_scope(values: Mapping[str, Any]) -> Mapping[str, Any]:
    out = dict(values)
    if out.get("scope") == "-":
        out["scope"] = read_text_source("-", "TEXT (stdin)")
    return out


def run_set(ctx: Any, p: SetScopeParams) -> Envelope[Any]:
    """``ops.scope.set_scope``."""
    from echo_core.ops.scope import set_scope

    return set_scope(ctx, p.scope)


SCOPE_SET = Operation(
    "scope-set", "Replace the scope with TEXT (use - to read it from stdin).",
    ("Replace the current scope (the previous one is kept, dated, in Scope History). Use "
     "it when the focus of work changes. Returns the new scope and the previous one."),
    SetScopeParams, run_set, lazy_type("echo_core.ops.scope", "ScopeResult"), access="write", mcp=McpSurface(tool="echo_set_scope"),
    cli=CliSurface(command=("scope", "set"), prepare=_stdin_scope, literal_args=True,
                   group_help=GROUP_HELP, help="""Replace the scope with TEXT (use - to read it from stdin).

Example: echo-memory scope set "Ship the recall index; then the MCP server\""""),
)
