"""The data of a lint run (SPEC §5.2): what each check found, the repairs the mechanical
ones propose, and the per-note quality scores. Plain attrs objects, JSON-ready through
``Envelope.to_dict``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from echo_core.ops.lint.snapshot import VaultSnapshot


@attrs.frozen
class Repair:
    """A mechanical repair of one note: frontmatter keys to set (each one line), and/or
    making both indexes agree with the note as it is (``index_sync``), and/or archiving
    an expired working note exactly as ``sweep --decay`` does (``archive``:
    ``status: archived``, the body under a dated ``## Archived`` marker). ``change``
    says it in words; ``applied`` is True once ``lint --fix --apply`` made it."""

    path: str
    change: str
    frontmatter: dict[str, Any] = attrs.field(factory=dict)
    index_sync: bool = False
    applied: bool = False
    archive: bool = False


@attrs.frozen
class Finding:
    """One violation: which check, the note (``path``), what is wrong, the fix, and for
    a check about two notes the other one (``other``). ``repair`` is the mechanical
    repair ``--fix`` would make (None: a person must decide)."""

    check: str
    path: str
    problem: str
    fix: str
    other: str = ""
    repair: Repair | None = None


#: A check: the snapshot of the vault in, its findings out.
CheckRun = Callable[["VaultSnapshot"], Iterable[Finding]]


@attrs.frozen
class CheckInfo:
    """One check of the registry: its name, what it finds (the definition it applies),
    whether ``--fix`` repairs it, the function that runs it and whether it may run apart."""

    name: str
    description: str
    mechanical: bool
    run: CheckRun = attrs.field(eq=False, repr=False)
    #: Heavy and independent of what the other checks compute: on a large vault it runs
    #: on another core, in a forked child (``echo_core.forked_work``).
    apart: bool = False


@attrs.frozen
class CheckCount:
    """How many findings one check made (in the registry's order)."""

    name: str
    count: int
    mechanical: bool
    description: str


@attrs.frozen
class QualityScore:
    """How complete an entity note is, 0..1 (information, never a violation): the sum
    of the parts, each 0..its weight (frontmatter complete, a body, links in or out,
    freshness of ``updated``)."""

    path: str
    score: float
    frontmatter: float
    body: float
    links: float
    freshness: float


@attrs.frozen
class LintResult:
    """A lint run: notes read, every finding (grouped by check in the registry's order),
    the counts per check run, the repairs made or proposed, the quality scores, how
    long it took, and ``own_notes``: how many notes outside echo-memory's folders declare
    no kind (a person's own, left where they are: counted, never findings; 0 when
    ``outside-route`` did not run)."""

    notes: int
    findings: tuple[Finding, ...]
    checks: tuple[CheckCount, ...]
    repairs: tuple[Repair, ...] = ()
    scores: tuple[QualityScore, ...] = ()
    seconds: float = 0.0
    own_notes: int = 0
