"""What the prose renderings of the preview-then-apply verbs share (triage, inbox review,
reflect): the header saying whether anything was written, each item's lines, the
summary."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from echo_core.models import Envelope

__all__ = ["PREVIEW_HEADER", "outcome_lines"]

PREVIEW_HEADER = "Preview (nothing written):"


def outcome_lines(env: Envelope[Any], render_item: Callable[[Any], list[str]]) -> list[str]:
    """"Applied:" or ``PREVIEW_HEADER`` (``env.data.applied``), ``render_item`` of each of
    ``env.data.items``, then the envelope's message."""
    data = env.data
    lines = ["Applied:" if data.applied else PREVIEW_HEADER]
    for item in data.items:
        lines += render_item(item)
    lines.append(env.message)
    return lines
