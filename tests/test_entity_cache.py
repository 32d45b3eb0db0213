"""The persistent entity name cache (``ctx.entity_names``): same answers as the in-memory
``EntityIndex``, kept in sync with the vault's entity store across processes, journal
growth, compaction and a corrupt or unusable cache file."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import echo_core.entities
from echo_core.context import EchoContext
from echo_core.entities import JOURNAL_PATH, SNAPSHOT_PATH, EntityIndex, EntityStore
from echo_core.entity_cache import EntityNames
from echo_core.models import Entity
from echo_core.names import name_key, name_tokens, token_set_similarity
from tests.capture_kit import VaultBox

REPO = Path(__file__).resolve().parent.parent

ENTITIES = [
    Entity(slug="vantage-systems", path="resources/companies/vantage-systems.md", kind="company",
           title="Vantage Systems", aliases=("VS Corp", "Vantage")),
    Entity(slug="vantage-point", path="resources/concepts/vantage-point.md", kind="concept",
           title="Vantage Point"),
    Entity(slug="ada-lovelace", path="resources/people/ada-lovelace.md", kind="person",
           title="Ada Lovelace", aliases=("Countess of Lovelace",)),
    Entity(slug="kubernetes", path="resources/concepts/kubernetes.md", kind="concept",
           title="Kubernetes", aliases=("k8s",)),
    Entity(slug="cafe-creme", path="resources/concepts/cafe-creme.md", kind="concept",
           title="Café Crème", aliases=("Cafés Crèmes",)),
    Entity(slug="series-a", path="resources/concepts/series-a.md", kind="concept",
           title="Series A"),
] + [
    Entity(slug=f"systems-lab-{i}", path=f"resources/companies/systems-lab-{i}.md",
           kind="company", title=f"Systems Lab {i}") for i in range(6)
]

MENTIONS = ["Vantage Systems", "vantage", "VS Corp pricing", "systems", "systems lab 3",
            "lovelace", "Countess", "k8s rollout", "cafe creme", "CAFES CREMES", "series a",
            "a", "the", "", "nothing known here", "Vantage-Systems!", "lab"]


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def _apply(ctx: EchoContext, puts: Sequence[Entity] = (), deletes: Sequence[str] = ()) -> None:
    with ctx.storage.lock():
        ctx.entities.load()
        ctx.entities.apply(puts=puts, deletes=deletes)


def _same_answers(names: EntityNames, index: EntityIndex) -> None:
    """Every lookup of the cache equals the in-memory index's."""
    assert len(names) == len(index)
    assert names.get_many(index.entities) == index.entities
    assert names.paths_of([*index.entities, "no-such-slug"]) == {
        slug: e.path for slug, e in index.entities.items()}
    for slug, entity in index.entities.items():
        assert names.get(slug) == entity
    assert names.get("no-such-slug") is None
    tokens = {t for e in index.entities.values() for n in (e.title, *e.aliases) for t in name_tokens(n)}
    for token in tokens | {"absent"}:
        assert names.document_frequency(token) == index.document_frequency(token), token
    for entity in index.entities.values():
        assert names.by_path(entity.path) == entity
        for mention in MENTIONS:
            assert names.shared_tokens(mention, entity) == index.shared_tokens(mention, entity)
    assert names.by_path("resources/concepts/absent.md") is None
    keys = [name_key(m) for m in MENTIONS] + [name_key(e.slug) for e in index.entities.values()]
    assert names.slugs_by_keys(keys) == index.slugs_by_keys(keys)
    for shortest, longest in ((0, 100), (5, 7), (12, 12), (30, 40)):
        assert names.name_keys_sized(shortest, longest) == index.name_keys_sized(shortest, longest)
        for spaces, squashed in ((0, None), (1, None), (1, "vantagesystems"), (2, "x")):
            assert names.name_keys_sized(shortest, longest, spaces=spaces, squashed=squashed) \
                == index.name_keys_sized(shortest, longest, spaces=spaces, squashed=squashed)
    for mention in MENTIONS:
        for kind in (None, "company", "concept"):
            assert names.exact(mention, kind) == index.exact(mention, kind), (mention, kind)
            assert names.named(mention, kind) == index.named(mention, kind), (mention, kind)
            for max_df in (None, 1, 3):
                for min_score in (0.5, 0.8):
                    for limit in (1, 2, 50):  # a small limit stops at its perfect scores
                        got = names.fuzzy(mention, kind=kind, min_score=min_score,
                                          limit=limit, max_df=max_df)
                        want = index.fuzzy(mention, kind=kind, min_score=min_score,
                                           limit=limit, max_df=max_df)
                        assert got == want, (mention, kind, max_df, min_score, limit)


