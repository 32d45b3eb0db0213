"""Recall's key-field boost (echo_core/ops/recall_fields.py): a note whose title or
aliases hold the query's words is lifted by ``key_field_boost`` per word; an expansion
(another name of an entity the query names) stands in for the query's words once; the
config can turn it off; ``--explain`` shows the factor."""

from __future__ import annotations

from pathlib import Path

from echo_core import invoke
from tests.capture_kit import VaultBox

#: The note about the query's subject (its name in the title) against one that names her
#: only in passing but holds the query's other word three times.
NOTES = {
    "journal/joanna-2-may.md": "# Joanna — 2 May 2022\n\nTried a dairy-free dessert recipe "
                               "for the family, it went down well.\n",
    "journal/nate-3-may.md": "# Nate — 3 May 2022\n\nRecipe after recipe after recipe. "
                             "Joanna says hi.\n",
}
QUERY = "what recipe did Joanna try"


def _box(tmp_path: Path, config: str = "") -> VaultBox:
    box = VaultBox(tmp_path).init()
    for path, text in NOTES.items():
        (box.vault / path).parent.mkdir(parents=True, exist_ok=True)
        (box.vault / path).write_text(text, encoding="utf-8")
    if config:
        folder = box.home / ".config" / "echo-memory"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.toml").write_text(config, encoding="utf-8")
    return box


def _order(box: VaultBox, query: str = QUERY, **args: object) -> list[str]:
    found = invoke(box.ctx(), "recall", {"query": query, "include_linked": False, **args})
    return [h.path for h in found.data.primary]


def test_a_note_titled_with_the_querys_name_outranks_one_that_only_mentions_it(
        tmp_path: Path) -> None:
    assert _order(_box(tmp_path))[0] == "journal/joanna-2-may.md"


def test_a_boost_of_1_in_the_config_leaves_the_rankers_order(tmp_path: Path) -> None:
    box = _box(tmp_path, "key_field_boost = 1\n")
    assert _order(box)[0] == "journal/nate-3-may.md"


def test_an_unusable_boost_in_the_config_falls_back_to_the_default(tmp_path: Path) -> None:
    box = _box(tmp_path, 'key_field_boost = "lots"\n')
    assert _order(box)[0] == "journal/joanna-2-may.md"


def test_the_boost_never_returns_more_than_the_limit_or_drops_a_hit(tmp_path: Path) -> None:
    box = _box(tmp_path)
    assert len(_order(box, limit=1)) == 1
    assert sorted(_order(box, limit=5)) == sorted(NOTES)


def test_an_expansion_in_a_title_stands_in_for_the_query_words_once(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    box.capture("Vantage Systems", kind="company", aliases=("VSYS",),
                body="Vendor of the telematics boxes. Pricing per vehicle.")
    box.capture("Renewal call with Vantage Systems", kind="meeting",
                body="Dana offered a 12% discount for a two-year term.")
    found = invoke(box.ctx(), "recall", {"query": "what discount did VSYS offer",
                                         "include_linked": False, "explain": True}).data
    first = found.primary[0]
    assert "renewal-call" in first.path
    keys = first.explain["key_fields"]
    assert keys["terms"] == [] and keys["expansions"] and keys["boost"] == 1.5
    company = next(h for h in found.primary if "vantage-systems" in h.path
                   and "renewal" not in h.path)
    assert len(company.explain["key_fields"]["terms"]) == 1  # the stem of "VSYS"
    assert company.explain["key_fields"]["boost"] == 1.5  # not 1.5 x 1.5


def test_explain_names_the_title_words_and_the_factor(tmp_path: Path) -> None:
    box = _box(tmp_path)
    found = invoke(box.ctx(), "recall", {"query": QUERY, "include_linked": False,
                                         "explain": True}).data
    by_path = {h.path: h.explain["key_fields"] for h in found.primary}
    assert by_path["journal/joanna-2-may.md"] == {"terms": ["joanna"], "expansions": [],
                                                  "boost": 1.5}
    assert by_path["journal/nate-3-may.md"]["boost"] == 1.0
