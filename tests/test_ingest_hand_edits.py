"""``ingest`` keeps a person's save that lands while it runs: a note saved between the
plan's read and the write is planned again and kept as edited by hand; a surplus part
saved after the writes is not deleted. Nothing is doubled: one document, its parts once,
no ``-2`` note."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import echo_core.ops.ingest as ingest_module
from echo_core.actions import Action
from echo_core.ops.ingest import ingest
from tests.capture_kit import VaultBox
from tests.ingest_kit import Page, Site, article_v2, loopback_site, site_pages

REFS = "resources/references"
GEARS = f"{REFS}/gear-trains-explained.md"
GEARS_PARTS = f"{REFS}/gear-trains-explained"
ARTICLE = "/articles/gear-trains.html"
PART2 = f"{GEARS_PARTS}/gear-trains-explained-part-02.md"
PART5 = f"{GEARS_PARTS}/gear-trains-explained-part-05.md"


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


@pytest.fixture()
def site() -> Iterator[Site]:
    with loopback_site(site_pages()) as running:
        yield running


def _notes(box: VaultBox) -> list[str]:
    return sorted(p.relative_to(box.vault).as_posix()
                  for p in (box.vault / REFS).rglob("*.md") if p.name != "README.md")


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
    before = _notes(box)
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
    after = _notes(box)
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
