"""Auto-linking on capture (SPEC §2.1 step 6): whole-word names of 4+ characters that are
not common words get reciprocal `## Related` links; the neighbour's index hash follows."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.ops.capture import content_hash
from tests.capture_kit import VaultBox, related_targets


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def _snapshot(box: VaultBox, paths: list[str]) -> dict[str, bytes]:
    return {p: (box.vault / p).read_bytes() for p in paths}


@pytest.mark.parametrize(("title", "kind"), [
    ("Bob", "person"), ("AI", "concept"), ("Eve", "person"),
    ("Memory", "concept"), ("Plan", "concept"), ("Meeting", "concept"), ("Next Plan", "concept"),
])
def test_short_names_and_common_words_never_link(box: VaultBox, title: str, kind: str) -> None:
    other = box.capture(title, kind=kind, body="exists")
    assert other.action == "created"
    before = _snapshot(box, [other.data.path])
    env = box.capture("Emily Stone", kind="person",
                      body=f"Talked with {title} today; {title.lower()} came up twice. {title}!")
    assert env.data.links_added == ()
    assert related_targets(box.read(env.data.path)) == []
    assert _snapshot(box, [other.data.path]) == before


def test_names_link_only_as_whole_words(box: VaultBox) -> None:
    adam = box.capture("Adam Smith", kind="person", body="economist", aliases=("Adam",))
    before = _snapshot(box, [adam.data.path])
    env = box.capture("Emily Stone", kind="person",
                      body="She was adamant; Adams and Smithson and AdamSmith are others.")
    assert env.data.links_added == ()
    assert related_targets(box.read(env.data.path)) == []
    assert _snapshot(box, [adam.data.path]) == before
    # the alias itself, as a whole word, does link
    later = box.capture("Fred Stone", kind="person", body="Adam, the economist, replied.")
    assert later.data.links_added == (adam.data.path,)


def test_links_are_reciprocal_and_reported(box: VaultBox) -> None:
    ada = box.capture("Ada Lovelace", kind="person", body="Mathematician")
    env = box.capture("Charles Babbage", kind="person",
                      body="Designed the engine.\nWorked with Ada Lovelace on notes.")
    assert env.data.links_added == (ada.data.path,)
    assert related_targets(box.read(env.data.path)) == ["ada-lovelace"]
    assert related_targets(box.read(ada.data.path)) == ["charles-babbage"]
    # the rest of the neighbour is untouched: one line added under ## Related
    old = box.read(ada.data.path).replace("- [[charles-babbage]]\n", "")
    assert old.rstrip("\n").endswith("## Related")


def test_alias_mentions_link_to_the_entity(box: VaultBox) -> None:
    ada = box.capture("Ada Lovelace", kind="person", body="x", aliases=("Countess of Lovelace",))
    env = box.capture("Charles Babbage", kind="person", body="Wrote to the countess of lovelace.")
    assert env.data.links_added == (ada.data.path,)
    assert related_targets(box.read(ada.data.path)) == ["charles-babbage"]


def test_dated_notes_link_by_their_file_stem(box: VaultBox) -> None:
    ada = box.capture("Ada Lovelace", kind="person", body="Mathematician")
    env = box.capture("Engine Review", kind="meeting", body="Ada Lovelace presented.")
    assert env.data.path == "meetings/2026-03-01-engine-review.md"
    assert related_targets(box.read(ada.data.path)) == ["2026-03-01-engine-review"]
    assert related_targets(box.read(env.data.path)) == ["ada-lovelace"]


def test_an_update_links_entities_named_in_its_body(box: VaultBox) -> None:
    ada = box.capture("Ada Lovelace", kind="person", body="Mathematician")
    babbage = box.capture("Charles Babbage", kind="person", body="Engineer")
    assert babbage.data.links_added == ()
    env = box.capture("Charles Babbage", kind="person", body="Corresponded with Ada Lovelace",
                      today="2026-03-02")
    assert env.action == "updated" and env.data.links_added == (ada.data.path,)
    assert related_targets(box.read(babbage.data.path)) == ["ada-lovelace"]
    assert related_targets(box.read(ada.data.path)) == ["charles-babbage"]


def test_linking_twice_adds_no_second_link(box: VaultBox) -> None:
    ada = box.capture("Ada Lovelace", kind="person", body="Mathematician")
    box.capture("Charles Babbage", kind="person", body="Knew Ada Lovelace")
    env = box.capture("Charles Babbage", kind="person", body="Wrote to Ada Lovelace again",
                      today="2026-03-02")
    assert env.data.links_added == ()
    assert related_targets(box.read(ada.data.path)) == ["charles-babbage"]
    assert related_targets(box.read(env.data.path)) == ["ada-lovelace"]


def test_several_entities_in_one_body_all_link(box: VaultBox) -> None:
    ada = box.capture("Ada Lovelace", kind="person", body="x")
    acme = box.capture("Acme Robotics", kind="company", body="x")
    env = box.capture("Charles Babbage", kind="person",
                      body="Ada Lovelace introduced him to Acme Robotics.")
    assert env.data.links_added == (ada.data.path, acme.data.path)
    assert related_targets(box.read(env.data.path)) == ["ada-lovelace", "acme-robotics"]
    assert related_targets(box.read(acme.data.path)) == ["charles-babbage"]


def test_neighbour_index_hash_is_refreshed(box: VaultBox) -> None:
    ada = box.capture("Ada Lovelace", kind="person", body="Mathematician")
    old_h = box.entity("ada-lovelace").h
    box.capture("Charles Babbage", kind="person", body="Worked with Ada Lovelace.")
    new_h = box.entity("ada-lovelace").h
    assert new_h != old_h
    assert new_h == content_hash(box.read(ada.data.path))
    assert box.entity("charles-babbage").h == content_hash(
        box.read("resources/people/charles-babbage.md"))


def test_a_note_never_links_to_itself(box: VaultBox) -> None:
    env = box.capture("Ada Lovelace", kind="person", body="Ada Lovelace wrote about Ada Lovelace.")
    assert env.data.links_added == ()
    assert related_targets(box.read(env.data.path)) == []
