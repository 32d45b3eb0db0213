"""The interfaces plugins implement. Registration hooks hand the core objects of these types.

Hot paths live here (``tokenize``, ``search``, ``read``): the core calls these methods
directly, per operation; hooks are only for registration, events and policy.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from echo_core.errors import UnavailableError
from echo_core.models import Entity, FileStat

if TYPE_CHECKING:
    from echo_core.name_matching import Match


_OFFERS: dict[tuple[type, type], bool] = {}


def offers(plugin_object: object, protocol: type) -> bool:
    """``isinstance(plugin_object, protocol)`` for an optional runtime protocol
    (``TextRanker``, ``KeyFieldRanker``, ``TermFinder``), answered once per class: the
    check walks the protocol's members (5-10 us) and recall asks it per search and per
    hit. An object offers what its class defines."""
    key = (type(plugin_object), protocol)
    found = _OFFERS.get(key)
    if found is None:
        found = _OFFERS[key] = isinstance(plugin_object, protocol)
    return found


@runtime_checkable
class Storage(Protocol):
    """A vault backend. Paths are vault-relative POSIX strings (see ``echo_core.paths``).

    Errors: a missing file -> ``EchoError`` code 44; a bad path -> code 2; the backend
    unreachable -> ``BackendUnavailable``; the lock not obtained in time -> code 75.

    To write one, subclass ``echo_core.StorageBase``: implement ``identity``, ``read``,
    ``write``, ``delete``, ``list``, ``stat`` and ``lock``, and inherit ``read_many``,
    ``exists``, ``append_line``, ``ping`` and ``create`` (override any you can do faster).
    """

    #: Stable identity of the vault ("file:/abs/path"); keys the per-machine state dir.
    identity: str

    def read(self, path: str) -> str:
        """Exact text of the file (UTF-8, line endings untouched)."""
        ...

    def read_many(self, paths: Sequence[str]) -> dict[str, str | None]:
        """Texts of several files at once; a missing file maps to ``None``."""
        ...

    def write(self, path: str, text: str) -> None:
        """Atomically create or replace the file (readers see old or new, never torn)."""
        ...

    def append_line(self, path: str, line: str) -> bool:
        """Append ``line`` unless an identical line is present. True when appended."""
        ...

    def exists(self, path: str) -> bool:
        """Whether the file exists."""
        ...

    def delete(self, path: str) -> None:
        """Remove the file (code 44 when absent)."""
        ...

    def list(self, prefix: str = "") -> list[str]:
        """Sorted paths of all files under ``prefix`` (recursive; hidden entries skipped)."""
        ...

    def stat(self, path: str) -> FileStat:
        """Size and modification time of the file (code 44 when absent)."""
        ...

    def lock(self, timeout: float = 10.0) -> AbstractContextManager[None]:
        """The cross-process vault lock, re-entrant within one thread (code 75 on timeout)."""
        ...

    def ping(self) -> None:
        """Return when the backend is reachable, else raise ``BackendUnavailable``."""
        ...

    def create(self) -> None:
        """Create the vault's container (a folder) if absent; used by ``init`` only.

        Idempotent; never touches existing files. Backends whose container always exists
        (a remote vault) only check it is reachable.
        """
        ...


#: Builds a storage from the vault URL and the backend's options (config section).
StorageFactory = Callable[[str, Mapping[str, Any]], Storage]


@runtime_checkable
class ConditionalWrite(Protocol):
    """A storage that can replace a file only while it still holds what the caller
    read, checking as late as it can (a folder: after the new text is on disk, just
    before the rename). A person editing a note takes no lock; this keeps an operation
    that read the note before the edit from overwriting it. Optional: without it the
    core reads the file again just before ``write`` (``Vault.replace_note``), to the
    same outcomes. Contract suite: ``ConditionalWriteContract`` (in ``StorageContract``).
    """

    def write_unless_changed(self, path: str, text: str, expected: str | None) -> bool:
        """``write(path, text)`` if the file still holds exactly ``expected`` (None: it
        is still absent); False, nothing written, when it does not.

        ``expected`` is compared as is (line endings and final newline included; ``""``
        is an empty file, not an absent one). True: written as by ``write``, seen by
        ``read``, ``exists``, ``stat`` and ``list`` like any write. A path naming a
        folder holds no file: expecting text there gives False; expecting None lets the
        write go ahead, so it fails as ``write`` does there (code 2). Errors: a bad path
        -> code 2 whatever ``expected``; otherwise those of ``write``."""
        ...


@runtime_checkable
class Tokenizer(Protocol):
    """Turns text into index terms; the same at index and query time."""

    def tokenize(self, text: str) -> list[str]:
        """Terms of ``text`` in order (lowercased, stopwords removed, normalised)."""
        ...


@runtime_checkable
class TermFinder(Tokenizer, Protocol):
    """A tokenizer that can say which of a few terms a text holds for less than
    tokenizing all of it (recall's excerpts ask this of each line of each hit: a
    stemmer can skip the words that cannot become one of them).

    ``terms_among(text, wanted)`` equals ``wanted & set(tokenize(text))``, exactly.
    """

    def terms_among(self, text: str, wanted: AbstractSet[str]) -> set[str]:
        """Which of ``wanted`` (terms of this tokenizer) the terms of ``text`` hold."""
        ...


@runtime_checkable
class WordTokenizer(Tokenizer, Protocol):
    """A tokenizer whose terms come one word at a time: ``tokenize(text)`` equals
    ``[t for t in map(term, words(text)) if t]``, where ``term`` of a word depends on that
    word alone. A ranker building an index from many texts may then map each distinct
    word to its term id once and make no term string for its later occurrences
    (``recall_bm25``'s segment builder): the same terms in fewer steps per token.

    ``words`` gives hashable words (any type; equal words give equal terms); ``term``
    gives a word's term, "" when the word is dropped (a stopword, say).
    """

    def words(self, text: str) -> Sequence[Hashable]:
        """The words of ``text`` in order, before any is dropped or stemmed."""
        ...

    def term(self, word: Hashable) -> str:
        """The term of one word of ``words``, "" when it is dropped."""
        ...


@attrs.frozen
class IndexDoc:
    """One document handed to a ranker.

    ``text`` is everything searchable (title included); ``weight`` is the static prior the
    core computed (kind weight x status x corpus weight); ``updated`` is an ISO date the
    ranker turns into the freshness prior at query time (``echo_core.scoring``).
    ``aliases``: the note's aliases as one text (``corpus.aliases_text``); with ``title``,
    the key fields recall's key-field boost looks in (a ``KeyFieldRanker`` keeps their
    terms).
    """

    path: str
    title: str
    text: str
    kind: str = ""
    status: str = ""
    updated: str = ""
    weight: float = 1.0
    links: tuple[str, ...] = ()
    aliases: str = ""


@attrs.frozen
class WeightedTerm:
    """A query term (already tokenized) with a weight: 1.0 for the user's words, less for
    expansions. ``boost_only`` terms add score only to documents that match a plain term.
    ``source``: what brought an expansion in, in words (``recall --explain`` shows it;
    rankers ignore it and it takes no part in equality). ``names``: the vault path of
    the note the query named to bring this expansion in (an entity's own note), ``""``
    when none; a ranker may treat that note as the query's subject rather than its
    answer (``recall_hybrid`` does). It takes no part in equality either."""

    term: str
    weight: float = 1.0
    boost_only: bool = False
    source: str = attrs.field(default="", eq=False)
    names: str = attrs.field(default="", eq=False)


@runtime_checkable
class SplittableDocs(Protocol):
    """Documents read on demand that a ranker's ``rebuild`` may cut in two, reading and
    tokenizing each part on its own core (a forked child reads its part itself, so only
    tokens cross back). The core passes the whole corpus this way
    (``echo_core.corpus_docs.CorpusDocs``); a ranker that ignores it just iterates.

    ``len`` is how many notes are listed (an upper bound on the documents yielded);
    iterating yields the documents, skipping notes that cannot be read or parsed.
    ``split(at)`` gives the first ``at`` entries and the rest. A part read in another
    process reports its ``skipped()`` paths back through ``note_skipped`` on the part it
    came from (recording a path twice is harmless).
    """

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[IndexDoc]: ...

    def split(self, at: int) -> tuple[SplittableDocs, SplittableDocs]: ...

    def skipped(self) -> list[str]: ...

    def note_skipped(self, paths: Sequence[str]) -> None: ...


@runtime_checkable
class Ranker(Protocol):
    """A search index over ``IndexDoc``s for one vault. It only ranks; the core keeps it
    current (``echo_core.ranker_upkeep``), so it listens to no note event.

    A plain ``Ranker`` lives in memory: the core makes one per process (the factory is
    called once per process and ranker folder), builds it from the corpus by ``upsert``
    before the first search of the process, then upserts / removes on every note this
    process writes or deletes and, before each search, on the notes other processes
    changed since (``echo_core.ranker_changes``). The core serialises calls into a plain
    ranker, so it need not be thread-safe. ``upsert`` / ``remove`` cost is proportional to
    the changed note, and ``upsert`` is idempotent by path (the same path twice is one
    document, and the core may upsert a note more than once).
    """

    def upsert(self, doc: IndexDoc) -> None:
        """Add or replace the document with ``doc.path`` (durable when it returns, for a
        persistent ranker)."""
        ...

    def remove(self, path: str) -> None:
        """Forget the document (no-op when unknown)."""
        ...

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        """Best ``(path, score)`` pairs, highest first, at most ``limit``; scores > 0."""
        ...


@runtime_checkable
class PersistentRanker(Ranker, Protocol):
    """A ranker that keeps its own files under the factory's ``state_dir``, shared by
    every process of the vault, and says when it must be rebuilt from the corpus.

    Each context opens its own instance (so it must be safe to use from several threads
    and processes at once). Before a search the core calls ``needs_rebuild()`` and, when
    True, ``rebuild`` with the whole corpus under the vault lock; on note writes and
    deletions it calls ``upsert`` / ``remove``.
    """

    def needs_rebuild(self) -> bool:
        """True when the index is absent, of another schema, or unreadable."""
        ...

    def rebuild(self, docs: Iterable[IndexDoc],
                progress: Callable[[int], None] | None = None) -> int:
        """Replace the whole index with ``docs`` (atomically); return the count indexed.
        ``progress(n)`` is called with the number indexed so far, every few hundred."""
        ...

    def set_today(self, today_ordinal: int) -> None:
        """The date (``date.toordinal()``) freshness is computed against."""
        ...

    def paths(self) -> list[str]:
        """Every indexed path (for sweeps and tests)."""
        ...


@runtime_checkable
class KeyFieldRanker(Protocol):
    """A ranker that keeps the terms of each document's key fields (``IndexDoc.title``
    and ``IndexDoc.aliases``, tokenized as it indexed them), so recall's key-field boost
    (``ops.recall_fields``) need not read the notes it reranks to find them."""

    def key_terms_of(self, paths: Sequence[str], terms: Sequence[str]
                     ) -> dict[str, frozenset[str]]:
        """For each of ``paths`` the ranker holds: which of ``terms`` (tokenized terms)
        its key fields hold. A path it does not hold is absent (the caller reads the
        note instead)."""
        ...


@runtime_checkable
class TextRanker(Ranker, Protocol):
    """A ranker that also reads the query as the user wrote it (a dense ranker embeds it).
    Recall calls ``search_text`` instead of ``search`` when the ranker has it; ``terms``
    are what ``search`` would get."""

    def search_text(self, query: str, terms: Sequence[WeightedTerm],
                    limit: int) -> list[tuple[str, float]]:
        """Best ``(path, score)`` pairs for ``query``, as ``search`` answers."""
        ...


class RankerUnavailable(ImportError):
    """Raised by a ranker factory whose optional packages are not installed (its extra
    was removed): the core then uses ``bm25`` and warns once per process, naming what
    to install."""


#: Builds a ranker for one vault: ``factory(tokenizer, state_dir)``; ``state_dir`` is a
#: folder for the ranker's own files (a plain ranker ignores it). Building should be
#: cheap (no I/O): it happens on a process's first note write or search. A factory with
#: a ``wraps`` attribute (another ranker's registered name) is called
#: ``factory(tokenizer, state_dir, base)`` with that ranker built by its own factory: a
#: fusing ranker builds on ``bm25`` without importing its plugin. A factory whose
#: ``wants_storage`` attribute is true also gets ``storage=`` (the vault's ``Storage``):
#: a ranker that lives in the vault's database. A factory raising ``RankerUnavailable``
#: (its optional packages missing) makes the core use ``bm25`` with one warning.
RankerFactory = Callable[[Tokenizer, str], Ranker]


@runtime_checkable
class Expander(Protocol):
    """Query expansion: extra weighted terms for a query (e.g. entity aliases)."""

    def expand(self, query: str, context: Any) -> list[WeightedTerm]:
        """Additional terms for ``query``; never the query's own terms. A term holding
        spaces is a phrase (tokens in order): recall lets it boost what the query's own
        words found and bring in only documents holding the whole phrase
        (``echo_core.ops.recall_phrases``)."""
        ...


class EntityLookup(Protocol):
    """The entity lookups a capture, its duplicate gate and auto-linking need, answered
    the same by the in-memory ``EntityIndex`` and by the SQLite name cache
    (``EntityNames``), which answers them without loading every entity. Names match up
    to case, accents, hyphens, spaces and punctuation (``name_key``)."""

    def get(self, slug: str) -> Entity | None:
        """The entry for ``slug``."""
        ...

    def by_path(self, path: str) -> Entity | None:
        """The entry whose note is at ``path``."""
        ...

    def exact(self, mention: str, kind: str | None = None) -> list[Entity]:
        """Entities whose slug, title or an alias has ``mention``'s name key (of ``kind``
        when given), sorted by slug."""
        ...

    def named(self, mention: str, kind: str | None = None) -> list[Entity]:
        """The ``exact`` matches whose title or an alias (not only the slug) has
        ``mention``'s name key: who answers to that name."""
        ...

    def fuzzy(self, mention: str, *, kind: str | None = None, min_score: float = 0.5,
              limit: int = 5, max_df: int | None = None) -> list[Match]:
        """Entities whose names share tokens with ``mention``, best first."""
        ...

    def document_frequency(self, token: str) -> int:
        """How many entities have ``token`` among their name tokens."""
        ...

    def shared_tokens(self, mention: str, entity: Entity) -> frozenset[str]:
        """Tokens ``mention`` shares with any name of ``entity``."""
        ...

    def slugs_by_keys(self, keys: Iterable[str]) -> dict[str, set[str]]:
        """name key -> slugs answering to it (slug, title or alias), for those of
        ``keys`` that name something."""
        ...

    def name_keys_sized(self, shortest: int, longest: int, *, spaces: int | None = None,
                        squashed: str | None = None) -> list[str]:
        """Every distinct name key of ``shortest`` to ``longest`` characters, sorted (what
        a search for names a few edits away from a mention must compare it with); with
        ``spaces``, only those holding that many spaces, or, with ``squashed`` too, whose
        characters other than spaces are ``squashed``."""
        ...


