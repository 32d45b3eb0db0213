"""Linked recall's neighbour walk (``_neighbours``) with batched link resolution through
the name cache and pruning of notes that cannot change the result gives exactly what the
straightforward walk gives: resolve each link on its own (full entity index, then folder
probes), expand every note, rank all."""

from __future__ import annotations

import random
from collections.abc import Iterable

import pytest

from echo_core.context import EchoContext
from echo_core.models import Entity
from echo_core.notes import wikilinks
from echo_core.ops.recall import _neighbours
from echo_core.scoring import HOP_DECAY, MAX_HOPS
from tests.capture_kit import VaultBox


def _resolve_link_reference(ctx: EchoContext, target: str, known: dict[str, str]) -> str | None:
    target = target.split("#", 1)[0].split("|", 1)[0].strip()
    if not target:
        return None
    if target in known:
        return known[target]
    entity = ctx.entities.load().get(target)
    if entity is not None:
        return entity.path
    stem = target.removesuffix(".md")
    for folder in ["", "journal/daily", "_agent/sessions", *ctx.manifest.kind_folders()]:
        candidate = f"{folder}/{stem}.md" if folder else f"{stem}.md"
        if ctx.vault.storage.exists(candidate):
            known[target] = candidate
            return candidate
    return None


def _neighbours_reference(ctx: EchoContext, seeds: Iterable[tuple[str, float, str]],
                          texts: dict[str, str | None], exclude: set[str],
                          limit: int) -> list[tuple[str, float, str]]:
    best: dict[str, tuple[float, str]] = {}
    frontier = list(seeds)
    known = {p.rsplit("/", 1)[-1][:-3]: p for p in texts}
    for _hop in range(MAX_HOPS):
        next_frontier: list[tuple[str, float, str]] = []
        for path, score, _via in frontier:
            text = texts.get(path)
            if text is None:
                continue
            for target in wikilinks(text):
                linked = _resolve_link_reference(ctx, target, known)
                if linked is None or linked in exclude or linked == path:
                    continue
                new_score = score * HOP_DECAY
                if linked not in best or best[linked][0] < new_score:
                    best[linked] = (new_score, path)
                    next_frontier.append((linked, new_score, path))
        missing = [p for p, _, _ in next_frontier if p not in texts]
        if missing:
            texts.update(ctx.vault.storage.read_many(missing))
        frontier = next_frontier
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0]))[:limit]
    return [(path, score, via) for path, (score, via) in ranked]


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> tuple[VaultBox, list[str]]:
    """60 notes (entities in kind folders, sessions, journal notes, a root note) linking
    to each other at random, by slug, alias-piped, with headings, by path, or to nothing."""
    rng = random.Random(5)
    box = VaultBox(tmp_path_factory.mktemp("graph")).init()
    ctx = box.ctx()
    paths, entities = [], []
    for i in range(60):
        if i % 6 == 0:
            path = f"_agent/sessions/2026-01-{i % 28 + 1:02d}-0900-s{i}.md"
        elif i % 6 == 1:
            path = f"journal/daily/2026-02-{i % 28 + 1:02d}-{i}.md"
        elif i == 2:
            path = "loose-root-note.md"
        else:
            path = f"resources/concepts/c{i}.md"
            entities.append(Entity(slug=f"c{i}", path=path, kind="concept", title=f"Concept {i}"))
        paths.append(path)
    stems = [p.rsplit("/", 1)[-1][:-3] for p in paths]
    for path in paths:
        links = []
        for _ in range(rng.randint(0, 5)):
            stem = rng.choice(stems)
            links.append(rng.choice([f"[[{stem}]]", f"[[{stem}|alias]]", f"[[{stem}#Notes]]",
                                     f"[[{stem}.md]]", "[[no-such-note]]", f"[[{stem}]]"]))
        (box.vault / path).parent.mkdir(parents=True, exist_ok=True)
        (box.vault / path).write_text(f"---\ntype: concept\n---\n# {path}\n\nText {' '.join(links)}\n")
    with ctx.storage.lock():
        ctx.entities.load()
        ctx.entities.apply(puts=entities)
    return box, paths


@pytest.mark.parametrize("seed", range(150))
def test_neighbours_equal_the_straightforward_walk(graph: tuple[VaultBox, list[str]],
                                                   seed: int) -> None:
    box, paths = graph
    rng = random.Random(seed)
    picked = rng.sample(paths, rng.randint(1, 10))
    # ties on purpose, and spreads wide enough that pruning decides (scores far apart)
    scores = [rng.choice([1.0, 0.5, 2.0, 0.6, 0.36]) if rng.random() < 0.4
              else 10 * rng.random() ** 4 for _ in picked]
    seeds = [(p, s, p) for p, s in zip(picked, scores, strict=True)]
    limit = rng.choice([1, 2, 3, 4, 6, 8, 50])
    ctx = box.ctx()
    texts = ctx.vault.storage.read_many(picked)
    got = _neighbours(ctx, seeds, dict(texts), set(picked), limit)
    want = _neighbours_reference(ctx, seeds, dict(texts), set(picked), limit)
    assert got == want


def test_a_note_that_cannot_change_the_result_is_not_read(
        graph: tuple[VaultBox, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """A weak seed's neighbours are candidates, but their own links (score x 0.36) cannot
    beat the strong seed's neighbours (x 0.6) for a limit of 1: they are never read."""
    box, paths = graph
    ctx = box.ctx()
    texts = ctx.vault.storage.read_many(paths)

    def children(path: str) -> set[str]:
        found = {_resolve_link_reference(ctx, t, {}) for t in wikilinks(texts[path] or "")}
        return {p for p in found if p is not None and p != path}

    strong = max(paths, key=lambda p: len(children(p)))
    weak = next(p for p in paths if p != strong and children(p) - children(strong) - {strong})
    weak_only = children(weak) - children(strong) - {strong, weak}
    read: list[str] = []
    storage = ctx.vault.storage
    original = storage.read_many

    def spy(wanted: list[str]) -> dict[str, str | None]:
        read.extend(wanted)
        return original(wanted)

    monkeypatch.setattr(storage, "read_many", spy)
    seeds = [(strong, 1000.0, strong), (weak, 0.001, weak)]
    start = {p: texts[p] for p in (strong, weak)}
    got = _neighbours(ctx, seeds, dict(start), {strong, weak}, 1)
    assert not weak_only & set(read)
    monkeypatch.setattr(storage, "read_many", original)
    assert got == _neighbours_reference(ctx, seeds, dict(start), {strong, weak}, 1)
