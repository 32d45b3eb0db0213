"""The graph: links that point at nothing, entity notes outside the graph, and
``superseded_by`` naming no note (SPEC §1.3, §2.6)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from echo_core.names import slugify
from echo_core.ops.lint.model import Finding
from echo_core.ops.lint.snapshot import SYSTEM_NOTES, VaultSnapshot

_BRACKETS_RE = re.compile(r"^\[\[(.+?)\]\]$")


def check_broken_links(snap: VaultSnapshot) -> Iterator[Finding]:
    """Each ``[[target]]`` (and ``[[t|label]]``, ``[[t#h]]``, embed ``![[file]]``)
    resolving to no note, file or entity name, or, written as a file name is
    (``[[charles-babbage]]``: what echo-memory writes), naming a note only by its entity
    name: the old name of a note renamed by hand, which Obsidian does not follow. A link
    a person writes by title (``[[Charles Babbage]]``) resolves by entity name as before.
    Links in code are not links. One finding per note and target."""
    resolver = snap.resolver
    for path, targets in snap.links.items():
        for target in targets:
            found = resolver.resolve(target)
            if not found:
                yield Finding("broken-wikilink", path, f"[[{target}]] points to no note "
                              "or file", "correct the link, or create the note it names "
                              "(e.g. with `echo-memory capture`)")
            elif target == slugify(target) and resolver.by_name_only(target):
                named = found[0].rsplit("/", 1)[-1][:-len(".md")] if len(found) == 1 else ""
                yield Finding("broken-wikilink", path, f"[[{target}]] names no file: it is "
                              f"the old name of {' or '.join(found)} (renamed by hand?), "
                              "which Obsidian does not follow (clicking it makes a new, "
                              "empty note)", f"write [[{named}]] instead" if named else
                              "write the linked note's file name in the link")


def check_orphans(snap: VaultSnapshot) -> Iterator[Finding]:
    """An entity note (in a kind's folder) that no other note links to and that has no
    link of its own: outside the graph, so recall never reaches it as a neighbour. The
    memory's own notes (operator preferences) are not entities people link."""
    linked = snap.linked_to
    for path in snap.kinds:
        if path in SYSTEM_NOTES or path in linked or snap.links.get(path):
            continue
        yield Finding("orphan-note", path, "no note links to it and it links to none",
                      "link it to a related note (`echo-memory link A B`), or delete it "
                      "if it is no longer wanted")


def superseded_target(value: object) -> str:
    """The note a ``superseded_by`` value names: ``[[x]]``, a path or a slug."""
    text = str(value).strip().strip('"').strip()
    match = _BRACKETS_RE.match(text)
    if match:
        text = re.split(r"[|#]", match.group(1), maxsplit=1)[0]
    return text.strip()


def check_superseded_by(snap: VaultSnapshot) -> Iterator[Finding]:
    """A ``superseded_by`` that names no note (its successor is gone or mistyped)."""
    for path, note in snap.notes.items():
        raw = note.frontmatter.get("superseded_by")
        if raw is None or raw == "":
            continue
        values = raw if isinstance(raw, list) else [raw]
        for value in values:
            target = superseded_target(value)
            if not target or not snap.resolver.resolve(target):
                yield Finding("dangling-superseded-by", path,
                              f"superseded_by {target!r} names no note",
                              "point superseded_by at the note that replaced it "
                              "(`echo-memory fm PATH superseded_by '\"[[slug]]\"'`), or "
                              "remove the key")