@runtime_checkable
class Queue(Protocol):
    """A durable outbox of operations waiting for the backend."""

    def put(self, record: Mapping[str, Any]) -> str:
        """Persist ``record`` (fsynced) and return its id; duplicates by key return the old id."""
        ...

    def pending(self) -> list[Mapping[str, Any]]:
        """Records not yet replayed, oldest first."""
        ...

    def mark(self, record_id: str, state: str, detail: str = "") -> None:
        """Record the outcome of a replay: ``done`` or ``needs_attention``."""
        ...


QueueFactory = Callable[[str], Queue]
"""``register_queues`` factory: ``factory(state_dir) -> Queue``."""


@runtime_checkable
class BuildTarget(Protocol):
    """Contributes files to a generated artefact (e.g. a Claude Code plugin folder)."""

    def contribute(self, out_dir: str, context: Any) -> Iterable[str]:
        """Write this plugin's part under ``out_dir``; return the vault-relative files written."""
        ...


class BackendUnavailable(UnavailableError):
    """The storage backend cannot be reached (network down, server gone): an
    ``UnavailableError`` (exit 69), so a handler of ``EchoError`` catches it too — a
    handler that must let it pass says so (``except BackendUnavailable: raise`` first).

    Writes that meet it are queued in the outbox when the vault is one this machine has
    seen initialised (``echo_core.vault_seen``); reads degrade to the last-known-good cache.
    """


class VaultMissing(BackendUnavailable):
    """The vault's container is not there (a folder unmounted, moved or never made).

    Unlike a network outage this needs a person: a write queued because of it is reported
    as not done (exit 69), and nothing is queued for a path never seen as a vault."""


#: ``errno`` values meaning "this storage takes no writes now" (full, read-only, denied).
NOT_WRITABLE_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM,
                                 getattr(errno, "EDQUOT", errno.ENOSPC)})


class VaultNotWritable(BackendUnavailable):
    """The vault is there but refuses writes for now: read-only, full, or permission
    denied. Writes queue like an outage; ``flush`` replays them once it takes writes."""
