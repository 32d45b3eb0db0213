"""Writing what a corpus run found: each merged proposal through ``reflect``'s apply
(``echo_core.ops.reflect``: validation, confidence routing, capture and its duplicate
gate, content-derived operation ids), at most once per vault.

The applied ledger (``<state file stem>.applied.jsonl`` next to the state file) gets one
JSON line per proposal written, ``{"vault": <identity>, "key": <MinedProposal.key()>,
"title", "action", "path"}``, appended and fsynced right after its capture. A proposal
whose key the ledger holds for this vault is not written again (``already``), even when
later transcripts added occurrences to it, so re-applying, or resuming an apply that was
killed, writes nothing twice. A kill between a capture and its ledger line leaves that
one proposal to be applied again: ``reflect`` finds it landed (the same operation id, or
its line already in the inbox) and reports ``unchanged``, writing nothing. A torn last
line of the ledger is ignored.

Outcomes per proposal: reflect's (``created``, ``updated``, ``superseded``,
``unchanged``, ``inbox``, ``queued``: recorded; ``gated``, ``contradiction``,
``error``: reported with reflect's message, not recorded, tried again next time),
``invalid`` (a proposal reflect rejects: reported) or ``already``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.errors import EchoError, ExitCode

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.ops.transcript_mining import MinedProposal

__all__ = ["AppliedItem", "apply_proposals", "ledger_keys", "ledger_path"]

#: reflect's outcomes that wrote the proposal (or found it written, or queued it).
_RECORDED = frozenset({"created", "updated", "superseded", "unchanged", "inbox", "queued"})


@attrs.frozen
class AppliedItem:
    """What became of one merged proposal."""

    title: str
    category: str
    outcome: str      # see the module docstring
    path: str = ""
    detail: str = ""


def ledger_path(state_path: str | os.PathLike[str]) -> Path:
    """The applied ledger next to ``state_path`` (``x.json`` -> ``x.applied.jsonl``)."""
    state = Path(state_path)
    return state.with_name(state.stem + ".applied.jsonl")


def ledger_keys(path: Path, vault: str) -> set[str]:
    """The keys the ledger at ``path`` records for ``vault`` (empty when there is none;
    unreadable lines ignored)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return set()
    keys: set[str] = set()
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("vault") == vault \
                and isinstance(record.get("key"), str):
            keys.add(record["key"])
    return keys


def _record(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    with open(path, "ab") as out:
        out.write(line.encode("utf-8"))
        out.flush()
        os.fsync(out.fileno())


def _origin(mined: MinedProposal) -> Any:
    from echo_core.ops.reflect import ProposalOrigin

    return ProposalOrigin(mined.rationale, mined.category, mined.excerpts, mined.sessions,
                          mined.turns, mined.occurrences)


def _apply_one(ctx: EchoContext, mined: MinedProposal) -> AppliedItem:
    from echo_core.ops.reflect import reflect

    try:
        envelope = reflect(ctx, [mined.to_proposal()], apply=True, origins=[_origin(mined)])
    except EchoError as exc:
        if exc.code != ExitCode.USAGE:
            raise
        return AppliedItem(mined.title, mined.category, "invalid", detail=exc.message)
    item = envelope.data.items[0]
    detail = "" if item.classification in _RECORDED else item.detail
    return AppliedItem(mined.title, mined.category, item.classification, item.path or "",
                       detail)


def apply_proposals(ctx: EchoContext, proposals: Iterable[MinedProposal],
                    ledger: Path) -> list[AppliedItem]:
    """Write each of ``proposals`` not yet in ``ledger`` for this vault (module
    docstring); their outcomes, in order. Errors other than an invalid proposal (the
    vault lock held, the vault not initialised) propagate; what was written before them
    is in the ledger."""
    vault = ctx.storage.identity
    done = ledger_keys(ledger, vault)
    items: list[AppliedItem] = []
    todo = list(proposals)
    for mined in todo:
        key = mined.key()
        if key in done:
            items.append(AppliedItem(mined.title, mined.category, "already"))
        else:
            item = _apply_one(ctx, mined)
            if item.outcome in _RECORDED:
                _record(ledger, {"vault": vault, "key": key, "title": mined.title,
                                 "action": item.outcome, "path": item.path})
                done.add(key)
            items.append(item)
    return items
