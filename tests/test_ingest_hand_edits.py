"""``ingest`` of a changed source after a person edited the document note: their text
under ``## Notes`` / ``## Related`` is kept while the summary and parts list follow the
source; a document edited elsewhere is left as it is and NOT advanced (its
``content_hash``, ``parts`` and ``fetched_at`` keep naming the version it describes), so
every later ingest reports it again; the dry run counts exactly the notes the write
writes; parts kept because they were edited are reported by every later ingest."""

from __future__ import annotations

from pathlib import Path

from echo_core.actions import Action
from echo_core.frontmatter import remove_frontmatter_key, set_frontmatter_key
from echo_core.models import Envelope
from echo_core.notes import section_body
from echo_core.ops.ingest import IngestResult, ingest
from echo_core.ops.ingest_extract import tidy
from echo_core.ops.ingest_notes import (
    HASH_KEY,
    generated_intact,
    written_hash,
)
from echo_core.ops.ingest_plan import IngestDocument, plan_ingest
from tests.capture_kit import VaultBox
from tests.ingest_kit import (  # noqa: F401 - fixture box
    REFS,
    changed_notes,
    guide,
    ingest_box,
    vault_files,
)

DOC = f"{REFS}/guide-four.md"
LATER = {"ECHO_TODAY": "2026-03-05", "ECHO_NOW": "2026-03-05T08:00:00+00:00"}
GROWN = ["Alpha", "Beta", "Gamma", "Delta"]


def _source(tmp_path: Path, topics: list[str], intro: str = "What this guide covers.") -> Path:
    src = tmp_path / "g4.md"
    src.write_text(guide("Guide Four", topics, intro), encoding="utf-8")
    return src


def _edit(box: VaultBox, path: str, old: str, new: str) -> str:
    text = box.read(path)
    assert old in text, text
    mine = text.replace(old, new, 1)
    (box.vault / path).write_text(mine, encoding="utf-8")
    return mine


def _part_links(text: str) -> list[str]:
    body = section_body(text, "Parts") or ""
    return [line.split("[[", 1)[1].split("|", 1)[0] for line in body.splitlines() if line]


def _dry_then_apply(box: VaultBox,
                    src: Path) -> tuple[str, set[str], Envelope[IngestResult]]:
    """The dry run's message, the notes the real ingest changed, its envelope."""
    before = vault_files(box)
    dry = ingest(box.ctx(**LATER), str(src), dry_run=True)
    assert vault_files(box) == before
    env = ingest(box.ctx(**LATER), str(src))
    return dry.message, changed_notes(before, vault_files(box)), env


def test_text_under_notes_and_related_is_kept_while_the_rest_follows_the_source(
        box: VaultBox, tmp_path: Path) -> None:
    src = _source(tmp_path, GROWN[:2])
    ingest(box.ctx(), str(src))
    _edit(box, DOC, "## Notes\n", "## Notes\n- my remark\n")
    mine = box.read(DOC).rstrip("\n") + "\n- [[ada-lovelace]]\nsee also my diary\n"
    (box.vault / DOC).write_text(mine, encoding="utf-8")
    _source(tmp_path, GROWN, intro="A new intro to all four steps.")

    said, changed, env = _dry_then_apply(box, src)
    assert env.ok and env.action == Action.UPDATED, env
    assert not env.data.kept_edited and env.data.document.step == "update"
    assert f"would write {len(changed)} note(s)" in said, (said, changed)
    text = box.read(DOC)
    assert section_body(text, "Notes") == "- my remark"
    assert text.endswith("## Related\n- [[ada-lovelace]]\nsee also my diary\n")
    assert "A new intro to all four steps." in text and "What this guide covers." not in text
    fm = box.frontmatter(DOC)
    assert fm["parts"] == 4 and fm["content_hash"] == env.data.content_hash
    assert fm["fetched_at"] == "2026-03-05T08:00:00"
    links = _part_links(text)
    assert links == [f"guide-four-part-0{n}" for n in range(1, 5)]
    assert all((box.vault / REFS / "guide-four" / f"{t}.md").exists() for t in links)
    # and again: nothing to do, the person's text still there
    before = vault_files(box)
    again = ingest(box.ctx(ECHO_TODAY="2026-03-06"), str(src))
    assert again.action == Action.UNCHANGED and vault_files(box) == before


