"""The queries of ``eval`` (``echo_core.ops.self_eval``), generated from the vault's own
notes, each with the note it came from as the answer. No LLM, no randomness: the same
vault gives the same queries on every run.

Which notes: the corpus notes recall searches (``echo_core.corpus``) outside ``_agent/``,
in a stable order (the BLAKE2b of each path, so a new note takes one place in it and the
others keep theirs). The first ``POOL_NOTES`` (or ``2 x`` the query cap, if more) of that
order are read once: they give the document frequencies that say which words are rare, and
the headings and names shared by several notes (never asked). Queries are then drawn from
the pool's notes in order, skipping notes whose body holds fewer than ``MIN_BODY_TERMS``
terms, until the cap is reached.

Kinds of query, per note (``KINDS``):

* ``title``: the note's title (skipped without a letter in it, e.g. a bare date);
* ``alias``: each frontmatter alias unlike the title (at most ``MAX_ALIASES``);
* ``heading``: the first ``##`` heading that no other pooled note nor a template has;
* ``sentence``: the body sentence whose words are rarest in the pool, cut to its
  ``SENTENCE_WORDS`` rarest content words (not the title's, in the sentence's order), so
  the query is distinctive but never a verbatim copy of the note.

A title, alias or heading that names more than one pooled note is not asked (it has no
single answer). A note or template that cannot be read (not UTF-8) is left out and named
in ``QuerySet.unreadable``, when the caller passes a reader that says so (``eval`` passes
``index_sync.read_current``). Reading only: nothing is written.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from echo_core.agent_log_lines import is_daily_note, without_mechanical_lines
from echo_core.corpus import corpus_paths
from echo_core.digests import blake2b
from echo_core.models import Note
from echo_core.notes import headings, parse_note

if TYPE_CHECKING:
    from echo_core.protocols import Storage, Tokenizer

KINDS = ("title", "alias", "heading", "sentence")
POOL_NOTES = 2000
READ_BATCH = 256
MIN_BODY_TERMS = 8
MAX_ALIASES = 2
MIN_SENTENCE_WORDS = 4
SENTENCE_WORDS = 6
SKIPPED_PREFIX = "_agent/"

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_NOISE = re.compile(r"\[\[[^\]\n]*\]\]|`[^`\n]*`|https?://\S+|!?\[([^\]\n]*)\]\([^)\n]*\)")
_LIST_MARK = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?")
_LETTER = re.compile(r"[^\W\d_]")

#: Reads a batch of paths: ``(texts, paths that could not be read)``, a text None for a
#: note that is gone (``index_sync.read_current`` with its context).
BatchReader = Callable[[Sequence[str]], tuple[Mapping[str, str | None], Sequence[str]]]


@attrs.frozen
class EvalQuery:
    """One query: its ``text``, its ``kind`` (one of ``KINDS``) and the vault path of the
    note it came from (the answer)."""

    text: str
    kind: str
    answer: str


@attrs.frozen
class QuerySet:
    """The queries of a run, how many notes they came from, the corpus size, and the
    notes that could not be read (left out)."""

    queries: tuple[EvalQuery, ...]
    notes: int
    corpus: int
    unreadable: tuple[str, ...] = ()


@attrs.frozen
class _Pooled:
    note: Note
    body_terms: int
    terms: frozenset[str]
    names: tuple[tuple[str, str], ...]  # (kind, text) of the title and aliases
    headings: tuple[str, ...]  # the ## headings


def sample_order(paths: Iterable[str]) -> list[str]:
    """``paths`` in the stable sampling order: by the BLAKE2b of each path, then the path."""
    return sorted(paths, key=lambda p: (blake2b(p.encode("utf-8"), digest_size=8).digest(), p))


def eligible_paths(corpus: Iterable[str]) -> list[str]:
    """The corpus notes queries may come from (``_agent/`` left out), in sampling order."""
    return sample_order(p for p in corpus if not p.startswith(SKIPPED_PREFIX))


def generate_queries(storage: Storage, tokenizer: Tokenizer, limit: int, *,
                     read: BatchReader | None = None) -> QuerySet:
    """At most ``limit`` queries from the vault behind ``storage`` (see the module
    docstring), each query's text tokenizing to at least one term. Notes are read with
    ``read`` (default ``storage.read_many``: a note that cannot be read raises); those it
    could not read are left out and listed in ``unreadable``. Reads notes only."""
    reader = read or (lambda paths: (storage.read_many(paths), ()))
    unreadable: list[str] = []
    corpus = corpus_paths(storage)
    paths = eligible_paths(corpus)
    pool = _read_pool(reader, tokenizer, paths[:max(POOL_NOTES, 2 * limit)], unreadable)
    df: Counter[str] = Counter()
    owners: dict[str, set[str]] = {}
    heading_count: Counter[str] = Counter()
    for item in pool:
        df.update(item.terms)
        for _kind, text in item.names:
            owners.setdefault(_key(text), set()).add(item.note.path)
        heading_count.update({_key(h) for h in item.headings})
    shared = ({k for k, n in heading_count.items() if n > 1}
              | _template_headings(storage, reader, unreadable))
    queries: list[EvalQuery] = []
    notes = 0
    for item in pool:
        if len(queries) >= limit:
            break
        if item.body_terms < MIN_BODY_TERMS:
            continue
        found = _note_queries(item, tokenizer, df, owners, shared)
        if found:
            notes += 1
            queries += found[:limit - len(queries)]
    return QuerySet(tuple(queries), notes, len(corpus), tuple(unreadable))


def _read_pool(read: BatchReader, tokenizer: Tokenizer, paths: Sequence[str],
               unreadable: list[str]) -> list[_Pooled]:
    pool: list[_Pooled] = []
    for at in range(0, len(paths), READ_BATCH):
        batch = paths[at:at + READ_BATCH]
        texts, bad = read(batch)
        unreadable += bad
        for path in batch:
            text = texts.get(path)
            if text is not None:
                pool.append(_pooled(parse_note(path, text), tokenizer))
    return pool


def _pooled(note: Note, tokenizer: Tokenizer) -> _Pooled:
    title = note.title
    names = [("title", title)]
    seen = {_key(title)}
    for alias in _aliases(note):
        if _key(alias) not in seen and len(names) <= MAX_ALIASES:
            seen.add(_key(alias))
            names.append(("alias", alias))
    body_terms = tokenizer.tokenize(_prose(_body(note)))
    all_terms = tokenizer.tokenize(" ".join(text for _, text in names))
    level_two = tuple(h[3:] for h in headings(note.text) if h.startswith("## "))
    return _Pooled(note, len(body_terms), frozenset(body_terms + all_terms), tuple(names),
                   level_two)


def _body(note: Note) -> str:
    """The body as recall indexes it: a daily note's without its mechanical agent-log
    lines (``echo_core.corpus.index_doc``)."""
    return without_mechanical_lines(note.body) if is_daily_note(note.path) else note.body


def _aliases(note: Note) -> list[str]:
    raw = note.frontmatter.get("aliases")
    values = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
    return [str(v).strip() for v in values if isinstance(v, (str, int, float)) and str(v).strip()]


def _key(text: str) -> str:
    """``text`` as compared for sharing: casefolded, spaces collapsed."""
    return " ".join(text.casefold().split())


def _template_headings(storage: Storage, read: BatchReader, unreadable: list[str]) -> set[str]:
    """The ``##`` headings of the vault's templates (every note made from one has them);
    a template that cannot be read goes to ``unreadable``."""
    paths = [p for p in storage.list("templates/") if p.endswith(".md")]
    found: set[str] = set()
    texts, bad = read(paths)
    unreadable += [p for p in bad if p not in unreadable]
    for text in texts.values():
        if text is not None:
            found.update(_key(h[3:]) for h in headings(text) if h.startswith("## "))
    return found


def _note_queries(item: _Pooled, tokenizer: Tokenizer, df: Counter[str],
                  owners: dict[str, set[str]], shared: set[str]) -> list[EvalQuery]:
    """The queries of one pooled note, in ``KINDS`` order."""
    path = item.note.path
    out: list[EvalQuery] = []
    asked: set[str] = set()

    def add(text: str, kind: str) -> bool:
        key = _key(text)
        if not key or key in asked or not _LETTER.search(text) or not tokenizer.tokenize(text):
            return False
        asked.add(key)
        out.append(EvalQuery(" ".join(text.split()), kind, path))
        return True

    for kind, text in item.names:
        if len(owners.get(_key(text), ())) <= 1:
            add(text, kind)
    title_key = _key(item.note.title)
    for heading in item.headings:
        key = _key(heading)
        if (key not in shared and key != title_key and key not in owners
                and add(_NOISE.sub(r"\1", heading), "heading")):
            break
    title_terms = set(tokenizer.tokenize(" ".join(text for _, text in item.names)))
    sentence = distinctive_words(_body(item.note), tokenizer, df, title_terms)
    if sentence:
        add(sentence, "sentence")
    return out


def distinctive_words(body: str, tokenizer: Tokenizer, df: Counter[str],
                      skip_terms: set[str]) -> str:
    """The ``SENTENCE_WORDS`` rarest content words (lowest ``df``, then first in the
    sentence) of the body sentence whose rarest words are rarest, in the sentence's
    order; ``""`` when no sentence has ``MIN_SENTENCE_WORDS`` distinct content words
    outside ``skip_terms``."""
    best: tuple[float, int] | None = None
    best_words: list[str] = []
    for index, sentence in enumerate(_sentences(body)):
        words: list[tuple[int, int, str]] = []  # (df, position, word)
        terms: set[str] = set()
        for position, word in enumerate(_WORD.findall(sentence)):
            found = tokenizer.tokenize(word)
            if len(found) != 1 or not _LETTER.search(word):
                continue
            term = found[0]
            if term in terms or term in skip_terms:
                continue
            terms.add(term)
            words.append((df.get(term, 0), position, word))
        if len(words) < MIN_SENTENCE_WORDS:
            continue
        rarest = sorted(words)[:SENTENCE_WORDS]
        score = (sum(d for d, _, _ in rarest) / len(rarest), index)
        if best is None or score < best:
            best = score
            best_words = [w for _, _, w in sorted(rarest, key=lambda r: r[1])]
    return " ".join(best_words)


def _prose(body: str) -> str:
    """The body's prose lines: no headings, no fenced code."""
    return "\n".join(_prose_lines(body))


def _prose_lines(body: str) -> Iterator[str]:
    fence = ""
    for line in body.splitlines():
        match = _FENCE.match(line)
        if match is not None and (not fence or match.group(1)[0] == fence[0]):
            fence = "" if fence else match.group(1)
            continue
        if fence or _HEADING.match(line):
            continue
        yield line


def _sentences(body: str) -> Iterator[str]:
    """The body's sentences: paragraphs of prose (links, code spans, URLs removed; a list
    item or quote line is a paragraph of its own) cut after ``.``, ``!`` or ``?``."""
    paragraph: list[str] = []
    for line in [*_prose_lines(body), ""]:
        item = _LIST_MARK.match(line)
        if (not line.strip() or item is not None) and paragraph:
            yield from _SENTENCE_END.split(" ".join(paragraph))
            paragraph = []
        text = _NOISE.sub(r"\1", line[item.end():] if item else line).strip()
        if text:
            paragraph.append(text)
