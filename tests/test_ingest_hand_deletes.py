"""``ingest`` after a person deleted notes it wrote: nothing is doubled. The document
deleted alone is written again beside its parts (found by their ``source_path``, same
slug, no second set); a deleted part of an unchanged source is written again; the
document and its parts all deleted: the name is reused (the freshness check every
indexed verb runs drops the deleted note's index entry). After each, the notes naming
the source are the parts plus the document, and one more ingest writes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

from echo_core.actions import Action
from echo_core.operations.invoke import invoke
from echo_core.ops.ingest import ingest
from echo_core.ops.lint.run import lint
from tests.capture_kit import VaultBox
from tests.ingest_kit import (  # noqa: F401 - fixture box
    REFS,
    changed_notes,
    guide,
    ingest_box,
    notes_of_source,
    vault_files,
)

SLUG = "guide-two"
DOC = f"{REFS}/{SLUG}.md"
PARTS = f"{REFS}/{SLUG}"
TOPICS = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon", "Zeta"]


def _part(n: int) -> str:
    return f"{PARTS}/{SLUG}-part-{n:02d}.md"


def _body(text: str) -> str:
    return text.split("\n---\n", 1)[1]


def _source(tmp_path: Path, topics: list[str]) -> Path:
    src = tmp_path / "g2.md"
    src.write_text(guide("Guide Two", topics), encoding="utf-8")
    return src


def _nothing_doubled(box: VaultBox, src: Path, parts: int) -> None:
    """The notes naming ``src``: ``parts`` parts and the document, at their first names;
    one more ingest writes nothing; lint finds nothing wrong with them."""
    location = str(src.resolve())
    assert notes_of_source(box, location) == sorted(
        [DOC, *(_part(n) for n in range(1, parts + 1))])
    before = vault_files(box)
    again = ingest(box.ctx(ECHO_TODAY="2026-03-09"), str(src))
    assert again.action == Action.UNCHANGED and vault_files(box) == before, again
    findings = [f for f in lint(box.ctx(), score=False).data.findings if REFS in f.path]
    assert findings == [], findings


def test_a_deleted_document_is_written_again_beside_its_parts(box: VaultBox,
                                                             tmp_path: Path) -> None:
    src = _source(tmp_path, TOPICS)
    first = ingest(box.ctx(), str(src))
    assert len(first.data.parts) == 6
    parts = {p: box.read(p) for p in (_part(n) for n in range(1, 7))}
    (box.vault / DOC).unlink()

    before = vault_files(box)
    env = ingest(box.ctx(ECHO_TODAY="2026-03-05"), str(src))
    assert env.ok and env.data.path == DOC, env
    assert changed_notes(before, vault_files(box)) == {DOC}
    assert {p: box.read(p) for p in parts} == parts  # the parts as they were
    _nothing_doubled(box, src, 6)


def test_a_deleted_document_of_a_changed_source_takes_its_parts_back(
        box: VaultBox, tmp_path: Path) -> None:
    src = _source(tmp_path, TOPICS)
    ingest(box.ctx(), str(src))
    (box.vault / DOC).unlink()
    _source(tmp_path, TOPICS[:4])

    env = ingest(box.ctx(ECHO_TODAY="2026-03-05"), str(src))
    assert env.ok and env.data.path == DOC, env
    assert set(env.data.removed) == {_part(5), _part(6)}
    assert box.frontmatter(DOC)["parts"] == 4
    _nothing_doubled(box, src, 4)


def test_a_deleted_part_of_an_unchanged_source_is_written_again(box: VaultBox,
                                                                tmp_path: Path) -> None:
    src = _source(tmp_path, TOPICS)
    ingest(box.ctx(), str(src))
    gone = box.read(_part(3))
    (box.vault / _part(3)).unlink()

    before = vault_files(box)
    dry = ingest(box.ctx(ECHO_TODAY="2026-03-05"), str(src), dry_run=True)
    assert "would write 1 note(s)" in dry.message, dry.message
    env = ingest(box.ctx(ECHO_TODAY="2026-03-05"), str(src))
    assert env.ok and env.action == Action.UPDATED, env
    assert changed_notes(before, vault_files(box)) == {_part(3)}  # the document untouched
    assert _body(box.read(_part(3))) == _body(gone)  # as it was (dated today)
    steps = {p.path: p.step for p in env.data.parts}
    assert steps[_part(3)] == "create" and env.data.document.step == "unchanged"
    _nothing_doubled(box, src, 6)


def test_a_document_deleted_with_its_parts_gets_its_name_back(box: VaultBox,
                                                              tmp_path: Path) -> None:
    src = _source(tmp_path, TOPICS[:2])
    assert invoke(box.ctx(), "ingest", {"source": str(src)}).ok
    shutil.rmtree(box.vault / PARTS)
    (box.vault / DOC).unlink()

    env = invoke(box.ctx(ECHO_TODAY="2026-03-05"), "ingest", {"source": str(src)})
    assert env.ok and env.data.path == DOC, env.message
    _nothing_doubled(box, src, 2)
