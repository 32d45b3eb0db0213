"""What recall indexes (SPEC §3.1): entity notes, session logs and journal notes; never
templates, the index, the inbox, READMEs, the marker, heartbeat or archive.

``index_doc(note)`` turns a note into the ``IndexDoc`` a ranker stores, with its static
prior (corpus weight x status). The core hands it to the active ranker on every note write
(``echo_core.ranker_upkeep``).
"""

from __future__ import annotations

from echo_core.agent_log_lines import is_daily_note, without_mechanical_lines
from echo_core.models import Note
from echo_core.notes import wikilinks
from echo_core.protocols import IndexDoc, Storage
from echo_core.scoring import JOURNAL_WEIGHT, QUESTION_WEIGHT, SESSION_WEIGHT, status_weight

EXCLUDED_PREFIXES = (
    "templates/", "inbox/", "_agent/index/", "_agent/archive/", "_agent/heartbeat/",
    "_agent/context/",
)
EXCLUDED_FILES = ("_agent/echo-vault.md",)
SESSION_PREFIX = "_agent/sessions/"
JOURNAL_PREFIX = "journal/"


def in_corpus(path: str) -> bool:
    """Whether the note at ``path`` belongs in the recall index."""
    if not path.endswith(".md") or path in EXCLUDED_FILES:
        return False
    if path.rsplit("/", 1)[-1].lower() == "readme.md":
        return False
    return not path.startswith(EXCLUDED_PREFIXES)


def corpus_weight(path: str) -> float:
    """0.6 for session logs and journal notes, else 1.0."""
    if path.startswith(SESSION_PREFIX):
        return SESSION_WEIGHT
    if path.startswith(JOURNAL_PREFIX):
        return JOURNAL_WEIGHT
    return 1.0


def _text_value(value: object) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return "" if value is None else str(value)


def aliases_text(value: object) -> str:
    """A note's ``aliases`` field as one text: a list's items joined by spaces, any
    other value as its string, nothing for an empty or false one. Recall's key fields
    are the title and this (``IndexDoc.aliases``, ``ops.note_views``)."""
    if isinstance(value, list):
        return " ".join(str(a) for a in value)
    return str(value or "")


def asks(body: str) -> bool:
    """Whether a note's lead, its body before the first ``## `` section without ``#``
    heading lines, ends with a question mark (a chat turn that only asks)."""
    lead = body.split("\n## ", 1)[0]
    end = lead.rstrip()
    while end:
        cut = end.rfind("\n")
        last = end[cut + 1:].strip()
        if not last.startswith("# "):
            return last.endswith("?")
        end = end[:max(cut, 0)].rstrip()
    return False


def prior_weight(path: str, status: str, body: str) -> float:
    """A note's static prior: corpus weight x status weight x ``QUESTION_WEIGHT`` when
    its lead only asks (``asks``)."""
    weight = corpus_weight(path) * status_weight(status)
    return weight * QUESTION_WEIGHT if asks(body) else weight


def index_doc(note: Note) -> IndexDoc | None:
    """The ranker document for ``note``, or None when it is not in the corpus.

    Searchable text = title, aliases, tags and body (the title counted twice, a light
    field boost); a daily note's body without its mechanical agent-log lines
    (``agent_log_lines``). Prior = corpus weight x status weight (x question weight for
    a note that only asks: ``prior_weight``).
    """
    if not in_corpus(note.path):
        return None
    fm = note.frontmatter
    title = note.title
    status = _text_value(fm.get("status"))
    kind = _text_value(fm.get("type"))
    if not kind:
        kind = "session" if note.path.startswith(SESSION_PREFIX) else (
            "journal" if note.path.startswith(JOURNAL_PREFIX) else "")
    extra = " ".join(_text_value(fm.get(k)) for k in ("aliases", "tags"))
    body = without_mechanical_lines(note.body) if is_daily_note(note.path) else note.body
    text = f"{title}\n{title}\n{extra}\n{body}"
    updated = _text_value(fm.get("updated") or fm.get("created") or "")[:10]
    return IndexDoc(
        path=note.path, title=title, text=text, kind=kind, status=status, updated=updated,
        weight=prior_weight(note.path, status, body),
        links=tuple(wikilinks(body)), aliases=aliases_text(fm.get("aliases")),
    )


def corpus_paths(storage: Storage) -> list[str]:
    """Every path of the vault that belongs in the index, sorted."""
    return [p for p in storage.list("") if in_corpus(p)]
