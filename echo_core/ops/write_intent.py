"""Crash-consistent multi-note writes: stage, record the intent, write, commit, forget.

A capture changes several files (its note, the notes it links, the daily note) and then
records the entity index entry. Killed half-way, it used to leave a note the index did
not know, and a queued replay of a capture that had partly landed wrote its fact twice.
Now such an operation:

1. stages every write in a ``StagedVault`` (reads see the staged texts) and computes the
   entity entries from the final texts;
2. keeps the texts it replaces in the note history (a failure here writes nothing);
3. writes an *intent* — operation id, each file's final text and the SHA-256 of the
   text it replaces, the entity entries — to ``<state_dir>/pending-writes/<op_id>.json``;
4. writes the files, then appends the entity entries to the index journal with the
   operation id on the last line: the commit point (``EntityStore.has_op``);
5. removes the intent.

``recover_pending`` (run under the vault lock before a capture or a flush replays
anything) finishes every intent left by a killed or interrupted process: a file already
holding its final text is left alone, one still holding the replaced text is written, one
changed by someone else meanwhile is left as it is (and reported); then the entries and
the operation id are committed. So an operation either never happened or happens once,
and a queued replay of one that committed is recognised by its id and skipped.

A person editing a note while an operation runs takes no lock: ``commit`` writes each
file only while it still holds the text the operation planned from
(``Vault.replace_note``: checked just before the storage's rename where it can), and one
that no longer does raises ``EditedMeanwhile`` after putting back what it had written,
so the edit is never overwritten; the operation plans again from the new text
(``capture`` does, a few times) or reports it.

The intent is written without fsync: it guards against killed processes. After a power
cut a note can survive without its intent; capture then adopts that unindexed note
instead of creating a ``-2`` duplicate (``ops.capture``).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from echo_core import digests
from echo_core.entities import entity_from_json, entity_to_json
from echo_core.errors import EchoError, EditedMeanwhile, NotConfiguredError
from echo_core.lazy_log import lazy_logger
from echo_core.models import Entity
from echo_core.protocols import BackendUnavailable, Storage
from echo_core.tempfiles import sweep_stale, temp_name

if TYPE_CHECKING:
    from echo_core.context import EchoContext

INTENT_DIR = "pending-writes"
log = lazy_logger("echo_memory")


def new_op_id() -> str:
    """A fresh operation id (16 random hex digits; ``os.urandom``: ``uuid`` costs a cold
    capture its import)."""
    return os.urandom(8).hex()


def text_sha(text: str | None) -> str | None:
    """SHA-256 of a text (None for an absent file)."""
    return None if text is None else digests.sha256(text.encode("utf-8")).hexdigest()


@attrs.frozen
class PlannedWrite:
    """One file of an operation: its final text and the text it replaces (None: absent)."""

    path: str
    text: str
    prior: str | None
    keep_history: bool = True


class StagedStorage:
    """A storage view in which staged writes are visible to ``read`` and ``exists``;
    every other method is the real storage's."""

    def __init__(self, storage: Storage, staged: dict[str, PlannedWrite]) -> None:
        self._storage = storage
        self._staged = staged

    def read(self, path: str) -> str:
        planned = self._staged.get(path)
        return planned.text if planned is not None else self._storage.read(path)

    def exists(self, path: str) -> bool:
        return path in self._staged or self._storage.exists(path)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._storage, name)


class StagedVault:
    """Stands in for ``Vault`` while an operation plans its writes: ``write_note`` stages
    (the last text staged for a path wins), ``storage`` reads through the stage."""

    def __init__(self, ctx: EchoContext) -> None:
        self._ctx = ctx
        self.planned: dict[str, PlannedWrite] = {}
        self.storage = StagedStorage(ctx.vault.storage, self.planned)
        self.manifest = ctx.vault.manifest

    def write_note(self, path: str, text: str, *, prior: str | None = None,
                   keep_history: bool = True) -> None:
        """Stage ``text`` for ``path``; ``prior`` is the current text when the caller read
        it (otherwise it is read here, once per path)."""
        if path not in self.planned and prior is None:
            prior = self._current(path)
        self.update_note(path, text, prior, keep_history=keep_history)

    def update_note(self, path: str, text: str, prior: str | None, *,
                    keep_history: bool = True) -> None:
        """Stage ``text`` for ``path``, read as ``prior`` (None: absent) when the stage
        holds nothing for it yet: ``commit`` writes it only while the note still holds
        what was first read of it (so a staged update never raises ``EditedMeanwhile``
        here; ``commit`` does)."""
        earlier = self.planned.get(path)
        if earlier is not None:
            prior, keep_history = earlier.prior, earlier.keep_history or keep_history
        self.planned[path] = PlannedWrite(path, text, prior, keep_history)

    def _current(self, path: str) -> str | None:
        return self._ctx.vault.text_or_none(path)


def _intent_dir(ctx: EchoContext) -> Path:
    return ctx.state_dir / INTENT_DIR


def _intent_json(op_id: str, writes: Sequence[PlannedWrite], entities: Sequence[Entity]) -> str:
    return json.dumps({
        "op_id": op_id,
        "writes": [{"path": w.path, "text": w.text, "prior_sha": text_sha(w.prior)}
                   for w in writes],
        "entities": [{"slug": e.slug, **entity_to_json(e)} for e in entities],
    }, ensure_ascii=False)


