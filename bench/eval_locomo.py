"""LoCoMo conversations as recall vaults (see ``shared/bench/README.md``).

``load_conversation(path)`` reads one conversation file into ``Turn``s and ``QA``s, with
the evidence ids normalised ("D8:6; D9:17" -> two ids, "D:11:26" -> "D11:26", "D30:05" ->
"D30:5") and every id that cannot be normalised or names no turn counted, never raised.
``write_vault(conv, box, layout)`` turns every dialog turn into one note and rebuilds the
recall index once; ``NoteLayout`` says what a note holds.

The data is read from the path given on the command line; nothing of it is copied here.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

#: One well-formed dialog id inside a messy evidence string ("D8:6", "D:11:26", "D30:05").
_DIA = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)
_SEPARATORS = re.compile(r"[\s;,]+")
_SESSION = re.compile(r"session_(\d+)$")
#: The day every LoCoMo note is dated and read on: freshness is equal for all turns.
PINNED_DAY = "2026-03-01"
#: Categories scored (5, adversarial, has no evidence to retrieve).
CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


@attrs.frozen
class Turn:
    """One dialog turn with its session's date."""

    dia_id: str
    session: int
    index: int
    speaker: str
    text: str
    caption: str = ""
    when: str = ""  # the session's date_time as written ("1:56 pm on 8 May, 2023")

    @property
    def day(self) -> str:
        """The session date as "8 May 2023" (the raw ``when`` when it does not parse)."""
        parsed = parse_when(self.when)
        return f"{parsed.day} {parsed:%B %Y}" if parsed else self.when


@attrs.frozen
class QA:
    """A question, its category and its (normalised, existing) evidence turn ids."""

    question: str
    category: int
    evidence: tuple[str, ...]


@attrs.frozen
class Conversation:
    """A loaded conversation: its turns, its questions and the evidence-id problems met."""

    name: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    qas: tuple[QA, ...]
    issues: Mapping[str, int]

    def turn_ids(self) -> set[str]:
        return {t.dia_id for t in self.turns}


def parse_when(when: str) -> _dt.datetime | None:
    """"1:56 pm on 8 May, 2023" -> datetime (None when it does not parse)."""
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %d %B %Y"):
        try:
            return _dt.datetime.strptime(when.strip(), fmt)
        except ValueError:
            continue
    return None


def normalise_evidence(raw: Any) -> tuple[list[str], int, int, int]:
    """Dialog ids in ``raw`` (a list of strings, or one string): ``(ids, split, reformatted,
    unparseable)``: how many items held several ids, how many ids were re-spelled, and how
    many leftover fragments were not ids at all. Never raises."""
    items = raw if isinstance(raw, list) else [raw]
    ids: list[str] = []
    split = reformatted = unparseable = 0
    for item in items:
        text = "" if item is None else str(item)
        found = list(_DIA.finditer(text))
        if len(found) > 1:
            split += 1
        for match in found:
            canonical = f"D{int(match.group(1))}:{int(match.group(2))}"
            if canonical != match.group(0):
                reformatted += 1
            if canonical not in ids:
                ids.append(canonical)
        leftover = _SEPARATORS.sub("", _DIA.sub("", text))
        if leftover or not found:
            unparseable += 1
    return ids, split, reformatted, unparseable


