"""What a capture returns (SPEC §2.1 result fields)."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class CaptureResult:
    """SPEC §2.1 result fields."""

    path: str | None = None
    slug: str | None = None
    kind: str | None = None
    links_added: tuple[str, ...] = ()
    near_duplicates: tuple[dict[str, Any], ...] = ()
    candidates: tuple[dict[str, Any], ...] = ()
    aliases_learned: tuple[str, ...] = ()
    would_gate: bool = False
    changed: bool = True
    #: what this capture superseded: the old note's path, or the struck preference line
    superseded: str | None = None
    #: lines it contradicts (a contradiction stop), each with the ``supersedes`` answer
    contradictions: tuple[dict[str, str], ...] = ()
    #: the redaction rules that replaced or dropped text before the write (SPEC §2.1)
    redacted: tuple[str, ...] = ()
