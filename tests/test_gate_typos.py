"""The gate's typo search (``name_typos``) computes its edit distances itself: the same
answers as rapidfuzz's optimal string alignment distance, and the same typos as the
search it replaced (rapidfuzz's ``process.extract`` over every key, then the rule)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import process
from rapidfuzz.distance import OSA

from echo_core.entities import EntityIndex
from echo_core.models import Entity
from plugins.gate_duplicate.name_typos import (
    LONG_NAME,
    MAX_EDITS,
    MIN_WORD,
    Typo,
    one_edit,
    osa_distance,
    typos_of,
)

WORD = st.text(alphabet="abcdeé1 ", min_size=0, max_size=9)


@settings(derandomize=True, max_examples=2000, deadline=None)
@given(WORD, WORD)
def test_one_edit_is_an_osa_distance_of_one(a: str, b: str) -> None:
    assert one_edit(a, b) is (OSA.distance(a, b) == 1)


@settings(derandomize=True, max_examples=2000, deadline=None)
@given(WORD, WORD)
def test_osa_distance_is_rapidfuzz_s(a: str, b: str) -> None:
    assert osa_distance(a, b) == OSA.distance(a, b)


def _reference_edits(a: str, b: str) -> int | None:
    """The rule as it was written against rapidfuzz."""
    if a == b:
        return None
    if a.replace(" ", "") == b.replace(" ", ""):
        return 1 if len(a.replace(" ", "")) >= MIN_WORD else None
    words_a, words_b = a.split(), b.split()
    if len(words_a) != len(words_b):
        return None
    allowed = MAX_EDITS if max(len(a), len(b)) >= LONG_NAME else 1
    edits = 0
    for wa, wb in zip(words_a, words_b, strict=True):
        if wa == wb:
            continue
        if max(len(wa), len(wb)) < MIN_WORD or any(c.isdigit() for c in wa + wb):
            return None
        distance = int(OSA.distance(wa, wb, score_cutoff=1))
        if distance > 1:
            return None
        edits += distance
        if edits > allowed:
            return None
    return edits or None


def _reference_typos(mention: str, keys: list[str]) -> list[Typo]:
    if len(mention.replace(" ", "")) < MIN_WORD:
        return []
    found = []
    for key, _d, _i in process.extract(mention, keys, scorer=OSA.distance,
                                       score_cutoff=MAX_EDITS, limit=None):
        edits = _reference_edits(mention, key)
        if edits is not None:
            found.append(Typo(key, edits, 1 - edits / max(len(mention), len(key))))
    found.sort(key=lambda t: (t.edits, t.key))
    return found


def _variants(name: str, draw: st.DrawFn) -> list[str]:
    out = []
    for _ in range(draw(st.integers(0, 12))):
        chars = list(name)
        for _ in range(draw(st.integers(1, 3))):
            op = draw(st.sampled_from(["sub", "del", "ins", "swap", "space", "unspace"]))
            at = draw(st.integers(0, max(len(chars) - 1, 0)))
            if op == "sub" and chars:
                chars[at] = draw(st.sampled_from("aeioux9 "))
            elif op == "del" and chars:
                del chars[at]
            elif op == "ins":
                chars.insert(at, draw(st.sampled_from("aeioux9")))
            elif op == "swap" and at + 1 < len(chars):
                chars[at], chars[at + 1] = chars[at + 1], chars[at]
            elif op == "space":
                chars.insert(at, " ")
            elif op == "unspace" and " " in chars:
                chars.remove(" ")
        out.append(" ".join("".join(chars).split()))
    return [k for k in out if k]


@st.composite
def mention_and_keys(draw: st.DrawFn) -> tuple[str, list[str]]:
    words = st.text(alphabet="abcdefghiklmnoprstu", min_size=1, max_size=9)
    mention = " ".join(draw(st.lists(words, min_size=1, max_size=4)))
    keys = _variants(mention, draw) + draw(st.lists(
        st.builds(" ".join, st.lists(words, min_size=1, max_size=4)), max_size=6))
    return mention, sorted(set(keys))


@settings(derandomize=True, max_examples=600, deadline=None)
@given(mention_and_keys())
def test_typos_are_the_ones_the_rapidfuzz_search_found(case: tuple[str, list[str]]) -> None:
    mention, keys = case
    assert typos_of(mention, keys) == _reference_typos(mention, keys)
    index = EntityIndex(Entity(slug=f"e{n}", path=f"resources/concepts/e{n}.md",
                               kind="concept", title=key) for n, key in enumerate(keys))
    near = index.name_keys_sized(len(mention) - MAX_EDITS, len(mention) + MAX_EDITS,
                                 spaces=mention.count(" "), squashed=mention.replace(" ", ""))
    # the index's candidates lose none of them (slug keys of "eN" never are typos here)
    assert typos_of(mention, near) == _reference_typos(
        mention, [k for k in keys if k not in {f"e{n}" for n in range(len(keys))}])
