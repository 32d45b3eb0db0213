"""The change numbers of a backend with a change log, and the one this state dir applied
(``ops.change_feed`` catches up from it; the fast sweep records where it started).

A backend numbers its changes when it offers ``last_change()`` and
``changes_since(seq, limit)`` (duck-typed: not part of ``Storage``). The number last
applied is the manifest's ``change_seq`` fact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from echo_core.vault_manifest import VaultManifest

#: The manifest fact holding the last change number this state dir applied.
SEQ_KEY = "change_seq"


def has_change_log(storage: Any) -> bool:
    """Whether ``storage`` numbers its changes (``last_change`` and ``changes_since``)."""
    return callable(getattr(storage, "last_change", None)) and callable(
        getattr(storage, "changes_since", None))


def change_position(storage: Any) -> int | None:
    """The storage's last change number, or None when it keeps no change log."""
    return int(storage.last_change()) if has_change_log(storage) else None


def applied_change(manifest: VaultManifest) -> int | None:
    """The last change number recorded as applied here (None: none recorded)."""
    raw = manifest.get(SEQ_KEY)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def record_change(manifest: VaultManifest, seq: int, *, forward_only: bool = True) -> None:
    """Record ``seq`` as applied (with ``forward_only``, never below what is recorded:
    two processes catching up at once may finish in either order)."""
    if forward_only:
        current = applied_change(manifest)
        if current is not None and current >= seq:
            return
    manifest.set(**{SEQ_KEY: str(seq)})
