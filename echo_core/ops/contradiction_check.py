"""Whether a semantic capture contradicts what memory already holds as true (SPEC §2.6).

A capture of kind ``semantic`` states a fact or a preference. Before it is written, its
title and each line of its body are read as claims (``echo_core.ops.claims``, the same
heuristic as lint's contradiction check) and compared with the lines memory holds as
true: the live (not struck) bullets of the operator preferences' ``Fact / Pattern`` and
``Observations``, and each semantic note that is not superseded or archived, by its
title and its ``Fact / Pattern`` bullets. Every line that makes the opposite claim on
the same subject is a ``Contradiction``; capture then stops and proposes the
supersession (``--supersedes``) instead of silently keeping both (``--force`` keeps both).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from echo_core.notes import parse_note, section_body
from echo_core.ops.claims import Claim, claims, opposed
from echo_core.ops.supersession import PREFERENCE_SECTIONS, PREFERENCES_PATH
from echo_core.protocols import Storage

SEMANTIC_FOLDER = "_agent/memory/semantic"
FACT_HEADING = "Fact / Pattern"
_INACTIVE = ("superseded", "archived")
MAX_REPORTED = 5


@attrs.frozen
class Contradiction:
    """An existing line (in the note at ``path``; ``slug`` when the line is that note's
    title) that a new line contradicts on ``subject``."""

    path: str
    line: str
    new_line: str
    subject: str
    slug: str = ""

    def supersedes_value(self) -> str:
        """What ``--supersedes`` takes to replace this line: the note's slug for a note,
        the line's text for a preference line."""
        if self.slug:
            return self.slug
        return self.line.strip()[2:].strip()

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "line": self.line, "new_line": self.new_line,
                "subject": self.subject, "supersedes": self.supersedes_value()}


def _bullets(text: str | None) -> Iterator[str]:
    for line in (text or "").splitlines():
        stripped = line.strip()
        if stripped.startswith(("- ", "* ", "+ ")) and "~~" not in stripped:
            yield stripped


def _held_lines(storage: Storage) -> Iterator[tuple[str, str, str]]:
    """``(path, line, slug)`` of every line memory holds as true (module docstring)."""
    paths = sorted(p for p in storage.list(SEMANTIC_FOLDER) if p.endswith(".md"))
    texts = storage.read_many(paths)
    for path in paths:
        text = texts.get(path)
        if text is None:
            continue
        if path == PREFERENCES_PATH:
            for heading in PREFERENCE_SECTIONS:
                for line in _bullets(section_body(text, heading)):
                    yield path, line, ""
            continue
        note = parse_note(path, text)
        if str(note.frontmatter.get("status") or "").lower() in _INACTIVE or \
                note.frontmatter.get("superseded_by"):
            continue
        title = next((ln[2:].strip() for ln in note.body.splitlines() if ln.startswith("# ")), "")
        slug = path.rsplit("/", 1)[-1].removesuffix(".md")
        if title:
            yield path, f"- {title}", slug
        for line in _bullets(section_body(text, FACT_HEADING)):
            yield path, line, ""


def new_lines(title: str, body: str) -> list[str]:
    """The lines a capture states: its title, then each non-empty body line."""
    lines = [f"- {title}"]
    for raw in body.splitlines():
        text = raw.strip()
        if text.startswith(("- ", "* ", "+ ")):
            text = text[2:].strip()
        if text:
            lines.append(f"- {text}")
    return lines


def find_contradictions(storage: Storage, title: str, body: str, *,
                        own_path: str | None = None) -> list[Contradiction]:
    """The held lines the capture of ``title`` / ``body`` contradicts, at most
    ``MAX_REPORTED``; the capture's own note (``own_path``, on an update) counts too,
    except its title line."""
    stated: list[tuple[str, list[Claim]]] = [
        (line, found) for line in new_lines(title, body) if (found := claims(line))]
    if not stated:
        return []
    out: list[Contradiction] = []
    seen: set[tuple[str, str]] = set()
    for path, line, slug in _held_lines(storage):
        if slug and path == own_path:
            continue
        held = claims(line)
        if not held:
            continue
        for new_line, new_claims in stated:
            subject = opposed(new_claims, held)
            if subject is not None and (path, line) not in seen:
                seen.add((path, line))
                out.append(Contradiction(path, line, new_line, " ".join(sorted(subject)), slug))
                break
        if len(out) >= MAX_REPORTED:
            break
    return out


def contradiction_message(found: list[Contradiction]) -> str:
    """One line per contradiction and the commands that answer it."""
    first = found[0]
    parts = [f"{c.new_line[2:]!r} contradicts {c.line[2:]!r} in {c.path}" for c in found]
    return ("; ".join(parts) + f". Replace it: re-run with --supersedes "
            f"{first.supersedes_value()!r}; or keep both with --force")