def load_conversation(path: Path) -> Conversation:
    """Read one LoCoMo conversation file (tolerant of missing or odd fields)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    conv = data.get("conversation", data) if isinstance(data, dict) else {}
    turns: list[Turn] = []
    for key in sorted((k for k in conv if _SESSION.match(k)), key=lambda k: int(k.split("_")[1])):
        session = int(key.split("_")[1])
        when = str(conv.get(f"{key}_date_time") or "")
        for n, raw in enumerate(conv.get(key) or [], start=1):
            if not isinstance(raw, dict):
                continue
            dia_id, *_ = normalise_evidence(raw.get("dia_id", f"D{session}:{n}"))[0] or [
                f"D{session}:{n}"]
            turns.append(Turn(dia_id, session, n, str(raw.get("speaker") or "?"),
                              str(raw.get("text") or ""), str(raw.get("blip_caption") or ""),
                              when))
    known = {t.dia_id for t in turns}
    issues: Counter[str] = Counter()
    qas: list[QA] = []
    for raw in data.get("qa", []) if isinstance(data, dict) else []:
        try:
            category = int(raw.get("category", 0))
        except (TypeError, ValueError):
            issues["bad_category"] += 1
            continue
        ids, split, reformatted, unparseable = normalise_evidence(raw.get("evidence") or [])
        unknown = [i for i in ids if i not in known]
        if category in CATEGORIES:
            issues["split"] += split
            issues["reformatted"] += reformatted
            issues["unparseable"] += unparseable
            issues["unknown"] += len(unknown)
        evidence = tuple(i for i in ids if i in known)
        if category in CATEGORIES and not evidence:
            issues["qa_without_evidence"] += 1
        qas.append(QA(str(raw.get("question") or ""), category, evidence))
    speakers = (str(conv.get("speaker_a") or ""), str(conv.get("speaker_b") or ""))
    return Conversation(path.stem, speakers, tuple(turns), tuple(qas), dict(issues))


def load_dir(folder: Path, limit: int | None = None) -> tuple[list[Conversation], list[str]]:
    """Every ``*.json`` conversation of ``folder`` (sorted by name), and load errors."""
    convs: list[Conversation] = []
    errors: list[str] = []
    for path in sorted(folder.glob("*.json"))[:limit]:
        try:
            convs.append(load_conversation(path))
        except Exception as exc:  # noqa: BLE001 - one broken file never stops the run
            errors.append(f"{path.name}: {type(exc).__name__}: {exc}")
    return convs, errors


# --- notes ----------------------------------------------------------------------------------


@attrs.frozen
class NoteLayout:
    """What a turn's note holds.

    ``title``: format of the ``# `` heading ({speaker}, {day}, {dia_id}); ``repeat``: how
    many times the turn's own text (and photo caption) is written; ``before``/``after``:
    how many neighbouring turns of the same session are appended once under
    ``## Context``, so with ``repeat=2`` they weigh about half as much as the turn itself.
    """

    name: str
    title: str = "{speaker} — {day}"
    repeat: int = 1
    before: int = 0
    after: int = 0
    caption: bool = True
    context_speaker: bool = True
    near: int = 1  # copies of the immediately adjacent turns in the context


LAYOUTS: dict[str, NoteLayout] = {
    "turn": NoteLayout("turn"),
    "turn+context": NoteLayout("turn+context", repeat=2, before=2, after=2),
}


def note_path(turn: Turn) -> str:
    return f"conversation/session-{turn.session:02d}/{turn.dia_id.replace(':', '-')}.md"


def _said(turn: Turn, caption: bool) -> str:
    photo = f" [shares a photo: {turn.caption}]" if caption and turn.caption else ""
    return f"{turn.text}{photo}"


def note_text(turns: Sequence[Turn], i: int, layout: NoteLayout) -> str:
    """The note for ``turns[i]`` (its session's turns are around it in ``turns``)."""
    turn = turns[i]
    title = layout.title.format(speaker=turn.speaker, day=turn.day, dia_id=turn.dia_id)
    own = "\n\n".join([_said(turn, layout.caption)] * max(layout.repeat, 1))
    front = (f"---\ntype: episodic\nstatus: complete\ncreated: {PINNED_DAY}\n"
             f"updated: {PINNED_DAY}\nspeaker: {json.dumps(turn.speaker)}\n"
             f"dia_id: {turn.dia_id}\nsession_date: {json.dumps(turn.when)}\n---\n")
    lines = [front, f"# {title}\n\n{own}\n"]
    if layout.before or layout.after:
        near = [t for j, t in enumerate(turns[max(0, i - layout.before):i + layout.after + 1],
                                        start=max(0, i - layout.before))
                for _ in range(layout.near if abs(j - i) == 1 else 1)
                if t is not turn and t.session == turn.session]
        if near:
            lines.append("\n## Context\n\n" + "\n".join(
                f"- {t.speaker + ': ' if layout.context_speaker else ''}"
                f"{_said(t, layout.caption)}" for t in near) + "\n")
    return "".join(lines)


def write_vault(conv: Conversation, box: Any, layout: NoteLayout) -> dict[str, str]:
    """Write one note per turn into ``box.vault``, then rebuild the index once.
    Returns path -> dia_id."""
    from echo_core.ops.recall_index import rebuild_index

    paths: dict[str, str] = {}
    for i, turn in enumerate(conv.turns):
        path = note_path(turn)
        target = box.vault / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(note_text(conv.turns, i, layout), encoding="utf-8")
        paths[path] = turn.dia_id
    rebuild_index(box.context(PINNED_DAY))
    return paths


def scorable(conv: Conversation) -> list[QA]:
    """The questions that are scored: categories 1-4 with at least one evidence turn."""
    return [q for q in conv.qas if q.category in CATEGORIES and q.evidence]


# --- the plain BM25 baseline ----------------------------------------------------------------


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


BASELINE_TOKENIZERS = {
    "bm25-ws": lambda text: text.lower().split(),  # the spec'd baseline: whitespace split
    "bm25-words": _words,  # the same without punctuation glued to the words
}


class Baseline:
    """rank_bm25 ``BM25Okapi`` over the notes' text (frontmatter removed), no stemming,
    no stopwords, no priors."""

    def __init__(self, texts: Mapping[str, str], tokenize: Any) -> None:
        from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

        from echo_core.frontmatter import split_frontmatter

        self.paths = list(texts)
        self.tokenize = tokenize
        self.bm25 = BM25Okapi([tokenize(split_frontmatter(texts[p])[1]) or [""]
                               for p in self.paths])

    def search(self, query: str, limit: int) -> list[str]:
        scores = self.bm25.get_scores(self.tokenize(query))
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [self.paths[i] for i in order[:limit] if scores[i] > 0]


#: Recall as shipped, and with each feature of ours turned off (extra config lines).
VARIANTS: dict[str, str] = {"ours": "", "ours -key-fields": "key_field_boost = 1\n"}


#: A variant whose config holds this runs on a PostgreSQL copy of the vault.
PGFTS = 'recall = "pgfts"'


def postgres_copy(box: Any, postgres: str, schema: str, config: str) -> tuple[Any, float]:
    """The folder vault of ``box`` imported (``import --from``) into a fresh ``schema`` of
    the server ``postgres``, indexed once; ``(context, seconds)`` on it under ``config``
    (its own state dir). The caller closes the storage and drops the schema."""
    from echo_core.ops.recall_index import rebuild_index
    from echo_core.ops.vault_transfer import import_vault

    drop_schema(postgres, schema)
    url = f"{postgres}{'&' if '?' in postgres else '?'}schema={schema}"
    pg_box = box.sibling(f"pg-{schema}")
    start = time.perf_counter()
    ctx = pg_box.context(PINNED_DAY, config, vault=url)
    import_vault(ctx, str(box.vault))
    rebuild_index(ctx)
    return ctx, time.perf_counter() - start


def drop_schema(postgres: str, schema: str) -> None:
    """Drop ``schema`` (and its tables) on the server ``postgres``."""
    import psycopg

    with psycopg.connect(postgres, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def run_conversation(conv: Conversation, box: Any, layout: NoteLayout, limit: int,
                     baselines: Iterable[str] = tuple(BASELINE_TOKENIZERS),
                     variants: Mapping[str, str] | None = None,
                     postgres: str | None = None) -> dict[str, Any]:
    """Build the vault, then rank every scorable question with our recall under each of
    ``variants`` (name -> extra config lines; default ``{"ours": ""}``) and each baseline.
    A variant with ``recall = "pgfts"`` runs on the same notes imported into a schema of
    the PostgreSQL server ``postgres`` (skipped without one; the schema is dropped after).
    Returns timings and, per system, one ``(qa, ranked dia ids)`` list."""
    from echo_core.ops.recall import recall

    start = time.perf_counter()
    paths = write_vault(conv, box, layout)
    build_s = time.perf_counter() - start
    questions = scorable(conv)
    ranked: dict[str, list[list[str]]] = {}
    timings = {"build_s": build_s}
    for name, config in (variants or {"ours": ""}).items():
        schema = ""
        if PGFTS in config:
            if not postgres:
                continue
            schema = re.sub(r"[^a-z0-9_]", "_", f"locomo_{layout.name}_{conv.name}".lower())
            ctx, timings[f"{name}_build_s"] = postgres_copy(box, postgres, schema, config)
        else:
            ctx = box.context(PINNED_DAY, config)
        ranked[name] = []
        start = time.perf_counter()
        for qa in questions:
            hits = recall(ctx, qa.question, limit=limit, include_linked=False).data.primary
            ranked[name].append([paths[h.path] for h in hits if h.path in paths])
        timings[f"{name}_query_s"] = time.perf_counter() - start
        if schema:
            ctx.vault.storage.close()
            assert postgres is not None
            drop_schema(postgres, schema)
    texts = {p: (box.vault / p).read_text(encoding="utf-8") for p in paths}
    for name in baselines:
        start = time.perf_counter()
        base = Baseline(texts, BASELINE_TOKENIZERS[name])
        timings[f"{name}_build_s"] = time.perf_counter() - start
        start = time.perf_counter()
        ranked[name] = [[paths[p] for p in base.search(qa.question, limit)] for qa in questions]
        timings[f"{name}_query_s"] = time.perf_counter() - start
    return {"questions": questions, "ranked": ranked, "timings": timings, "notes": len(paths)}
