"""The resumable state of ``reflect corpus``: what each transcript was and what it gave.

One JSON file (default ``<state dir>/reflect-corpus.json``)::

    {"format": 1, "projects_dir": "/home/ada/.claude/projects", "miner": "<sha256>",
     "transcripts": {"-home-ada-src-app/5f0c….jsonl":
                         {"size": 18211, "mtime_ns": 1767…, "sha256": "…",
                          "proposals": [{"title": …, "kind": …, …}, …]}, …}}

A transcript's entry is its stamp (size, modification time, content hash) and the
proposals mining it gave (``MinedProposal`` fields, before the merge across the corpus).
The corpus result is always the merge of the entries in path order, so it does not depend
on how many runs it took to fill them: a killed run loses at most the batch it was in,
and its transcripts are mined again, replacing (never adding to) what they gave.

``miner`` fingerprints the mining code (its source files): when the rules change every
transcript is mined again. A file that cannot be read as this format (torn by hand,
another version) is set aside as ``<name>.unreadable`` and the run starts over; the
result says so. ``save`` is atomic (temp file, fsync, rename).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.tempfiles import temp_name

if TYPE_CHECKING:
    from echo_core.ops.transcript_mining import MinedProposal

FORMAT = 1
STATE_FILE = "reflect-corpus.json"
#: The mining code (next to this module); any change to it changes ``miner_fingerprint``.
MINER_MODULES = "transcript_*.py"


@attrs.frozen
class TranscriptEntry:
    """One mined transcript: its stamp and the proposals it gave."""

    size: int
    mtime_ns: int
    sha256: str
    proposals: tuple[MinedProposal, ...] = ()

    def same_stamp(self, size: int, mtime_ns: int) -> bool:
        """Whether a file of ``size`` bytes modified at ``mtime_ns`` is, by its stat, this
        one (the content hash decides when it is not)."""
        return self.size == size and self.mtime_ns == mtime_ns


@attrs.define
class CorpusState:
    """The state file's content (mutable: a run fills it batch by batch)."""

    projects_dir: str
    miner: str
    transcripts: dict[str, TranscriptEntry] = attrs.field(factory=dict)
    #: why the file on disk was not used ("" when it was, or there was none)
    problem: str = ""


def miner_fingerprint() -> str:
    """The sha256 of the mining code's source files (``MINER_MODULES`` next to this
    module, plus ``echo_core/redaction.py``)."""
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in [*sorted(here.glob(MINER_MODULES)), here.parent / "redaction.py"]:
        try:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        except OSError:
            digest.update(path.name.encode() + b"\0-\0")
    return digest.hexdigest()


def proposal_to_json(proposal: MinedProposal) -> dict[str, Any]:
    """A ``MinedProposal`` as plain JSON (tuples as lists)."""
    out: dict[str, Any] = {}
    for field in attrs.fields(type(proposal)):
        value = getattr(proposal, field.name)
        out[field.name] = list(value) if isinstance(value, tuple) else value
    return out


def _strings(raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = raw.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError(f"proposal {key} must be a list of strings")
    return tuple(value)


def _text(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str):
        raise TypeError(f"proposal {key} must be a string")
    return value


def proposal_from_json(raw: Any) -> MinedProposal:
    """The ``MinedProposal`` ``proposal_to_json`` wrote; ``ValueError`` / ``TypeError``
    when ``raw`` is not one (a missing or unknown field, a value of the wrong type)."""
    from echo_core.ops.transcript_mining import MinedProposal

    if not isinstance(raw, Mapping):
        raise TypeError("a proposal must be an object")
    names = {f.name for f in attrs.fields(MinedProposal)}
    if set(raw) != names:
        raise ValueError(f"proposal fields {sorted(raw)} are not {sorted(names)}")
    kind, confidence, occurrences = raw["kind"], raw["confidence"], raw["occurrences"]
    if kind is not None and not isinstance(kind, str):
        raise TypeError("proposal kind must be a string or null")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)):
        raise TypeError("proposal confidence must be a number")
    if isinstance(occurrences, bool) or not isinstance(occurrences, int) or occurrences < 1:
        raise ValueError("proposal occurrences must be a positive integer")
    return MinedProposal(
        title=_text(raw, "title"), kind=kind, body=_text(raw, "body"),
        confidence=float(confidence), category=_text(raw, "category"),
        rationale=_text(raw, "rationale"), excerpts=_strings(raw, "excerpts"),
        sessions=_strings(raw, "sessions"), turns=_strings(raw, "turns"),
        occurrences=occurrences)


def _entry_from_json(raw: Any) -> TranscriptEntry:
    if not isinstance(raw, Mapping):
        raise TypeError("a transcript entry must be an object")
    size, mtime, sha, proposals = (raw.get("size"), raw.get("mtime_ns"), raw.get("sha256"),
                                   raw.get("proposals"))
    if (not isinstance(size, int) or not isinstance(mtime, int) or not isinstance(sha, str)
            or not isinstance(proposals, list)):
        raise TypeError("a transcript entry needs size, mtime_ns, sha256 and proposals")
    return TranscriptEntry(size, mtime, sha, tuple(proposal_from_json(p) for p in proposals))


def load_state(path: Path, projects_dir: str, miner: str) -> CorpusState:
    """The state in ``path`` for ``projects_dir`` mined by ``miner``; an empty state
    (``problem`` saying why, when there was a file) when there is none, it is unreadable
    (then renamed ``<name>.unreadable``), for another projects folder or another miner."""
    fresh = CorpusState(projects_dir, miner)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return fresh
    except (OSError, UnicodeDecodeError) as exc:
        fresh.problem = f"state file {path} unreadable ({exc}): starting over"
        return fresh
    try:
        raw = json.loads(text)
        if not isinstance(raw, dict) or raw.get("format") != FORMAT:
            raise ValueError(f"not format {FORMAT}")
        transcripts = raw.get("transcripts")
        if not isinstance(transcripts, dict):
            raise TypeError("transcripts must be an object")
        entries = {str(k): _entry_from_json(v) for k, v in transcripts.items()}
    except (ValueError, TypeError) as exc:
        aside = path.with_name(path.name + ".unreadable")
        try:
            os.replace(path, aside)
        except OSError:
            aside = path
        fresh.problem = f"state file {path} is not a corpus state ({exc}); kept as {aside}, starting over"
        return fresh
    if raw.get("projects_dir") != projects_dir:
        fresh.problem = (f"state file {path} was for {raw.get('projects_dir')!r}: starting "
                         f"over for {projects_dir}")
        return fresh
    if raw.get("miner") != miner:
        fresh.problem = "the mining rules changed since the state file was written: mining every transcript again"
        return fresh
    return CorpusState(projects_dir, miner, entries)


def save_state(path: Path, state: CorpusState) -> None:
    """Write ``state`` to ``path`` atomically (temp file in the same folder, fsync,
    rename); the folder is created when missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"format": FORMAT, "projects_dir": state.projects_dir, "miner": state.miner,
            "transcripts": {
                rel: {"size": e.size, "mtime_ns": e.mtime_ns, "sha256": e.sha256,
                      "proposals": [proposal_to_json(p) for p in e.proposals]}
                for rel, e in sorted(state.transcripts.items())}}
    tmp = path.with_name(temp_name(path.name))
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))  # C encoder
        with open(tmp, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
