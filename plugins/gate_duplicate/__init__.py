"""gate_duplicate: stops a capture that would duplicate an existing entity (SPEC §2.2).

Disabling this plugin disables the duplicate gate and nothing else.
"""

from __future__ import annotations

from typing import Any

from echo_core import hookimpl


@hookimpl
def gate_capture(request: Any, ctx: Any) -> Any:
    """Stop when a same-kind entity's name scores >= 0.8 (see ``duplicate_gate``)."""
    from plugins.gate_duplicate.duplicate_gate import check_duplicate

    return check_duplicate(request, ctx)
