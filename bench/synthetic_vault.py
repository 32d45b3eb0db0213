"""Synthetic vaults for the benchmarks: entity notes with frontmatter, wikilinks and a
Zipfian vocabulary, plus the matching entity index. Deterministic for a given seed."""

from __future__ import annotations

import random
from pathlib import Path

from echo_core.context import EchoContext, create_context
from echo_core.entities import EntityIndex, EntityStore
from echo_core.models import Entity
from echo_core.names import slugify
from echo_core.ops.init import init_vault

KINDS = [("person", "resources/people"), ("company", "resources/companies"),
         ("concept", "resources/concepts"), ("project", "projects/active"),
         ("reference", "resources/references")]
SYLLABLES = ["ka", "lo", "mi", "ren", "tas", "vo", "qui", "zen", "dor", "pha", "lix", "mur",
             "sel", "tor", "gan", "bri", "cul", "dex", "fen", "hal", "jor", "nev", "pol", "wyn"]


def vocabulary(size: int, rng: random.Random) -> list[str]:
    """``size`` distinct pseudo-words."""
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def zipf_words(vocab: list[str], count: int, rng: random.Random) -> list[str]:
    """``count`` words drawn with Zipfian (1/rank) frequencies."""
    weights = [1.0 / (rank + 1) for rank in range(len(vocab))]
    return rng.choices(vocab, weights=weights, k=count)


def build_vault(root: Path, state: Path, notes: int, seed: int = 7) -> EchoContext:
    """Create an initialised vault with ``notes`` entity notes and their index entries."""
    rng = random.Random(seed)
    env = {"ECHO_TODAY": "2026-03-01", "HOME": str(state / "home"),
           "ECHO_CONFIG": str(state / "none.toml")}
    ctx = create_context(vault=str(root), state_dir=str(state), env=env)
    init_vault(ctx)
    vocab = vocabulary(5000, rng)
    index = EntityIndex()
    titles: list[str] = []
    for i in range(notes):
        kind, folder = KINDS[i % len(KINDS)]
        title = f"{' '.join(w.title() for w in zipf_words(vocab[500:], 2, rng))} {i}"
        slug = slugify(title)
        path = f"{folder}/{slug}.md"
        body = " ".join(zipf_words(vocab, rng.randint(40, 200), rng))
        links = " ".join(f"[[{slugify(titles[rng.randrange(len(titles))])}]]"
                         for _ in range(rng.randint(0, 3))) if titles else ""
        text = (f"---\ntype: {kind}\nstatus: active\ncreated: 2025-0{1 + i % 9}-01\n"
                f"updated: 2025-0{1 + i % 9}-15\ntags: [{kind}]\n---\n# {title}\n\n{body}\n\n"
                f"## Notes\n\n## Related\n{links}\n")
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        index.put(Entity(slug=slug, path=path, kind=kind, title=title))
        titles.append(title)
    EntityStore(ctx.storage).compact(index)
    return ctx
