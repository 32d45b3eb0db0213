"""``Bm25Index.priors_of``: the prior (static weight x freshness) each indexed note is
scored with, read by path from the live version (the delta's row, else the base's
unless tombstoned), for rankers that find notes another way (``hybrid``)."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from echo_core import IndexDoc, WeightedTerm
from plugins.recall_bm25 import bm25_factory
from plugins.recall_bm25.scalar_math import freshness_of
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer

TODAY = _dt.date(2026, 3, 1)


def _doc(path: str, weight: float, updated: str) -> IndexDoc:
    return IndexDoc(path=path, title=path, text=f"{path}\nlighthouse keeper", weight=weight,
                    updated=updated)


def test_priors_follow_the_live_version_of_each_note(tmp_path: Path) -> None:
    index = bm25_factory(PorterLiteTokenizer(), str(tmp_path))
    index.rebuild([_doc("a.md", 1.0, "2026-03-01"), _doc("b.md", 0.5, "2025-09-02"),
                   _doc("c.md", 0.6, "2026-03-01")])
    index.set_today(TODAY.toordinal())
    index.upsert(_doc("c.md", 1.1, "2026-02-01"))  # edited: the delta's row counts
    index.remove("a.md")
    found = index.priors_of(["a.md", "b.md", "c.md", "missing.md"])
    today = TODAY.toordinal()
    assert set(found) == {"b.md", "c.md"}
    assert found["b.md"] == pytest.approx(
        0.5 * freshness_of(_dt.date(2025, 9, 2).toordinal(), today))
    assert found["c.md"] == pytest.approx(
        1.1 * freshness_of(_dt.date(2026, 2, 1).toordinal(), today))
    assert found["b.md"] < 0.5  # half a year old: freshness below 1


def test_a_prior_is_the_ratio_bm25_scores_two_equal_texts_by(tmp_path: Path) -> None:
    index = bm25_factory(PorterLiteTokenizer(), str(tmp_path))
    text = "the lighthouse keeper rows out at dawn"
    index.rebuild([IndexDoc(path="x.md", title="", text=text, weight=1.0),
                   IndexDoc(path="y.md", title="", text=text, weight=0.5)])
    index.set_today(TODAY.toordinal())
    scores = dict(index.search([WeightedTerm("lighthous")], 5))
    priors = index.priors_of(["x.md", "y.md"])
    assert scores["y.md"] / scores["x.md"] == pytest.approx(priors["y.md"] / priors["x.md"])