def _save_intent(ctx: EchoContext, op_id: str, data: str) -> Path:
    folder = _intent_dir(ctx)
    try:
        folder.mkdir(exist_ok=True)
        target = folder / f"{op_id}.json"
        tmp = folder / temp_name(target.name)
        tmp.write_text(data, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise NotConfiguredError(
            f"cannot record the write intent in {folder} ({exc.strerror or exc}); nothing "
            "was written. Make the state dir writable or point ECHO_STATE_DIR at a writable "
            "folder") from None
    return target


def commit(ctx: EchoContext, stage: StagedVault, entities: Sequence[Entity], op_id: str) -> None:
    """Carry out a staged operation (steps 2-5 of the module docstring). The caller holds
    the vault lock. ``BackendUnavailable`` part-way leaves the intent for
    ``recover_pending``; an ``EchoError`` before the intent is saved writes nothing."""
    writes = [w for w in stage.planned.values() if w.text != w.prior]
    for w in writes:
        if w.keep_history and w.prior is not None:
            ctx.keep_prior_text(w.path, w.prior)
    intent = _save_intent(ctx, op_id, _intent_json(op_id, writes, entities))
    done: list[PlannedWrite] = []
    try:
        for w in writes:
            if not ctx.vault.replace_note(w.path, w.text, w.prior):
                raise EditedMeanwhile(w.path)
            done.append(w)
    except BackendUnavailable:  # unreachable: the intent stays for ``recover_pending``
        raise
    except EchoError:  # refused or edited meanwhile: undo what landed, nothing half-done
        _roll_back(ctx, done)
        _forget(intent)
        raise
    ctx.entities.record(puts=list(entities), op_id=op_id)
    _forget(intent)


def _roll_back(ctx: EchoContext, done: Sequence[PlannedWrite]) -> None:
    """Put back what the operation wrote, file by file, unless a person has edited the
    file since (their text is kept; the next freshness check indexes it)."""
    for w in reversed(done):
        if w.prior is not None:
            ctx.vault.replace_note(w.path, w.prior, w.text)
        elif ctx.vault.text_or_none(w.path) == w.text:
            ctx.vault.delete_note(w.path)


def _forget(intent: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(intent)


@attrs.frozen
class Recovered:
    """What ``recover_pending`` finished: operation ids, and files it left alone because
    someone changed them after the operation was interrupted."""

    op_ids: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()


def pending_intents(ctx: EchoContext, suffixes: tuple[str, ...] = (".json",)) -> int:
    """How many interrupted operations wait for ``recover_pending`` (with ``suffixes``
    ``(".failed", ".bad")``: how many it set aside)."""
    try:
        return sum(1 for n in os.listdir(_intent_dir(ctx))
                   if n.endswith(suffixes) and not n.startswith("."))
    except FileNotFoundError:
        return 0


def recover_pending(ctx: EchoContext) -> Recovered:
    """Finish every operation interrupted after its intent was saved (caller holds the
    vault lock). Cheap when there is none (one folder listing). ``BackendUnavailable``
    propagates and leaves the rest for next time; an unreadable intent (damaged by hand:
    a torn one never gets renamed into place) is moved aside as ``.bad``, one whose
    writes are refused (``EchoError``) as ``.failed``, so no intent blocks later writes."""
    folder = _intent_dir(ctx)
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return Recovered()
    sweep_stale(folder)
    done: list[str] = []
    conflicts: list[str] = []
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        path = folder / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            op_id = str(data["op_id"])
            writes = [(str(w["path"]), str(w["text"]), w.get("prior_sha")) for w in data["writes"]]
            entities = [entity_from_json(str(e["slug"]), e) for e in data["entities"]]
        except (OSError, ValueError, KeyError, TypeError, EchoError):
            log.warning("write intent %s is unreadable; moved aside", path)
            with contextlib.suppress(OSError):
                os.replace(path, path.with_suffix(".bad"))
            continue
        try:
            if not ctx.entity_names.has_op(op_id):
                left = _finish_writes(ctx, writes)
                conflicts += left
                _record_finished(ctx, entities, left, op_id)
        except BackendUnavailable:  # unreachable again: the intent stays for next time
            raise
        except EchoError as refused:  # this intent cannot be finished: never block the rest
            log.warning("write intent %s cannot be finished (%s); moved aside", path, refused)
            with contextlib.suppress(OSError):
                os.replace(path, path.with_suffix(".failed"))
            continue
        _forget(path)
        done.append(op_id)
    return Recovered(tuple(done), tuple(conflicts))


def _record_finished(ctx: EchoContext, entities: Sequence[Entity], left: Sequence[str],
                     op_id: str) -> None:
    """Commit the intent's planned entities, but not one whose note was left as a person
    changed it (``left``): the index takes that note as it is now instead (``sync_paths``),
    so the planned title never names a note a person wrote at that path. With anything
    left, ``op_id`` is not marked done: when the operation also waits in the outbox (it
    was queued when the vault went away mid-write), its replay then runs again, planned
    from the notes as they are, instead of being skipped as landed (its lines were lost:
    the agent-log line, an update's body). What recovery already wrote is not doubled by
    that replay (appends skip a line already there; an update skips a body it holds)."""
    skipped = set(left)
    ctx.entities.record(puts=[e for e in entities if e.path not in skipped],
                        op_id=None if skipped else op_id)
    if skipped:
        from echo_core.ops.index_sync import sync_paths

        sync_paths(ctx, sorted(skipped))


def _finish_writes(ctx: EchoContext, writes: Sequence[tuple[str, str, str | None]]) -> list[str]:
    conflicts = []
    for path, text, prior_sha in writes:
        current = ctx.vault.text_or_none(path)
        if current == text:
            continue
        if text_sha(current) == prior_sha and ctx.vault.replace_note(path, text, current):
            continue
        log.warning("recovering an interrupted write: %s changed meanwhile; left as is", path)
        conflicts.append(path)
    return conflicts
