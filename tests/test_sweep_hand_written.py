"""Issue 14 acceptance: a vault of 200 hand-written notes (half without frontmatter, some
with Obsidian ``aliases:``) -> after ``sweep --apply`` every note resolves by its title
and each alias, and capturing each title updates that note (no ``-2`` file)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import attrs
import pytest

from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.resolve import resolve
from echo_core.ops.sweep import full_sweep
from tests.capture_kit import VaultBox

KINDS = [("person", "resources/people"), ("company", "resources/companies"),
         ("concept", "resources/concepts"), ("reference", "resources/references"),
         ("project", "projects/active"), ("skill", "resources/skills")]
SYLLABLES = ["ka", "lo", "mi", "ren", "tas", "vo", "qui", "zen", "dor", "pha", "lix", "mur"]


@attrs.frozen
class HandNote:
    """One note as a person wrote it: where, its title, kind and aliases."""

    path: str
    title: str
    kind: str
    aliases: tuple[str, ...]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3)).title()


def _frontmatter(rng: random.Random, i: int, aliases: tuple[str, ...]) -> str:
    """Half the notes: none. Others: a person's own keys, Obsidian aliases as a list or
    one string, sometimes a partial echo-memory block."""
    if i % 2 == 0:
        return ""
    lines = ["---"]
    if i % 3 == 0:
        lines.append("status: draft")
    if len(aliases) > 1:
        lines += ["aliases:", *(f"  - {a}" for a in aliases)]
    elif aliases:
        lines.append(f"aliases: {aliases[0]}" if i % 4 == 1 else f"aliases: [{aliases[0]}]")
    lines.append(f"rating: {rng.randint(1, 5)}")
    return "\n".join([*lines, "---", ""])


def write_hand_vault(root: Path, count: int = 200, seed: int = 14) -> list[HandNote]:
    """``count`` notes as a person writes them in Obsidian (see the module docstring):
    titled by a heading or by the file name, some names with spaces or accents, some in
    sub-folders. Deterministic for ``seed``."""
    rng = random.Random(seed)
    notes: list[HandNote] = []
    for i in range(count):
        kind, folder = KINDS[i % len(KINDS)]
        title = f"{_word(rng)} {_word(rng)} {i}"
        if i % 10 == 3:
            title = f"Zoë Ångström {_word(rng)} {i}"
        wanted = 0 if i % 2 == 0 else 2 if i % 5 == 0 else int(i % 5 == 1 or i % 5 == 3)
        aliases = tuple(f"{_word(rng)} {i}a{n}" for n in range(wanted))
        by_heading = i % 3 != 2
        stem = f"note-{i:03d}" if by_heading else title
        sub = "team/" if i % 17 == 0 else ""
        path = f"{folder}/{sub}{stem}.md"
        body = f"Some words about {title.split()[0].lower()} written by hand.\n"
        text = _frontmatter(rng, i, aliases) + (f"# {title}\n\n" if by_heading else "") + body
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        notes.append(HandNote(path, title, kind, aliases))
    return notes


def _entity_files(vault: Path) -> set[str]:
    return {p.relative_to(vault).as_posix() for folder in {f for _, f in KINDS}
            for p in (vault / folder).rglob("*.md")}


@pytest.mark.parametrize("count", [200])
def test_hand_written_notes_resolve_and_capture_updates_them_after_sweep(
        count: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The acceptance's 200 notes, in the normal suite (a few seconds)."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # routing, not durability, under test
    box = VaultBox(tmp_path).init()
    notes = write_hand_vault(box.vault, count)
    before = _entity_files(box.vault)
    ctx = box.ctx()
    assert not resolve(ctx, notes[0].title).data.match  # unknown before the sweep
    swept = full_sweep(ctx, apply=True)
    assert swept.ok and len(swept.data.entities_added) == count, swept.message
    ctx = box.ctx()
    for note in notes:
        for name in (note.title, *note.aliases):
            found = resolve(ctx, name).data
            assert found.match and found.path == note.path, (name, found)
    for note in notes:
        env = capture(ctx, CaptureRequest(title=note.title, kind=note.kind, body="Seen again."))
        assert env.ok and env.action == "updated" and env.data.path == note.path, (note, env)
        assert "Seen again." in box.read(note.path)
    after = _entity_files(box.vault)
    assert after == before
    assert not [p for p in after if p.endswith("-2.md")]