def test_a_document_edited_outside_its_notes_is_not_advanced_and_said_every_time(
        box: VaultBox, tmp_path: Path) -> None:
    src = _source(tmp_path, GROWN[:2])
    ingest(box.ctx(), str(src))
    old_fm = box.frontmatter(DOC)
    mine = _edit(box, DOC, "What this guide covers.", "What this guide covers, as I see it.")
    _source(tmp_path, GROWN)

    said, changed, env = _dry_then_apply(box, src)
    assert env.ok and DOC in env.data.kept_edited, env
    assert env.data.document.step == "kept-edited"
    assert box.read(DOC) == mine  # byte for byte: nothing advanced
    assert DOC not in changed and f"would write {len(changed)} note(s)" in said
    fm = box.frontmatter(DOC)
    for key in ("content_hash", "parts", "fetched_at", "updated"):
        assert fm[key] == old_fm[key], key
    # every later ingest still finds the source changed and says so, writing nothing
    for day in ("2026-03-06", "2026-03-07"):
        before = vault_files(box)
        later = ingest(box.ctx(ECHO_TODAY=day), str(src))
        assert later.data.document.step == "kept-edited" and DOC in later.data.kept_edited
        assert vault_files(box) == before
    doc = IngestDocument("Guide Four", tidy(src.read_text(encoding="utf-8")),
                         str(src.resolve()), False)
    plan = plan_ingest(box.ctx().vault.storage, lambda slug: False, doc, "now",
                       box.ctx().today())
    assert DOC in plan.advice and "## Notes" in plan.advice and "delete" in plan.advice


def test_a_capture_into_the_document_is_kept_when_the_source_changes(
        box: VaultBox, tmp_path: Path) -> None:
    src = _source(tmp_path, GROWN[:2])
    ingest(box.ctx(), str(src))
    captured = box.capture("Guide Four", kind="reference", body="Ask Ada about step two.",
                           today="2026-03-03")
    assert captured.ok and captured.data.path == DOC, captured
    notes = section_body(box.read(DOC), "Notes") or ""
    assert "Ask Ada about step two." in notes
    _source(tmp_path, GROWN)

    env = ingest(box.ctx(**LATER), str(src))
    assert env.ok and not env.data.kept_edited, env
    assert section_body(box.read(DOC), "Notes") == notes
    assert box.frontmatter(DOC)["parts"] == 4


def test_a_surplus_part_kept_as_edited_is_reported_by_every_later_ingest(
        box: VaultBox, tmp_path: Path) -> None:
    src = _source(tmp_path, GROWN)
    ingest(box.ctx(), str(src))
    part4 = f"{REFS}/guide-four/guide-four-part-04.md"
    mine = _edit(box, part4, "## Notes\n", "## Notes\n- my remark\n")
    _source(tmp_path, GROWN[:2])

    said, changed, env = _dry_then_apply(box, src)
    assert f"would write {len(changed) - 1} note(s) and remove 1" in said  # part 3 removed
    assert env.data.removed == (f"{REFS}/guide-four/guide-four-part-03.md",)
    for dry_run in (False, True, False):
        later = ingest(box.ctx(ECHO_TODAY="2026-03-06"), str(src), dry_run=dry_run)
        steps = {p.path: p.step for p in later.data.parts}
        assert steps[part4] == "kept-surplus" and part4 in later.data.kept_edited
    assert box.read(part4) == mine and "[[guide-four]]" in mine  # still links the document


def test_a_document_hashed_whole_by_an_earlier_version_is_still_recognised(
        box: VaultBox, tmp_path: Path) -> None:
    src = _source(tmp_path, GROWN[:2])
    ingest(box.ctx(), str(src))
    text = box.read(DOC)
    whole = set_frontmatter_key(text, HASH_KEY, written_hash(text))  # the earlier hash
    assert generated_intact(whole, written_hash(text))
    with_notes = whole.replace("## Notes\n", "## Notes\n- my remark\n")
    assert generated_intact(with_notes, written_hash(text))
    edited = whole.replace("What this guide covers.", "Mine.")
    assert not generated_intact(edited, written_hash(text))
    assert not generated_intact(remove_frontmatter_key(text, HASH_KEY), None)
