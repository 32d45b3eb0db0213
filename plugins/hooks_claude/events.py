"""The Claude Code hook events echo-memory answers, with their timeouts and budgets.

One table (``EVENTS``) is the single source of truth for both sides: the generated
``hooks/hooks.json`` declares each event's ``timeout`` from it, and ``echo-memory hook``
derives its own time budget from the same number, so the two can never drift apart.

Time budget: a hook gives up (exit 0, no output) after ``BUDGET_FRACTION`` (80 %) of the
timeout Claude Code enforces, so Claude Code never has to kill it; a hard backstop ends the
process at ``HARD_STOP_FRACTION`` (95 %) even when a C extension ignores the soft signal.
``ECHO_HOOK_BUDGET_SECONDS`` overrides the soft budget (for slow machines and tests).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

#: Claude Code caps every hook output string at 10,000 characters; we cap the whole stdout.
MAX_OUTPUT_CHARS = 10_000

#: Share of the declared timeout after which a hook gives up quietly (soft budget).
BUDGET_FRACTION = 0.8

#: Share of the declared timeout after which the process exits 0 no matter what.
HARD_STOP_FRACTION = 0.95

#: Environment variable overriding the soft budget, in seconds.
BUDGET_ENV = "ECHO_HOOK_BUDGET_SECONDS"

#: Environment variable naming the echo-memory executable the generated hooks run.
BIN_ENV = "ECHO_MEMORY_BIN"


class HookTimeout(BaseException):
    """The soft time budget ran out (a BaseException so that no ``except Exception`` in
    the code under the budget can swallow it)."""


@attrs.frozen
class HookEvent:
    """One Claude Code event: its name, the ``timeout`` (seconds) declared in hooks.json,
    and the matcher (``None`` for events that take none)."""

    name: str
    timeout: int
    matcher: str | None = None

    @property
    def budget(self) -> float:
        """Seconds the handler may run before giving up quietly."""
        return self.timeout * BUDGET_FRACTION

    @property
    def hard_stop(self) -> float:
        """Seconds after which the process exits 0 unconditionally."""
        return self.timeout * HARD_STOP_FRACTION


#: The events, in the order they are written to hooks.json.
EVENTS: Mapping[str, HookEvent] = {
    e.name: e
    for e in (
        # load --brief may flush the outbox and run a fast sweep: the most generous budget
        # of the per-turn hooks.
        HookEvent("SessionStart", 15, "startup|clear|compact"),
        # runs before every prompt: must stay quick (typically ~0.2 s).
        HookEvent("UserPromptSubmit", 10),
        # runs at every stop: parses the transcript, at most one small state-file write,
        # then mines what the session said since the last stop (a few inbox lines).
        HookEvent("Stop", 10),
        # writes one checkpoint note through capture (vault lock, index upkeep).
        HookEvent("PreCompact", 30),
        # mines the rest of the session's transcript into the inbox (auto_reflect);
        # Claude Code's default for SessionEnd is 1.5 s, so the timeout is declared.
        HookEvent("SessionEnd", 5),
    )
}


def canonical_event(name: str) -> HookEvent | None:
    """The event ``name`` names, ignoring case, ``-`` and ``_`` (``session-start``,
    ``SessionStart``); ``None`` for events echo-memory does not answer."""
    key = name.replace("-", "").replace("_", "").lower()
    for event in EVENTS.values():
        if event.name.lower() == key:
            return event
    return None


def budget_for(event: HookEvent, env: Mapping[str, str]) -> float:
    """The soft budget of ``event``: ``ECHO_HOOK_BUDGET_SECONDS`` when set to a positive
    number (capped below the hard stop), else ``BUDGET_FRACTION`` of its timeout."""
    raw = env.get(BUDGET_ENV, "").strip()
    try:
        override = float(raw) if raw else 0.0
    except ValueError:
        override = 0.0
    if override > 0:
        return min(override, event.hard_stop)
    return event.budget
