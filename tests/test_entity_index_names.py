"""``EntityIndex`` enters names into its lookup tables on the first name lookup: every
lookup answers as if each ``put`` had entered them at once."""

from __future__ import annotations

import threading

from echo_core.entities import EntityIndex
from echo_core.models import Entity


def _entity(slug: str, title: str, *aliases: str) -> Entity:
    return Entity(slug=slug, path=f"resources/people/{slug}.md", kind="person", title=title,
                  aliases=aliases)


def test_names_put_before_and_after_a_lookup_are_all_found() -> None:
    index = EntityIndex([_entity("ada", "Ada Lovelace", "Countess")])
    assert [e.slug for e in index.exact("ada lovelace")] == ["ada"]
    index.put(_entity("grace", "Grace Hopper"))
    assert [e.slug for e in index.exact("Grace-Hopper")] == ["grace"]
    assert [m.entity.slug for m in index.fuzzy("Hopper", min_score=0.5)] == ["grace"]
    assert index.document_frequency("countes") + index.document_frequency("countess") == 1


def test_an_entity_removed_before_any_lookup_is_never_found() -> None:
    index = EntityIndex([_entity("ada", "Ada Lovelace"), _entity("grace", "Grace Hopper")])
    index.remove("ada")
    assert index.exact("Ada Lovelace") == [] and index.fuzzy("Lovelace") == []
    assert "ada lovelace" not in index.names_by_key()
    assert index.by_path("resources/people/ada.md") is None


def test_a_replaced_entity_answers_only_to_its_new_names() -> None:
    index = EntityIndex([_entity("ada", "Ada Lovelace")])
    assert index.exact("Ada Lovelace")
    index.put(_entity("ada", "Augusta King"))
    assert index.exact("Ada Lovelace") == []
    assert [e.title for e in index.exact("augusta king")] == ["Augusta King"]
    index.put(_entity("ada", "Ada Byron"))  # replaced again before any lookup
    assert index.exact("Augusta King") == [] and index.exact("Ada Byron")


def test_threads_looking_up_a_fresh_index_at_once_all_find_every_name() -> None:
    entities = [_entity(f"p{i}", f"Person Number {i} Zed{i}") for i in range(3000)]
    index = EntityIndex(entities)
    start = threading.Barrier(8)
    misses: list[int] = []

    def look(offset: int) -> None:
        start.wait()
        for i in range(offset, 3000, 97):
            if [e.slug for e in index.exact(f"person number {i} zed{i}")] != [f"p{i}"]:
                misses.append(i)

    threads = [threading.Thread(target=look, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert misses == []


def test_entities_put_while_another_thread_looks_up_are_all_found_after() -> None:
    index = EntityIndex([_entity("seed", "Seed Person")])
    done = threading.Event()
    errors: list[BaseException] = []

    def look() -> None:
        try:
            while not done.is_set():
                index.exact("seed person")  # each lookup names whatever was put meanwhile
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    reader = threading.Thread(target=look)
    reader.start()
    try:
        for i in range(5000):
            index.put(_entity(f"w{i}", f"Written Person {i} Qa{i}"))
    finally:
        done.set()
        reader.join()
    lost = [i for i in range(5000) if not index.exact(f"written person {i} qa{i}")]
    assert errors == [] and lost == []
