"""What an operation did: the ``action`` of every envelope (``echo_core.models.Envelope``).

A ``StrEnum``: each member is the string it stands for, so JSON output, comparisons with
plain strings and a third party's own action strings keep working; the core builds its
envelopes with members and compares members, never string literals.
"""

from __future__ import annotations

import enum


class Action(enum.StrEnum):
    """Every action the core's operations (and the MCP error result) report."""

    # capture and the raw writes
    CREATED = "created"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    INBOX = "inbox"
    WRITTEN = "written"
    APPENDED = "appended"
    LINKED = "linked"
    #: the vault was unreachable: the write waits in the outbox (SPEC §5.4)
    QUEUED = "queued"
    #: a gate stopped the capture (``ok=False``; exit 76 on the CLI)
    DUPLICATE_GATE = "duplicate-gate"
    #: a semantic capture contradicts a line memory holds (``ok=False``; exit 76): it
    #: names the line and the ``--supersedes`` that replaces it (SPEC §2.6)
    CONTRADICTION = "contradiction"
    # dry runs: what would happen
    DRY_RUN = "dry-run"
    DRY_RUN_CREATE = "dry-run:create"
    DRY_RUN_UPDATE = "dry-run:update"
    DRY_RUN_INBOX = "dry-run:inbox"
    DRY_RUN_DUPLICATE_GATE = "dry-run:duplicate-gate"
    DRY_RUN_CONTRADICTION = "dry-run:contradiction"
    DRY_RUN_TRIAGE = "dry-run:triage"
    PREVIEW = "preview"
    # reads
    READ = "read"
    LISTED = "listed"
    RECALLED = "recalled"
    RESOLVED = "resolved"
    MISS = "miss"
    SCOPE = "scope"
    LOADED = "loaded"
    LOADED_FROM_CACHE = "loaded-from-cache"
    #: load with the vault down and no cache (``ok=False``; an error over MCP)
    UNREACHABLE = "unreachable"
    # the other verbs
    TRIAGED = "triaged"
    SESSION_ENDED = "session-ended"
    #: reflect applied its proposals (each one's outcome is in the data)
    REFLECTED = "reflected"
    FLUSHED = "flushed"
    BACKED_UP = "backed-up"
    #: ``export`` / ``import``: the vault copied to / from a plain folder
    EXPORTED = "exported"
    IMPORTED = "imported"
    BUILT = "built"
    REINDEXED = "reindexed"
    SWEPT = "swept"
    RESTORED = "restored"
    DOCTOR = "doctor"
    LINTED = "linted"
    #: an MCP error result (``echo_core.errors.EchoError`` on the wire), never an envelope's
    ERROR = "error"
