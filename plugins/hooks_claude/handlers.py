"""One handler per Claude Code event: ``handler(payload, make_ctx) -> output | None``.

``payload`` is the event's stdin object; ``make_ctx()`` builds the ``EchoContext`` (only
when a handler needs the vault). A handler returns the JSON object to print, or ``None``
to stay quiet. Handlers may raise anything: the runner turns every failure into silence.
Heavy modules are imported inside the handlers, so each event pays only for its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Payload = dict[str, Any]
Output = dict[str, Any]
Handler = Callable[[Payload, Callable[[], Any]], "Output | None"]

#: SessionStart sources that get the brief digest; ``resume`` and ``fork`` continue a
#: conversation that already has it, so they stay quiet.
DIGEST_SOURCES = frozenset({"startup", "clear", "compact"})

SESSION_HEADER = ("echo-memory brief (persistent memory for this agent; search it with "
                  "`echo-memory recall`, save to it with `echo-memory capture`):\n\n")


def _context_output(event: str, text: str) -> Output:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _digest_of(data: Any) -> str | None:
    digest = data.get("digest") if isinstance(data, Mapping) else getattr(data, "digest", None)
    return digest if isinstance(digest, str) and digest.strip() else None


def session_start(payload: Payload, make_ctx: Callable[[], Any]) -> Output | None:
    """SessionStart: the ``load --brief`` digest as additionalContext for a new, cleared or
    compacted session (a missing ``source`` counts as ``startup``); quiet otherwise."""
    source = payload.get("source", "startup")
    if source not in DIGEST_SOURCES:
        return None
    from echo_core import invoke

    envelope = invoke(make_ctx(), "load", {"brief": True})
    digest = _digest_of(envelope.data) if envelope.ok else None
    return _context_output("SessionStart", SESSION_HEADER + digest) if digest else None


def user_prompt_submit(payload: Payload, make_ctx: Callable[[], Any]) -> Output | None:
    """UserPromptSubmit: relevant notes for the prompt (``prompt_recall``), or quiet."""
    from plugins.hooks_claude.prompt_recall import prompt_context, wants_recall

    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or not wants_recall(prompt):
        return None
    text = prompt_context(make_ctx(), prompt)
    return _context_output("UserPromptSubmit", text) if text else None


def stop(payload: Payload, make_ctx: Callable[[], Any]) -> Output | None:
    """Stop: ask once per substantive, unsaved session to save (``stop_gate``), or quiet."""
    from plugins.hooks_claude.stop_gate import stop_decision

    return stop_decision(payload, make_ctx)


def pre_compact(payload: Payload, make_ctx: Callable[[], Any]) -> Output | None:
    """PreCompact: write the checkpoint note (``checkpoint``); always quiet."""
    from plugins.hooks_claude.checkpoint import write_checkpoint

    write_checkpoint(payload, make_ctx)
    return None


HANDLERS: Mapping[str, Handler] = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "Stop": stop,
    "PreCompact": pre_compact,
}
