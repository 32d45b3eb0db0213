"""Reciprocal ``## Related`` links and auto-linking of named entities (SPEC §2.1 step 6,
§2.4); which links recall's graph follows."""

from __future__ import annotations

from echo_core.agent_log_lines import is_daily_note, without_mechanical_lines
from echo_core.errors import usage_error
from echo_core.frontmatter import parse_frontmatter
from echo_core.models import Entity
from echo_core.names import is_linkable_name, words
from echo_core.notes import append_under_heading, wikilinks
from echo_core.protocols import EntityLookup
from echo_core.vault import NoteWriter

RELATED_HEADING = "Related"
MAX_NAME_WORDS = 6
#: What a ``[[wikilink]]`` target cannot hold: Obsidian reads ``#`` as a heading, ``^``
#: as a block, ``|`` as an alias, and ``[`` / ``]`` end the link (``notes.wikilinks``
#: cuts at the same marks), so no link to a file named with one of them resolves.
UNLINKABLE_CHARS = "#^|[]"


def link_target(path: str) -> str:
    """The wikilink target for a note path: its file name without ``.md``."""
    stem = path.rsplit("/", 1)[-1]
    return stem.removesuffix(".md")


def unlinkable(path: str) -> str:
    """The characters of ``path``'s file name that no ``[[wikilink]]`` can carry
    (``UNLINKABLE_CHARS``), in order; empty when it can be linked."""
    return "".join(dict.fromkeys(c for c in link_target(path) if c in UNLINKABLE_CHARS))


def require_linkable(path: str) -> None:
    """Raise ``usage_error`` (exit 2) when no wikilink can name the note at ``path``."""
    bad = unlinkable(path)
    if bad:
        marks = " ".join(repr(c) for c in bad)
        raise usage_error(
            f"cannot link {path}: its file name holds {marks}, which a [[wikilink]] cannot "
            "carry (Obsidian reads '#' as a heading, '^' as a block, '|' as an alias, and "
            "'[' ']' end the link), so the link would point elsewhere or nowhere; rename "
            "the file without them (e.g. in Obsidian, which updates the links) and link "
            "again. Nothing was written")


def graph_links(path: str, text: str, links: tuple[str, ...]) -> tuple[str, ...]:
    """The links of the note at ``path`` that recall's graph follows: ``links`` (the
    note's wikilinks), except that a daily note's mechanical agent-log lines ("created
    project [[x]]", ``agent_log_lines``) link nothing: they make the day a hub of every
    note touched, not a neighbour of any."""
    if not links or not is_daily_note(path):
        return links
    return tuple(wikilinks(without_mechanical_lines(text)))


def related_line(path: str) -> str:
    """The ``## Related`` bullet linking to ``path``."""
    return f"- [[{link_target(path)}]]"


def add_related(text: str, path: str) -> tuple[str, bool]:
    """Add a Related link to ``path`` unless the note already links to it anywhere."""
    if link_target(path) in {t.split("#", 1)[0] for t in wikilinks(text)}:
        return text, False
    return append_under_heading(text, RELATED_HEADING, [related_line(path)])


def named_entities(text: str, index: EntityLookup, *, exclude: set[str]) -> list[Entity]:
    """Entities confidently named in ``text``: a whole-word match of a title or alias of
    at least 4 characters that is not only common words. Ordered by first mention.

    Every run of up to ``MAX_NAME_WORDS`` words is looked up in one batch
    (``slugs_by_keys``): the cost follows the text, not the number of entities."""
    tokens = words(text)
    spans = [(start, " ".join(tokens[start:start + width]))
             for start in range(len(tokens))
             for width in range(min(MAX_NAME_WORDS, len(tokens) - start), 0, -1)]
    by_key = index.slugs_by_keys(key for _start, key in spans)
    found: dict[str, Entity] = {}
    for _start, key in spans:
        for slug in sorted(by_key.get(key, ())):
            entity = index.get(slug)
            if entity is None or slug in exclude or slug in found:
                continue
            if _named_by(entity, key):
                found[slug] = entity
    return list(found.values())


def _named_by(entity: Entity, key: str) -> bool:
    """The key must come from a linkable title/alias (not merely the slug)."""
    for name in (entity.title, *entity.aliases):
        if " ".join(words(name)) == key and is_linkable_name(name):
            return True
    return False


def link_reciprocally(vault: NoteWriter, a_path: str, a_text: str, b_path: str) -> tuple[str, bool]:
    """Link note ``a`` (whose current text the caller holds) and note ``b`` both ways.

    Writes ``b`` when it changes; returns ``a``'s new text for the caller to write, and
    whether anything changed. Raises ``usage_error`` (nothing written) when a file name
    cannot be a wikilink target (``require_linkable``).
    """
    require_linkable(a_path)
    require_linkable(b_path)
    return _link(vault, a_path, a_text, b_path, spare_durable=False)


def expires(text: str) -> bool:
    """Whether the note ``text`` has an ``expires`` date (working memory such as a
    checkpoint: it goes away, so durable notes must not collect links to it)."""
    return parse_frontmatter(text)[0].get("expires") not in (None, "")


def link_mentioned(vault: NoteWriter, a_path: str, a_text: str, b_path: str) -> tuple[str, bool]:
    """Auto-link note ``a`` (its current text held by the caller) with note ``b`` that it
    names, like ``link_reciprocally``, except that a note without an expiry never gets a
    link to one that expires: a checkpoint naming a person links to her, her note does
    not collect links to checkpoints. A note whose file name no wikilink can carry
    (``unlinkable``) is not linked at all: the link would be broken."""
    if unlinkable(a_path) or unlinkable(b_path):
        return a_text, False
    return _link(vault, a_path, a_text, b_path, spare_durable=True)


def _link(vault: NoteWriter, a_path: str, a_text: str, b_path: str, *,
          spare_durable: bool) -> tuple[str, bool]:
    b_text = vault.storage.read(b_path)
    a_expires = spare_durable and expires(a_text)
    b_expires = spare_durable and expires(b_text)
    new_a, changed_a = (a_text, False) if b_expires and not a_expires else add_related(a_text, b_path)
    new_b, changed_b = (b_text, False) if a_expires and not b_expires else add_related(b_text, a_path)
    if changed_b:
        vault.update_note(b_path, new_b, b_text)
    return new_a, changed_a or changed_b
