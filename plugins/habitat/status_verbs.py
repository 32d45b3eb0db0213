"""``habitat status`` (MCP ``echo_habitat_status``), declared once; the work is in
``status``."""

from __future__ import annotations

from typing import Any

import attrs

from echo_core import CliSurface, Envelope, McpSurface, Operation, lazy_type, param

__all__ = ["STATUS", "StatusParams"]


@attrs.frozen(kw_only=True)
class StatusParams:
    """What ``habitat status`` takes."""

    hours: int = param(24, help="An agent is active when it recorded something in the last "
                       "this many hours.", ge=1, le=24 * 90)


def run_status(ctx: Any, p: StatusParams) -> Envelope[Any]:
    """``status.habitat_status``."""
    from plugins.habitat.status import habitat_status

    return habitat_status(ctx, hours=p.hours)


def _render(env: Envelope[Any]) -> str:
    from plugins.habitat.status import render_status

    return render_status(env)


STATUS = Operation(
    "habitat-status", "Show the habitat: active agents, pending approvals, patterns, last digest.",
    ("Use it to see the habitat at a glance before deciding what to review. Returns the "
     "agents active in the last hours (sessions, records, failed calls), how many "
     "learnings wait for approval, failure patterns per status with the actionable ones, "
     "and the last daily digest. Reads only."),
    StatusParams, run_status, lazy_type("plugins.habitat.status", "StatusResult"),
    render=_render, mcp=McpSurface(tool="echo_habitat_status"),
    cli=CliSurface(command=("habitat", "status")),
)
