"""``ingest`` (issue 17 item 5): an HTML article with navigation noise, a PDF and a markdown
file served on a loopback HTTP server -> one reference note and its parts each; the
boilerplate stays out; re-ingesting is a no-op; a changed page is updated in place;
parts are recallable and link back; notes edited by hand are kept, also when a person
saves one while ingest runs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import echo_core.ops.ingest as ingest_module
from echo_core.actions import Action
from echo_core.frontmatter import parse_frontmatter
from echo_core.ops.ingest import ingest
from echo_core.ops.lint.run import lint
from echo_core.ops.recall import recall
from tests.capture_kit import VaultBox
from tests.ingest_kit import (  # noqa: F401 - fixtures box, site
    BOILERPLATE,
    PART3_PHRASE,
    Page,
    Site,
    article_v2,
    ingest_box,
    ingest_site,
    loopback_site,
    site_pages,
)

REFS = "resources/references"
GEARS = f"{REFS}/gear-trains-explained.md"
GEARS_PARTS = f"{REFS}/gear-trains-explained"
ARTICLE = "/articles/gear-trains.html"
PART2 = f"{GEARS_PARTS}/gear-trains-explained-part-02.md"
PART5 = f"{GEARS_PARTS}/gear-trains-explained-part-05.md"


def _ingested(box: VaultBox) -> set[str]:
    base = box.vault / REFS
    return {p.relative_to(box.vault).as_posix() for p in base.rglob("*.md")
            if p.name != "README.md"}


def _parts(box: VaultBox, folder: str) -> list[str]:
    return sorted(p for p in _ingested(box) if p.startswith(folder + "/"))


@pytest.mark.parametrize(("path", "doc", "kind", "title", "n_parts"), [
    (ARTICLE, "gear-trains-explained", "html", "Gear Trains Explained", 5),
    ("/papers/escapements.pdf", "clock-escapements", "pdf", "Clock Escapements", 1),
    ("/docs/guide.md", "workshop-safety-guide", "markdown", "Workshop Safety Guide", 1),
])
def test_each_source_makes_one_document_and_its_parts(box: VaultBox, site: Site, path: str,
                                                      doc: str, kind: str, title: str,
                                                      n_parts: int) -> None:
    env = ingest(box.ctx(ECHO_NOW="2026-03-01T09:30:00+00:00"), site.url(path))
    assert env.ok and env.action == Action.CREATED, env
    assert env.data.source_type == kind and env.data.title == title
    doc_path = f"{REFS}/{doc}.md"
    parts = _parts(box, f"{REFS}/{doc}")
    assert _ingested(box) == {doc_path, *parts} and len(parts) == n_parts
    fm = box.frontmatter(doc_path)
    assert fm["type"] == "reference" and fm["status"] == "active"
    assert fm["source_url"] == site.url(path) and fm["parts"] == n_parts
    assert fm["fetched_at"] == "2026-03-01T09:30:00"
    assert fm["content_hash"].startswith("sha256:") and len(fm["content_hash"]) == 71
    text = box.read(doc_path)
    for n, part in enumerate(parts, 1):
        stem = part.rsplit("/", 1)[1][:-3]
        assert f"{n}. [[{stem}|{title} — part {n}" in text  # the document links each part
        part_text = box.read(part)
        assert f"[[{doc}]]" in part_text  # and each part links back
        assert parse_frontmatter(part_text)[0]["part"] == n
        assert f"\n# {title} — part {n}" in part_text
    index = box.index()  # the document is an entity; its parts are pieces of it
    assert {e.path for e in index.entities.values() if e.path.startswith(REFS)} == {doc_path}
    assert f"ingested reference [[{doc}]] ({n_parts} parts)" in box.read(
        "journal/daily/2026-03-01.md")


def test_pdf_text_and_markdown_body_are_kept(box: VaultBox, site: Site) -> None:
    ingest(box.ctx(), site.url("/papers/escapements.pdf"))
    ingest(box.ctx(), site.url("/docs/guide.md"))
    pdf = box.read(f"{REFS}/clock-escapements/clock-escapements-part-01.md")
    assert "The deadbeat escapement removes the recoil" in pdf  # page 2
    assert "anchor escapement made pendulum clocks" in pdf  # page 1
    guide = box.read(f"{REFS}/workshop-safety-guide/workshop-safety-guide-part-01.md")
    assert "## The lathe" in guide and "author: The Shop Team" not in guide


def test_html_boilerplate_is_not_in_any_note(box: VaultBox, site: Site) -> None:
    ingest(box.ctx(), site.url(ARTICLE))
    stored = "\n".join(box.read(p) for p in _ingested(box))
    assert "helical gears" in stored and "Backlash is the small clearance" in stored
    for noise in BOILERPLATE:
        assert noise not in stored, noise
    assert "Gearworks Media" not in box.frontmatter(GEARS).get("title", "")


def test_reingesting_unchanged_content_writes_nothing(box: VaultBox, site: Site) -> None:
    first = ingest(box.ctx(), site.url(ARTICLE))
    before = box.tree_digest()
    again = ingest(box.ctx(ECHO_TODAY="2026-03-05"), site.url(ARTICLE))
    assert again.ok and again.action == Action.UNCHANGED and not again.data.changed
    assert box.tree_digest() == before
    assert again.data.path == first.data.path
    assert {p.step for p in again.data.parts} == {"unchanged"}


def test_changed_page_updates_the_notes_in_place(box: VaultBox, site: Site) -> None:
    ingest(box.ctx(), site.url(ARTICLE))
    old_hash = box.frontmatter(GEARS)["content_hash"]
    site.pages[ARTICLE] = Page(article_v2())
    env = ingest(box.ctx(ECHO_TODAY="2026-03-05", ECHO_NOW="2026-03-05T08:00:00+00:00"),
                 site.url(ARTICLE))
    assert env.ok and env.action == Action.UPDATED, env
    fm = box.frontmatter(GEARS)
    assert fm["content_hash"] != old_hash and fm["parts"] == 3
    assert str(fm["created"]) == "2026-03-01" and str(fm["updated"]) == "2026-03-05"
    assert fm["fetched_at"] == "2026-03-05T08:00:00"
    parts = _parts(box, GEARS_PARTS)
    assert [p.rsplit("-", 1)[1] for p in parts] == ["01.md", "02.md", "03.md"]
    assert set(env.data.removed) == {f"{GEARS_PARTS}/gear-trains-explained-part-04.md",
                                     f"{GEARS_PARTS}/gear-trains-explained-part-05.md"}
    assert "four to one" in box.read(parts[1]) and "three to one" not in box.read(parts[1])
    stored = "\n".join(box.read(p) for p in _ingested(box))
    assert "Backlash is the small clearance" not in stored
    actions = {p.path.rsplit("-", 1)[1]: p.step for p in env.data.parts}
    assert actions == {"01.md": "unchanged", "02.md": "update", "03.md": "unchanged",
                       "04.md": "remove", "05.md": "remove"}
    assert str(box.frontmatter(parts[0])["updated"]) == "2026-03-01"  # untouched part
    # and once more: nothing to do
    before = box.tree_digest()
    assert ingest(box.ctx(ECHO_TODAY="2026-03-06"), site.url(ARTICLE)).action == \
        Action.UNCHANGED
    assert box.tree_digest() == before


def test_a_part_edited_by_hand_is_kept_and_reported(box: VaultBox, site: Site) -> None:
    ingest(box.ctx(), site.url(ARTICLE))
    part2 = f"{GEARS_PARTS}/gear-trains-explained-part-02.md"
    part5 = f"{GEARS_PARTS}/gear-trains-explained-part-05.md"
    for path in (part2, part5):
        mine = box.read(path).replace("## Notes\n", "## Notes\n\n- my own remark\n")
        (box.vault / path).write_text(mine, encoding="utf-8")
    edited = {p: box.read(p) for p in (part2, part5)}
    site.pages[ARTICLE] = Page(article_v2())
    env = ingest(box.ctx(ECHO_TODAY="2026-03-05"), site.url(ARTICLE))
    assert env.ok and set(env.data.kept_edited) == {part2, part5}
    assert {p: box.read(p) for p in (part2, part5)} == edited  # byte for byte
    assert f"{GEARS_PARTS}/gear-trains-explained-part-04.md" in env.data.removed
    assert "kept 2 note(s) edited by hand" in env.message


def test_related_links_added_later_survive_an_update(box: VaultBox, site: Site) -> None:
    ingest(box.ctx(), site.url(ARTICLE))
    part1 = f"{GEARS_PARTS}/gear-trains-explained-part-01.md"
    with_link = box.read(part1).rstrip("\n") + "\n- [[ada-lovelace]]\n"
    (box.vault / part1).write_text(with_link, encoding="utf-8")
    site.pages[ARTICLE] = Page(article_v2().replace(b"oldest known", b"earliest known"))
    env = ingest(box.ctx(ECHO_TODAY="2026-03-05"), site.url(ARTICLE))
    assert not env.data.kept_edited
    text = box.read(part1)
    assert "earliest known" in text and text.endswith("## Related\n- [[ada-lovelace]]\n")


def test_a_phrase_only_in_part_3_is_recalled_and_links_back(box: VaultBox,
                                                              site: Site) -> None:
    ingest(box.ctx(), site.url(ARTICLE))
    part3 = f"{GEARS_PARTS}/gear-trains-explained-part-03.md"
    assert [p for p in _ingested(box) if PART3_PHRASE in box.read(p)] == [part3]
    env = recall(box.ctx(), PART3_PHRASE)
    assert env.data.primary[0].path == part3
    assert "[[gear-trains-explained]]" in box.read(part3)
    assert GEARS in {h.path for h in (*env.data.primary[1:], *env.data.linked)}


def test_dry_run_lists_paths_and_sizes_and_writes_nothing(box: VaultBox, site: Site) -> None:
    before = box.tree_digest()
    env = ingest(box.ctx(), site.url(ARTICLE), dry_run=True)
    assert env.ok and env.action == Action.DRY_RUN and not env.data.changed
    assert box.tree_digest() == before
    assert env.data.document.path == GEARS and env.data.document.step == "create"
    assert [p.step for p in env.data.parts] == ["create"] * 5
    assert all(1000 <= p.chars <= 2400 for p in env.data.parts[:4])


def test_an_ingested_vault_passes_lint(box: VaultBox, site: Site) -> None:
    for path in site_pages():
        assert ingest(box.ctx(), site.url(path)).ok
    report = lint(box.ctx(), score=False)
    mine = [f for f in report.data.findings if REFS in f.path or "daily" in f.path]
    assert mine == [], mine


def test_local_files_are_ingested_with_their_path(box: VaultBox, tmp_path: Path) -> None:
    note = tmp_path / "Notes On Cams.md"
    note.write_text("# Cams\n\nA cam turns rotation into a reciprocating motion.\n",
                    encoding="utf-8")
    env = ingest(box.ctx(), str(note))
    assert env.ok and env.data.path == f"{REFS}/cams.md"
    assert box.frontmatter(f"{REFS}/cams.md")["source_path"] == str(note.resolve())
    before = box.tree_digest()
    assert ingest(box.ctx(), str(note)).action == Action.UNCHANGED
    assert box.tree_digest() == before


def test_two_sources_with_one_title_get_two_documents(box: VaultBox, tmp_path: Path) -> None:
    for n in (1, 2):
        (tmp_path / f"c{n}.md").write_text(f"# Cams\n\nVersion {n} of a cam note.\n",
                                           encoding="utf-8")
        assert ingest(box.ctx(), str(tmp_path / f"c{n}.md")).action == Action.CREATED
    assert {f"{REFS}/cams.md", f"{REFS}/cams-2.md"} <= _ingested(box)
    assert "Version 2" in box.read(f"{REFS}/cams-2/cams-2-part-01.md")


def _saved_by_hand(box: VaultBox, path: str) -> str:
    mine = box.read(path).replace("## Notes\n", "## Notes\n\n- my remark, saved mid-ingest\n")
    (box.vault / path).write_text(mine, encoding="utf-8")
    return mine


def _once_after(monkeypatch: pytest.MonkeyPatch, name: str,
                then: Callable[[], None]) -> list[int]:
    """``ingest_module.<name>`` runs ``then`` after its first call returns; the calls
    are counted."""
    real = getattr(ingest_module, name)
    calls: list[int] = []

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        result = real(*args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            then()
        return result

    monkeypatch.setattr(ingest_module, name, wrapped)
    return calls


def test_a_part_saved_between_plan_and_write_is_kept_as_edited(
        box: VaultBox, site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    ingest(box.ctx(), site.url(ARTICLE))
    before = sorted(_ingested(box))
    site.pages[ARTICLE] = Page(article_v2())  # part 2 changes: the plan updates it
    mine: list[str] = []
    plans = _once_after(monkeypatch, "plan_ingest",
                        lambda: mine.append(_saved_by_hand(box, PART2)))
    env = ingest(box.ctx(ECHO_TODAY="2026-03-05"), site.url(ARTICLE))
    assert env.ok and env.action == Action.UPDATED, env
    assert len(plans) == 2  # planned again after the save
    assert box.read(PART2) == mine[0]  # byte for byte
    assert PART2 in env.data.kept_edited
    assert "kept 1 note(s) edited by hand" in env.message
    steps = {p.path: p.step for p in env.data.parts}
    assert steps[PART2] == "kept-edited"
    assert box.frontmatter(GEARS)["parts"] == 3
    after = sorted(_ingested(box))
    assert set(after) <= set(before) and GEARS in after  # nothing doubled
    assert not any(p.endswith("-2.md") for p in after)


def test_a_surplus_part_saved_before_its_delete_is_kept(
        box: VaultBox, site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    ingest(box.ctx(), site.url(ARTICLE))
    site.pages[ARTICLE] = Page(article_v2())  # parts 4 and 5 become surplus
    mine: list[str] = []
    _once_after(monkeypatch, "commit", lambda: mine.append(_saved_by_hand(box, PART5)))
    env = ingest(box.ctx(ECHO_TODAY="2026-03-05"), site.url(ARTICLE))
    assert env.ok and env.action == Action.UPDATED, env
    assert box.read(PART5) == mine[0]
    part4 = f"{GEARS_PARTS}/gear-trains-explained-part-04.md"
    assert env.data.removed == (part4,) and not (box.vault / part4).exists()
    assert PART5 in env.data.kept_edited
    assert {p.path: p.step for p in env.data.parts}[PART5] == "kept-surplus"
    # the next ingest keeps it too (edited by hand), and removes nothing more
    again = ingest(box.ctx(ECHO_TODAY="2026-03-06"), site.url(ARTICLE))
    assert box.read(PART5) == mine[0] and again.data.removed == ()
