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


# --- recall corpora (bench/perf_recall.py) -----------------------------------------------
# Realistic-ish note text: ~35% English stopwords, content words drawn with Zipfian
# (1/rank) frequencies from a large pseudo-word vocabulary, sentences, inline wikilinks,
# a mix of entity notes (70%), session logs (20%) and journal notes (10%), varied status
# and ``updated`` dates. Files are written directly (100k notes in well under a minute).

FILLERS = ["the", "a", "of", "to", "and", "in", "is", "for", "on", "with", "that", "as", "it",
           "was", "by", "at", "be", "this", "from", "or", "an", "are", "we", "not", "have",
           "has", "but", "will", "can", "about", "into", "than", "then", "also", "when", "which"]
STATUSES = ["active"] * 6 + ["complete", "decided", "on-hold", "archived", "superseded"]


class ZipfSampler:
    """Draws words with probability proportional to 1 / rank**exponent (precomputed cdf)."""

    def __init__(self, words: list[str], exponent: float = 1.0) -> None:
        self.words = words
        total, cum = 0.0, []
        for rank in range(len(words)):
            total += 1.0 / (rank + 1) ** exponent
            cum.append(total)
        self.cum = cum

    def draw(self, rng: random.Random, count: int) -> list[str]:
        """``count`` words."""
        return rng.choices(self.words, cum_weights=self.cum, k=count)


def _sentences(sampler: ZipfSampler, rng: random.Random, count: int) -> str:
    content = sampler.draw(rng, count)
    fillers = rng.choices(FILLERS, k=count)
    words, out = [], []
    for i in range(count):
        words.append(fillers[i] if rng.random() < 0.35 else content[i])
        if len(words) >= 8 and rng.random() < 0.12:
            out.append(" ".join(words).capitalize() + ".")
            words = []
    if words:
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def _date(day: int) -> str:
    import datetime as dt

    return (dt.date(2024, 1, 1) + dt.timedelta(days=day)).isoformat()


def _recall_sampler(rng: random.Random, vocab_size: int) -> ZipfSampler:
    words = vocabulary(vocab_size, rng)
    rng.shuffle(words)  # rank independent of spelling
    return ZipfSampler(words)


def recall_sampler(seed: int = 11, vocab_size: int = 30000) -> ZipfSampler:
    """The content-word sampler ``build_recall_vault`` uses for the same seed (draw the
    queries of an already generated vault from it)."""
    return _recall_sampler(random.Random(seed), vocab_size)


def build_recall_vault(root: Path, state: Path, notes: int, seed: int = 11,
                       vocab_size: int = 30000) -> tuple[EchoContext, ZipfSampler]:
    """An initialised vault of ``notes`` corpus notes plus its entity index; returns the
    context and the content-word sampler (draw queries from it)."""
    rng = random.Random(seed)
    env = {"ECHO_TODAY": "2026-03-01", "HOME": str(state / "home"),
           "ECHO_CONFIG": str(state / "none.toml")}
    ctx = create_context(vault=str(root), state_dir=str(state), env=env)
    init_vault(ctx)
    sampler = _recall_sampler(rng, vocab_size)
    index = EntityIndex()
    slugs: list[str] = []
    made: set[Path] = set()
    for i in range(notes):
        bucket = i % 10
        day = rng.randrange(790)  # 2024-01-01 .. 2026-02-28
        status = rng.choice(STATUSES)
        title = f"{' '.join(w.title() for w in sampler.draw(rng, rng.randint(1, 3)))} {i}"
        if bucket < 7:
            kind, folder = KINDS[i % len(KINDS)]
            slug = slugify(title)
            path = f"{folder}/{slug}.md"
        elif bucket < 9:
            kind, slug = "session", f"{_date(day)}-{i % 24:02d}00-{slugify(title)}"
            path = f"_agent/sessions/{slug}.md"
            status = "complete"
        else:
            kind, slug = "daily", f"{_date(day)}-{i}"
            path, title = f"journal/daily/{slug}.md", f"Journal {_date(day)}"
            status = "complete"
        aliases = [f"{title.split()[0]} {kind.title()}"] if bucket < 7 and rng.random() < 0.2 else []
        links = ([f"[[{slugs[rng.randrange(len(slugs))]}]]" for _ in range(rng.randint(0, 4))]
                 if slugs else [])
        paras = [_sentences(sampler, rng, rng.randint(20, 90)) for _ in range(rng.randint(1, 4))]
        for link in links[:2]:  # some links inline, the rest under Related
            paras[rng.randrange(len(paras))] += f" See {link}."
        text = (f"---\ntype: {kind}\nstatus: {status}\ncreated: {_date(max(0, day - 30))}\n"
                f"updated: {_date(day)}\ntags: [{kind}, {sampler.draw(rng, 1)[0]}]\n"
                + (f"aliases: [{aliases[0]}]\n" if aliases else "")
                + f"---\n# {title}\n\n" + "\n\n".join(paras)
                + "\n\n## Notes\n\n## Related\n" + " ".join(links[2:]) + "\n")
        target = root / path
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(text)
        if bucket < 7:
            index.put(Entity(slug=slug, path=path, kind=kind, title=title, aliases=tuple(aliases)))
        slugs.append(slug)
    EntityStore(ctx.storage).compact(index)
    return ctx, sampler


def draw_queries(sampler: ZipfSampler, count: int, seed: int = 3) -> list[str]:
    """``count`` queries of 1-4 content words (25/35/25/15%), Zipfian like the notes."""
    rng = random.Random(seed)
    return [" ".join(sampler.draw(rng, rng.choices([1, 2, 3, 4], [25, 35, 25, 15])[0]))
            for _ in range(count)]