def test_lookups_equal_the_in_memory_index(box: VaultBox) -> None:
    ctx = box.ctx()
    _apply(ctx, ENTITIES)
    assert (box.state).exists()
    _same_answers(ctx.entity_names, box.index())
    assert ctx.entity_names.path is not None and ctx.entity_names.path.is_file()


def test_a_fresh_process_reads_the_cache_without_loading_the_store(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    _apply(box.ctx(), ENTITIES)
    box.ctx().entity_names.get("kubernetes")  # builds the cache file

    def no_load(self: EntityStore) -> EntityIndex:
        raise AssertionError("the entity store must not be loaded")

    monkeypatch.setattr(EntityStore, "load", no_load)
    monkeypatch.setattr(EntityNames, "_rebuild", no_load)
    ctx = box.ctx()
    assert ctx.entity_names.get("kubernetes") == ENTITIES[3]
    assert [m.entity.slug for m in ctx.entity_names.fuzzy("VS Corp", limit=1)] == ["vantage-systems"]


def test_a_capture_in_another_process_is_seen(box: VaultBox) -> None:
    ctx = box.ctx()
    _apply(ctx, ENTITIES)
    assert ctx.entity_names.exact("Grace Hopper") == []
    script = (
        "import json, sys\n"
        "from echo_core.context import create_context\n"
        "from echo_core.models import CaptureRequest\n"
        "from echo_core.ops.capture import capture\n"
        "a = json.loads(sys.argv[1])\n"
        "ctx = create_context(vault=a['vault'], state_dir=a['state'], env=a['env'])\n"
        "env = capture(ctx, CaptureRequest(title='Grace Hopper', kind='person', body='COBOL.'))\n"
        "assert env.ok, env\n"
    )
    spec = {"vault": str(box.vault), "state": str(box.state), "env": box.env()}
    env = {**os.environ, **box.env()}
    proc = subprocess.run([sys.executable, "-c", script, json.dumps(spec)], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    found = ctx.entity_names.exact("grace hopper", "person")
    assert [e.slug for e in found] == ["grace-hopper"]
    _same_answers(ctx.entity_names, box.index())


def test_journal_growth_replays_only_the_new_lines(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = box.ctx()
    _apply(ctx, ENTITIES)
    names = box.ctx().entity_names
    names.get("kubernetes")

    def no_rebuild(*args: object) -> None:
        raise AssertionError("journal growth must not rebuild the cache")

    monkeypatch.setattr(EntityNames, "_rebuild", no_rebuild)
    renamed = Entity(slug="kubernetes", path="resources/concepts/kubernetes.md", kind="concept",
                     title="Kubernetes", aliases=("kube",))
    _apply(ctx, [renamed], deletes=["series-a"])
    assert names.get("kubernetes") == renamed
    assert names.get("series-a") is None
    assert names.exact("k8s") == [] and names.exact("kube") == [renamed]
    assert names.document_frequency("k8s") == 0
    _same_answers(names, box.index())


def test_compaction_is_followed(box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(echo_core.entities, "COMPACT_AFTER", 4)
    ctx = box.ctx()
    names = box.ctx().entity_names
    for entity in ENTITIES[:3]:
        _apply(ctx, [entity])
        names.get(entity.slug)
    snapshot_before = (box.vault / SNAPSHOT_PATH).read_text()
    for entity in ENTITIES[3:]:
        _apply(ctx, [entity])
    _apply(ctx, deletes=["vantage-point"])
    assert (box.vault / SNAPSHOT_PATH).read_text() != snapshot_before  # compacted
    assert (box.vault / JOURNAL_PATH).read_text().count("\n") < 4
    assert names.get("vantage-point") is None
    _same_answers(names, box.index())


def test_a_rewritten_journal_forces_a_full_resync(box: VaultBox) -> None:
    ctx = box.ctx()
    _apply(ctx, ENTITIES[:2])
    names = box.ctx().entity_names
    assert names.get("vantage-point") is not None
    # the same number of bytes, different content: the replayed prefix no longer matches
    journal = box.vault / JOURNAL_PATH
    text = journal.read_text()
    journal.write_text(text.replace("vantage-point", "vantage-pxint"))
    os.utime(journal, ns=(1, 1))
    assert names.get("vantage-point") is None
    assert names.get("vantage-pxint") is not None
    _same_answers(names, EntityStore(ctx.storage).load())


def test_a_corrupt_cache_is_rebuilt(box: VaultBox) -> None:
    ctx = box.ctx()
    _apply(ctx, ENTITIES)
    path = ctx.entity_names.path
    assert path is not None
    ctx.entity_names.get("kubernetes")
    ctx.entity_names.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 500)
    fresh = box.ctx().entity_names
    assert fresh.get("kubernetes") == ENTITIES[3]
    _same_answers(fresh, box.index())
    with sqlite3.connect(path) as db:  # a valid database again
        assert db.execute("SELECT COUNT(*) FROM entities").fetchone()[0] == len(box.index())


def test_a_cache_of_another_schema_is_rebuilt(box: VaultBox) -> None:
    ctx = box.ctx()
    _apply(ctx, ENTITIES)
    path = ctx.entity_names.path
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE entities(whatever TEXT)")
        db.execute("PRAGMA user_version = 999")
    _same_answers(box.ctx().entity_names, box.index())


def test_an_unusable_cache_path_falls_back_to_memory(box: VaultBox) -> None:
    ctx = box.ctx()
    _apply(ctx, ENTITIES)
    blocked = box.root / "blocked"
    blocked.mkdir()  # a folder where the database file should be: cannot be opened
    names = EntityNames(ctx.storage, blocked)
    assert names.get("kubernetes") == ENTITIES[3]
    assert names.path is None
    _same_answers(names, box.index())


def test_an_empty_vault_has_no_names(box: VaultBox) -> None:
    names = box.ctx().entity_names
    assert names.get("anything") is None
    assert names.fuzzy("anything") == []
    assert names.document_frequency("anything") == 0


def test_max_df_only_limits_which_words_collect_candidates() -> None:
    index = EntityIndex(ENTITIES)
    assert index.document_frequency("system") == 7
    # "systems" names 7 entities: over the cap it collects none, so only "vantage" does
    capped = index.fuzzy("vantage systems", max_df=3, limit=10)
    assert {m.entity.slug for m in capped} == {"vantage-systems", "vantage-point"}
    # ... but every query word still counts in the score
    assert capped[0].entity.slug == "vantage-systems" and capped[0].score == 1.0
    uncapped = index.fuzzy("vantage systems", limit=10)
    assert {m.entity.slug for m in uncapped} >= {f"systems-lab-{i}" for i in range(6)}
    assert index.fuzzy("systems", max_df=3) == []
    assert index.fuzzy("systems", max_df=7) == index.fuzzy("systems")


def test_removing_and_replacing_keeps_the_index_consistent() -> None:
    index = EntityIndex(ENTITIES)
    index.put(Entity(slug="kubernetes", path="x/kubernetes.md", kind="concept", title="K8s Platform"))
    index.remove("vantage-systems")
    fresh = EntityIndex([e for e in index.entities.values()])
    for mention in MENTIONS:
        assert index.fuzzy(mention, limit=50) == fresh.fuzzy(mention, limit=50)
        assert index.exact(mention) == fresh.exact(mention)
    assert index.names_by_key() == fresh.names_by_key()
    assert index.document_frequency("kubernete") == 0


_TOKEN_SETS = st.frozensets(st.sampled_from("abcdefg"), max_size=5)


@given(query=_TOKEN_SETS, names=st.lists(_TOKEN_SETS, max_size=4))
def test_name_score_is_the_best_token_set_similarity_over_the_names(
        query: frozenset[str], names: list[frozenset[str]]) -> None:
    expected = max((token_set_similarity(query, n) for n in names), default=0.0)
    assert echo_core.entities.name_score(query, tuple(names)) == expected


def test_one_snapshot_checks_the_store_once_and_sees_changes_after(box: VaultBox) -> None:
    ctx = box.ctx()
    _apply(ctx, ENTITIES[:2])
    names = ctx.entity_names
    writer = box.ctx()  # another context: as another process would
    extra = ENTITIES[2]
    with names.one_snapshot():
        assert names.get("vantage-systems") is not None  # the first lookup syncs
        _apply(writer, [extra])
        with names.one_snapshot():  # nested: still the same snapshot
            assert names.get(extra.slug) is None
        assert names.paths_of([extra.slug]) == {}
    assert names.get(extra.slug) == extra  # outside: the change is seen at once
    with names.one_snapshot():
        _apply(writer, deletes=[extra.slug])
        assert names.get(extra.slug) is None  # a block's first lookup sees the latest state


def test_a_recall_right_after_a_capture_sees_the_new_entity(box: VaultBox) -> None:
    from echo_core.ops.recall import recall

    ctx = box.ctx()
    recall(ctx, "anything at all")
    box.capture("Grace Hopper", kind="person", body="Wrote the first compiler.")
    box.capture("Compiler Notes", kind="concept", body="See [[grace-hopper]] for history.")
    found = recall(ctx, "compiler notes history").data
    assert "resources/people/grace-hopper.md" in {h.path for h in (*found.primary, *found.linked)}


def test_operation_ids_are_known_without_loading_the_store(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    """``has_op`` answers as ``EntityStore.has_op`` does, from the journal and from the ids
    a compacted snapshot keeps, across processes (a fresh cache is rebuilt with them)."""
    monkeypatch.setattr(echo_core.entities, "COMPACT_AFTER", 4)
    ctx = box.ctx()
    names = box.ctx().entity_names
    with ctx.storage.lock():
        for n, entity in enumerate(ENTITIES[:3]):
            ctx.entities.record([entity], op_id=f"op-{n}")
    assert [names.has_op(f"op-{n}") for n in range(4)] == [True, True, True, False]
    with ctx.storage.lock():
        for n, entity in enumerate(ENTITIES[3:], 3):
            ctx.entities.record([entity], op_id=f"op-{n}")
    assert (box.vault / JOURNAL_PATH).read_text().count("\n") < 4  # compacted
    fresh = box.ctx().entity_names
    fresh.path.unlink()  # type: ignore[union-attr]
    for cache in (names, fresh):
        for n in range(len(ENTITIES)):
            assert cache.has_op(f"op-{n}") is box.ctx().entities.has_op(f"op-{n}") is True
        assert not cache.has_op("op-never")
    _same_answers(fresh, box.index())


def test_a_capture_answers_from_the_cache_without_loading_the_store(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    """Create, update, auto-link, a gate stop, a replayed operation, resolve and link:
    none loads every entity (a fresh process at 100k entities would pay a second and
    190 MB for it)."""
    from echo_core.models import CaptureRequest
    from echo_core.ops.capture import capture
    from echo_core.ops.resolve import link, resolve

    assert box.capture("Grace Hopper", kind="person", body="COBOL").ok
    box.ctx().entity_names.get("grace-hopper")  # the cache exists, as after any command

    def no_load(self: EntityStore) -> EntityIndex:
        raise AssertionError("the entity store must not be loaded")

    monkeypatch.setattr(EntityStore, "load", no_load)
    assert box.capture("Ada Lovelace", kind="person", body="Worked with Grace Hopper.").ok
    assert "[[grace-hopper]]" in box.read("resources/people/ada-lovelace.md")
    assert box.capture("Grace Hopper", kind="person", body="Nanoseconds.").action == "updated"
    assert box.capture("Grace Hoper", kind="person", body="typo").action == "duplicate-gate"
    request = CaptureRequest(title="Alan Turing", kind="person", body="Enigma")
    assert capture(box.ctx(), request, op_id="0123456789abcdef").action == "created"
    assert capture(box.ctx(), request, op_id="0123456789abcdef").action == "unchanged"
    assert resolve(box.ctx(), "grace hopper").data.slug == "grace-hopper"
    assert resolve(box.ctx(), "Grace Hoppr").data.candidates[0]["slug"] == "grace-hopper"
    assert link(box.ctx(), "Alan Turing", "grace-hopper").action == "linked"
    monkeypatch.undo()
    assert {"ada-lovelace", "alan-turing", "grace-hopper"} <= set(box.index().entities)
    assert "grace-hoper" not in box.index().entities


def test_an_unreadable_journal_tells_to_run_sweep_apply(box: VaultBox) -> None:
    """Bytes that are not UTF-8 appended to the journal after a sync: the replay says what
    to run, as a load of the store does, instead of a bare decoding error."""
    from echo_core.errors import EchoError

    _apply(box.ctx(), ENTITIES[:2])
    names = box.ctx().entity_names
    assert names.get("vantage-point") is not None
    with (box.vault / JOURNAL_PATH).open("ab") as journal:
        journal.write(b"\xff\xfe garbage\n")
    with pytest.raises(EchoError) as caught:
        names.get("vantage-point")
    assert "`echo-memory sweep --apply`" in caught.value.message


def test_fuzzy_answers_stay_true_after_the_store_changes_under_its_memo(box: VaultBox) -> None:
    """The per-token memo of fuzzy lookups holds only for the store state it was read
    from: entities added, renamed and deleted later (same process) are seen at once."""
    ctx = box.ctx()
    names = ctx.entity_names
    _apply(ctx, ENTITIES)
    _same_answers(names, box.index())  # every mention's tokens memoised
    _apply(ctx, [Entity(slug="vantage-labs", path="resources/companies/vantage-labs.md",
                        kind="company", title="Vantage Labs", aliases=("Systems Lab 3",)),
                 Entity(slug="kubernetes", path="resources/concepts/kubernetes.md",
                        kind="concept", title="Kubernetes", aliases=("kube", "lovelace"))],
           deletes=["vantage-point", "systems-lab-3"])
    assert [m.entity.slug for m in names.fuzzy("vantage", limit=50)] == \
        [m.entity.slug for m in box.index().fuzzy("vantage", limit=50)]
    assert "vantage-labs" in {m.entity.slug for m in names.fuzzy("vantage", limit=50)}
    _same_answers(names, box.index())


def test_fuzzy_stops_at_the_limits_perfect_scores_with_the_same_answers(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    """Candidates are scored in slug order and no score passes 1: a word in 120 names,
    all scoring 1, is settled by the first two for a limit of 2; a mention no name
    matches perfectly scores them all. The answers are the in-memory index's."""
    import echo_core.entity_cache_rows as rows

    widgets = [Entity(slug=f"widget-{n:03d}", path=f"resources/concepts/widget-{n:03d}.md",
                      kind="concept", title=f"Widget {n:03d}") for n in range(120, 0, -1)]
    ctx = box.ctx()
    _apply(ctx, [*ENTITIES, *widgets])
    scored: list[object] = []
    real = rows.name_score
    monkeypatch.setattr(rows, "name_score", lambda q, n: scored.append(n) or real(q, n))
    names, index = ctx.entity_names, box.index()
    for mention, limit, at_most in (("widget", 2, 2), ("Widget", 5, 5),
                                    ("widget gadget gizmo", 2, 120), ("widget 007", 1, 7)):
        scored.clear()
        assert names.fuzzy(mention, limit=limit) == index.fuzzy(mention, limit=limit)
        assert 0 < len(scored) <= at_most, (mention, len(scored))
        scored.clear()
        assert names.fuzzy(mention, limit=limit) == index.fuzzy(mention, limit=limit)
        assert scored == [], "a question asked again is answered from the memo"
    assert [m.entity.slug for m in names.fuzzy("widget", limit=2)] == ["widget-001", "widget-002"]


def test_a_mention_of_more_tokens_than_a_query_takes_is_asked_in_parts(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    """More candidate tokens than SQLite takes parameters (a hostile query) are asked a
    part at a time: the index's answers, and the cache stays in use (no fall back to
    memory)."""
    import echo_core.entity_cache_rows as rows

    monkeypatch.setattr(rows, "CHUNK", 3)
    ctx = box.ctx()
    _apply(ctx, ENTITIES)
    names, index = ctx.entity_names, box.index()
    assert names.path is not None and names.get("kubernetes") is not None
    assert names._db is not None
    names._db.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 4)  # CHUNK plus the kind
    for mention in ("vantage systems lab 3 lovelace countess kube cafe creme",
                    " ".join(f"w{n}" for n in range(20)) + " systems vantage"):
        for limit in (1, 2, 50):
            assert names.fuzzy(mention, limit=limit) == index.fuzzy(mention, limit=limit)
    assert names._db is not None and names.path.is_file()


def test_a_fuzzy_lookup_reads_its_candidates_and_their_rows_from_one_snapshot(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    """The candidates are scored from (slug, names) and the winners' whole rows read
    after: another process that rewrites the cache in between (its own sync) is not
    seen half-way. Here it deletes every entity right after the candidates are read:
    the answer is still the index's (a read of the rows outside the candidates'
    snapshot finds none of them and fails)."""
    import echo_core.entity_cache_rows as rows

    ctx = box.ctx()
    _apply(ctx, ENTITIES)
    names, index = ctx.entity_names, box.index()
    assert names.get("kubernetes") is not None and names.path is not None
    other = sqlite3.connect(str(names.path), timeout=5, isolation_level=None)
    real_kept = rows._kept

    def kept_then_rewritten(*args: Any) -> list[tuple[float, str, int]]:
        found = real_kept(*args)
        other.execute("DELETE FROM entities")
        return found

    monkeypatch.setattr(rows, "_kept", kept_then_rewritten)
    assert names.fuzzy("vantage systems", limit=2) == index.fuzzy("vantage systems", limit=2)
    assert other.execute("SELECT COUNT(*) FROM entities").fetchone()[0] == 0  # it did run
    other.close()
