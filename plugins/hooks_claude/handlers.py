"""One handler per Claude Code event: ``handler(payload, make_ctx) -> output | None``.

``payload`` is the event's stdin object; ``make_ctx()`` builds the ``EchoContext`` (only
when a handler needs the vault). A handler returns the JSON object to print, or ``None``
to stay quiet. Handlers may raise anything: the runner turns every failure into silence,
except for the events of ``FAILURE_OUTPUTS`` (SessionStart says memory is unavailable).
Heavy modules are imported inside the handlers, so each event pays only for its own.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from echo_core import LazyPattern

Payload = dict[str, Any]
Output = dict[str, Any]
Handler = Callable[[Payload, Callable[[], Any]], "Output | None"]

#: SessionStart sources that get the brief digest; ``resume`` and ``fork`` continue a
#: conversation that already has it, so they stay quiet.
DIGEST_SOURCES = frozenset({"startup", "clear", "compact"})

#: load's message when the vault is unreachable and nothing is cached.
_UNREACHABLE = LazyPattern(r"vault unreachable; proceed without memory \((.*)\)")
#: The most of a checkpoint shown after a compaction.
CHECKPOINT_CHARS = 3000
#: Plugins' session contexts are asked for only while this much room is left.
MIN_CONTEXT_ROOM = 200
#: Seconds of Stop's budget kept for its answer: the mining after the decision is cut then.
STOP_ANSWER_MARGIN = 1.0
#: A wikilink's target: the entities the brief names.
_LINK = LazyPattern(r"\[\[([^\]|#\n]{1,200})")

SESSION_HEADER = ("echo-memory brief (persistent memory for this agent; search it with "
                  "`echo-memory recall`, save to it with `echo-memory capture`):\n\n")
#: The brief's cap (SPEC §4.1): ``ECHO_LOAD_BUDGET``, default 8000, at least 200 (the
#: core's ``load_budget``). The header, the brief and the checkpoint stay within it; the
#: plugins' blocks after them have the rest of Claude Code's 10,000 (``MAX_OUTPUT_CHARS``).
BUDGET_ENV, DEFAULT_BRIEF_CAP, MIN_BRIEF_BUDGET = "ECHO_LOAD_BUDGET", 8000, 200
#: Room kept for the checkpoint section's heading (it names the note's path); the entry
#: itself gets at most 3/8 of the brief's cap (3000 of 8000) and ``CHECKPOINT_CHARS``.
_CHECKPOINT_HEAD = 120
#: A checkpoint with less room than this for its entry is left out.
MIN_CHECKPOINT_CHARS = 200


def _context_output(event: str, text: str) -> Output:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _digest_of(data: Any) -> str | None:
    digest = data.get("digest") if isinstance(data, Mapping) else getattr(data, "digest", None)
    return digest if isinstance(digest, str) and digest.strip() else None


def wants_digest(payload: Payload) -> bool:
    """Whether SessionStart answers ``payload``: a new, cleared or compacted session (a
    missing ``source`` counts as ``startup``)."""
    return payload.get("source", "startup") in DIGEST_SOURCES


def session_start(payload: Payload, make_ctx: Callable[[], Any]) -> Output | None:
    """SessionStart: the ``load --brief`` digest as additionalContext for a new, cleared or
    compacted session; after a compaction, the session's latest checkpoint above it;
    below it, what plugins add for the session (``register_session_contexts``: the
    habitat's approved insights for the project).
    The header, the checkpoint and the brief keep within the brief's cap (``brief_cap``):
    the brief is loaded with what the hook adds taken off its budget, so it is trimmed by
    its own rules; the plugins' blocks fill the room left of ``MAX_OUTPUT_CHARS``.
    When the vault cannot be loaded (and nothing is cached), one line saying memory is
    unavailable, why, and what to do (``unavailable_line``). Quiet for other sources."""
    if not wants_digest(payload):
        return None
    started = time.monotonic()
    ctx = make_ctx()
    set_cap = brief_cap(ctx.env)
    cap = DEFAULT_BRIEF_CAP if set_cap is None else set_cap
    header = SESSION_HEADER if cap - len(SESSION_HEADER) >= MIN_BRIEF_BUDGET else ""
    compact = payload.get("source") == "compact"
    # what the hook adds comes off the brief's budget (the brief trims by its own rules)
    reserve = len(header) + (_checkpoint_reserve(ctx, payload, cap, len(header))
                             if compact else 0)
    envelope = _load_brief(ctx, None if set_cap is None else max(MIN_BRIEF_BUDGET,
                                                                  cap - reserve))
    digest = _digest_of(envelope.data) if envelope.ok else None
    if digest is None:
        return _context_output("SessionStart", unavailable_line(envelope.message))
    if compact:  # read after the load, whose flush may land a queued checkpoint
        room = cap - len(header) - len(digest)
        digest = _checkpoint_section(ctx, payload, min(room, _checkpoint_cap(cap))) + digest
    text = header + digest
    return _context_output("SessionStart", _with_plugin_contexts(ctx, payload, text, started))


def brief_cap(env: Mapping[str, str]) -> int | None:
    """The characters the header, the checkpoint and the brief share: ``ECHO_LOAD_BUDGET``
    (``DEFAULT_BRIEF_CAP`` when unset); None when it is not a whole number >=
    ``MIN_BRIEF_BUDGET`` (the load then fails with its own usage error)."""
    raw = str(env.get(BUDGET_ENV, "")).strip()
    try:
        cap = int(raw) if raw else DEFAULT_BRIEF_CAP
    except ValueError:
        return None
    return cap if cap >= MIN_BRIEF_BUDGET else None


def _checkpoint_cap(cap: int) -> int:
    """The most the checkpoint section may take of ``cap``."""
    return cap * 3 // 8 + _CHECKPOINT_HEAD


def _checkpoint_reserve(ctx: Any, payload: Payload, cap: int, header: int) -> int:
    """The room to keep for the checkpoint section, before the load: the section as it
    reads now; when there is none yet, its whole share if the outbox holds writes (a
    checkpoint queued there lands at the load's flush), else 0."""
    most = min(_checkpoint_cap(cap), cap - header - MIN_BRIEF_BUDGET)
    section = _checkpoint_section(ctx, payload, most)
    if section:
        return len(section)
    try:
        queue = getattr(ctx, "queue", None)
        waiting = bool(queue is not None and queue.pending())
    except Exception:  # noqa: BLE001 - unreadable: keep the room, the brief is cut less
        waiting = True
    return max(0, most) if waiting else 0


def _with_plugin_contexts(ctx: Any, payload: Payload, text: str, started: float) -> str:
    """``text`` followed by the blocks the ``register_session_contexts`` providers give
    for this session (``cwd``, and the entities the brief links), in provider name
    order. A provider that raises is skipped (noted on stderr), a block that would push
    the output past ``MAX_OUTPUT_CHARS`` is left out, and no provider is asked once a
    third of the time budget is left or less."""
    from plugins.hooks_claude.events import EVENTS, MAX_OUTPUT_CHARS, budget_for

    try:
        providers = ctx.host.collect("register_session_contexts")
    except Exception as exc:  # noqa: BLE001 - a clash of plugins must not cost the brief
        sys.stderr.write(f"echo-memory hook SessionStart: no plugin contexts ({exc})\n")
        return text
    if not providers:
        return text
    budget = budget_for(EVENTS["SessionStart"], ctx.env)
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else ""
    entities = tuple(dict.fromkeys(m.strip() for m in _LINK.findall(text)))[:20]
    limit = MAX_OUTPUT_CHARS - 1 - len(json.dumps(_context_output("SessionStart", "")))
    for name in sorted(providers):
        room = limit - len(json.dumps(text, ensure_ascii=False)) - 2
        if room < MIN_CONTEXT_ROOM or time.monotonic() - started > budget * 2 / 3:
            break
        try:  # escaping a line break takes 2 characters of the output: a margin
            blocks = providers[name](ctx, cwd=cwd, project="", prompt="", entities=entities,
                                     budget_chars=room * 9 // 10 - 8)
        except Exception as exc:  # noqa: BLE001 - one plugin must not cost the brief
            sys.stderr.write(f"echo-memory hook SessionStart: context {name!r} skipped "
                             f"({type(exc).__name__}: {exc})\n")
            continue
        for block in blocks if isinstance(blocks, list) else ():
            if not isinstance(block, str) or not block.strip():
                continue
            joined = f"{text}\n\n{block.strip()}"
            if len(json.dumps(joined, ensure_ascii=False)) - 2 <= limit:
                text = joined
    return text


def _load_brief(ctx: Any, budget: int | None) -> Any:
    """``load --brief`` within ``budget`` characters, with only the quick part of its
    freshness check before it (new, deleted, renamed notes); the check of every note it
    owes runs after the answer (``after_answer``), so a large vault does not hold the
    session back. ``budget`` reaches the load as ``ECHO_LOAD_BUDGET`` for this call only
    (None: the environment's own, one the load rejects with its usage error)."""
    from echo_core import invoke, settle_owed_pass
    from plugins.hooks_claude.after_answer import after_answer

    env = ctx.env
    if budget is not None:
        ctx.env = {**env, BUDGET_ENV: str(budget)}
    setattr(ctx, "defer_full_pass", True)  # noqa: B010 - read by getattr in the core
    try:
        return invoke(ctx, "load", {"brief": True})
    finally:
        ctx.env = env
        setattr(ctx, "defer_full_pass", False)  # noqa: B010
        owed = getattr(ctx, "owed_full_pass", None)
        if owed is not None:
            setattr(ctx, "owed_full_pass", None)  # noqa: B010
            after_answer(lambda background: settle_owed_pass(owed, background=background))


def _checkpoint_section(ctx: Any, payload: Payload, most: int) -> str:
    """The session's latest checkpoint as a section of at most ``most`` characters (its
    entry cut to fit, and to ``CHECKPOINT_CHARS``), or "" (none, unreadable, or no room
    for its heading and a few lines: the brief is shown without it); control characters
    in it (a note edited by hand, or written before the checkpoint escaped them) are
    shown as escapes."""
    from echo_core import terminal_safe
    from plugins.hooks_claude.checkpoint import latest_checkpoint

    try:
        found = latest_checkpoint(ctx, payload.get("session_id"))
    except Exception:  # noqa: BLE001 - a broken checkpoint must not hide the brief
        found = None
    if found is None:
        return ""
    path, entry = found[0], terminal_safe(found[1])
    head = f"## Checkpoint before this compaction ({path})\n"
    limit = min(CHECKPOINT_CHARS, most - len(head) - len("\n\n"))
    if limit < MIN_CHECKPOINT_CHARS:
        return ""
    if len(entry) > limit:
        entry = entry[: limit - 1].rstrip() + "…"
    return f"{head}{entry}\n\n"


def unavailable_line(reason: str) -> str:
    """``echo-memory: memory unavailable: <reason>; <what to do>`` on one line. ``reason``
    is load's message or an error's: when it already says what to do (``...; run ...``)
    it is kept as it is."""
    reason = " ".join(reason.split()) or "the vault could not be loaded"
    match = _UNREACHABLE.fullmatch(reason)
    if match:
        reason = f"vault unreachable ({match.group(1)})"
    if "; " not in reason:
        reason += "; proceed without memory, and run `echo-memory doctor` to see why"
    return f"echo-memory: memory unavailable: {reason}"


def session_start_failure(payload: Payload | None, exc: BaseException) -> Output | None:
    """What SessionStart prints when its handler failed (an error, a timeout): the
    ``unavailable_line`` for a payload it would have answered, else nothing."""
    if payload is None or not wants_digest(payload):
        return None
    from echo_core import EchoError
    from plugins.hooks_claude.events import HookTimeout

    if isinstance(exc, EchoError):
        reason = exc.message
    elif isinstance(exc, HookTimeout):
        reason = f"loading the brief ran out of time ({exc})"
    else:
        reason = f"{type(exc).__name__}: {exc} (ECHO_HOOK_DEBUG=1 shows the traceback)"
    return _context_output("SessionStart", unavailable_line(reason))


def user_prompt_submit(payload: Payload, make_ctx: Callable[[], Any]) -> Output | None:
    """UserPromptSubmit: relevant notes for the prompt (``prompt_recall``), or quiet."""
    from plugins.hooks_claude.prompt_recall import prompt_context, wants_recall

    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not wants_recall(prompt):
        return None
    text = prompt_context(make_ctx(), prompt)
    return _context_output("UserPromptSubmit", text) if text else None


def stop(payload: Payload, make_ctx: Callable[[], Any]) -> Output | None:
    """Stop: ask once per substantive, unsaved session to save (``stop_gate``), or quiet;
    then mine what the session said since the last Stop into the inbox (``auto_reflect``).

    The decision comes first and the mining may only use the budget left after it, less
    ``STOP_ANSWER_MARGIN`` (``runner.budget_share``): mining that waits on a held vault
    lock, or is slow, is cut there and the decided answer still goes out. This order is
    the robust one: deciding marks the session asked (exclusively, so racing hooks ask
    once), and an answer lost after that mark would never be asked again; the mining
    loses nothing when cut (it writes nothing before it is done, and the next Stop or
    SessionEnd goes on from its mark). A failed or cut mining is noted on stderr and
    never changes the answer."""
    from plugins.hooks_claude.budget import budget_share
    from plugins.hooks_claude.events import HookTimeout
    from plugins.hooks_claude.stop_gate import stop_decision

    decision = stop_decision(payload, make_ctx)
    try:
        with budget_share(STOP_ANSWER_MARGIN, "reflection"):
            _reflect(payload, make_ctx, "Stop")
    except (Exception, HookTimeout) as exc:  # noqa: BLE001 - the ask must not depend on it
        sys.stderr.write(f"echo-memory hook Stop: reflection skipped ({type(exc).__name__}: "
                         f"{exc})\n")
    return decision


def session_end(payload: Payload, make_ctx: Callable[[], Any]) -> Output | None:
    """SessionEnd: mine the rest of the finished session's transcript into the inbox
    (``auto_reflect``); always quiet (Claude Code discards its output)."""
    _reflect(payload, make_ctx, "SessionEnd")
    return None


def _reflect(payload: Payload, make_ctx: Callable[[], Any], event: str) -> None:
    """Mine the session's transcript into the inbox (``auto_reflect``)."""
    from plugins.hooks_claude.auto_reflect import reflect_from_payload

    reflect_from_payload(payload, make_ctx, event)


def pre_compact(payload: Payload, make_ctx: Callable[[], Any]) -> Output | None:
    """PreCompact: write the checkpoint note (``checkpoint``); always quiet."""
    from plugins.hooks_claude.checkpoint import write_checkpoint

    write_checkpoint(payload, make_ctx)
    return None


#: What an event prints when its handler fails (the others stay quiet).
FAILURE_OUTPUTS: Mapping[str, Callable[[Payload | None, BaseException], Output | None]] = {
    "SessionStart": session_start_failure,
}

HANDLERS: Mapping[str, Handler] = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "Stop": stop,
    "PreCompact": pre_compact,
    "SessionEnd": session_end,
}
