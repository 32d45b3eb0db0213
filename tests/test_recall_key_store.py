"""The key fields kept by the ranker (``KeyFieldRanker``, bm25's ``key_hash``/``key_ptr``
and the delta's ``keyterms``): recall's key-field boost answers from the index exactly
what it answers from the notes, through rebuilds, hand edits (delta), removals and
compactions, and reads only the notes it returns."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from echo_core import invoke
from echo_core.ranker_upkeep import RankerUpkeep
from plugins.recall_bm25.index import Bm25Index
from tests.capture_kit import VaultBox

WORDS = ["harbor", "lantern", "ferry", "orchard", "granite", "willow", "copper", "meadow",
         "signal", "bridge", "falcon", "cedar"]


def _note(rng: random.Random, i: int) -> tuple[str, str]:
    """A note of one of four shapes: H1 title, file-name title, list aliases, one alias."""
    title = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
    body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 25)))
    shape = i % 4
    if shape == 0:
        return f"notes/n{i}.md", f"# {title.title()}\n\n{body}\n"
    if shape == 1:
        return f"notes/{title.replace(' ', '-')}-{i}.md", f"{body}\n"
    if shape == 2:
        aliases = ", ".join(rng.sample(WORDS, 2))
        return f"notes/n{i}.md", f"---\naliases: [{aliases}]\n---\n# {title}\n\n{body}\n"
    return f"notes/n{i}.md", f"---\naliases: {rng.choice(WORDS).upper()} Co\n---\n{body}\n"


def _box(tmp_path: Path, notes: int = 80) -> VaultBox:
    box = VaultBox(tmp_path).init()
    rng = random.Random(7)
    for i in range(notes):
        path, text = _note(rng, i)
        (box.vault / path).parent.mkdir(parents=True, exist_ok=True)
        (box.vault / path).write_text(text, encoding="utf-8")
    return box


QUERIES = ["harbor lantern", "ferry", "orchard granite willow", "copper meadow signal",
           "bridge falcon", "cedar harbor ferry", "lantern co", "willow"]


def _answers(box: VaultBox) -> list[list[tuple[str, float]]]:
    ctx = box.ctx()
    out = []
    for query in QUERIES:
        found = invoke(ctx, "recall", {"query": query, "include_linked": False, "limit": 5})
        out.append([(h.path, h.score) for h in found.data.primary])
    return out


def _same_with_and_without_the_store(box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    with_store = _answers(box)
    with monkeypatch.context() as patched:
        patched.setattr(RankerUpkeep, "key_terms_of", lambda self, paths, terms: None)
        read_back = _answers(box)
    assert with_store == read_back
    assert any(with_store)


def _index(box: VaultBox) -> Bm25Index:
    ranker = box.ctx().ranker_upkeep.persistent
    assert isinstance(ranker, Bm25Index)
    return ranker


def test_the_boost_from_the_index_equals_the_boost_from_the_notes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = _box(tmp_path)
    _same_with_and_without_the_store(box, monkeypatch)  # the base, just built
    # hand edits: new aliases, a new title, a note removed, one added (all in the delta)
    edited = box.vault / "notes" / "n2.md"
    edited.write_text("---\naliases: [cedar, falcon]\n---\n# Granite\n\nferry ferry\n",
                      encoding="utf-8")
    (box.vault / "notes" / "n0.md").write_text("# Willow Signal\n\nharbor\n", encoding="utf-8")
    (box.vault / "notes" / "n4.md").unlink()
    (box.vault / "notes" / "new-lantern-co.md").write_text("copper meadow\n", encoding="utf-8")
    _same_with_and_without_the_store(box, monkeypatch)
    assert _index(box).compact()
    _same_with_and_without_the_store(box, monkeypatch)  # folded into a new base
    invoke(box.ctx(), "reindex", {})
    _same_with_and_without_the_store(box, monkeypatch)


def test_the_index_holds_each_notes_title_and_alias_terms(tmp_path: Path) -> None:
    box = _box(tmp_path, notes=40)
    invoke(box.ctx(), "recall", {"query": "harbor"})  # builds the base
    (box.vault / "notes" / "n2.md").write_text("---\naliases: [Orchard Cedar]\n---\nbody\n",
                                               encoding="utf-8")
    (box.vault / "notes" / "n6.md").unlink()
    invoke(box.ctx(), "recall", {"query": "harbor"})  # the freshness check indexes both
    ctx = box.ctx()
    index = _index(box)
    terms = [ctx.tokenizer.tokenize(w)[0] for w in [*WORDS, "co"]]
    paths = sorted(p for p in ctx.vault.storage.list("notes"))
    held = index.key_terms_of([*paths, "notes/n6.md", "notes/none.md"], terms)
    assert "notes/n6.md" not in held and "notes/none.md" not in held
    assert sorted(held) == paths
    for path in paths:
        text = ctx.vault.storage.read(path)
        keys = ctx.note_views.key_terms(text, path, ctx.tokenizer)
        assert held[path] == frozenset(t for t in terms if t in keys), path
    assert held["notes/n2.md"] == {ctx.tokenizer.tokenize("orchard")[0],
                                   ctx.tokenizer.tokenize("cedar")[0]}


def test_a_boosted_recall_reads_only_the_notes_it_returns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = _box(tmp_path)
    ctx = box.ctx()
    invoke(ctx, "recall", {"query": "harbor"})  # builds the base
    storage = ctx.vault.storage
    read: list[str] = []
    original = storage.read_many

    def counted(paths: list[str]) -> dict[str, str | None]:
        read.extend(paths)
        return original(paths)

    monkeypatch.setattr(storage, "read_many", counted)
    found = invoke(ctx, "recall", {"query": "cedar harbor ferry", "include_linked": False,
                                   "limit": 3})
    assert len(found.data.primary) == 3
    assert sorted(read) == sorted(h.path for h in found.data.primary)
