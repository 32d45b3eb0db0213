"""The fail-safe runner behind ``echo-memory hook <event>``.

Contract (SPEC §4.5, ``reference/claude-code.md``):

* Reads the event JSON object from stdin; anything else (empty, not JSON, not an object,
  not UTF-8) means "stay quiet". A lone surrogate in it (the JSON escape ``\\ud83d``
  alone, half an emoji) becomes U+FFFD, so one bad character in a prompt, ``cwd`` or
  ``custom_instructions`` cannot make every write of the hook fail.
* Prints at most one JSON object (the handler's output) to stdout, at most
  ``MAX_OUTPUT_CHARS`` characters: the longest string in it is cut, with
  ``TRUNCATION_MARK``, until the whole line fits. Nothing else ever reaches stdout while a
  handler runs (it is redirected), so a chatty library cannot corrupt the protocol.
* Never fails: any exception, an unknown event, or running out of the time budget means no
  output at all (SessionStart: one "memory unavailable" line, ``handlers.FAILURE_OUTPUTS``);
  the caller exits 0. A one-line note goes to stderr (the traceback too when
  ``ECHO_HOOK_DEBUG=1``), which Claude Code shows only in its debug view.
* Time budget (``events``): a SIGALRM timer raises ``HookTimeout`` at the soft budget so
  locks and temp files unwind cleanly; a daemon thread calls ``os._exit(0)`` at the hard
  stop in case the signal cannot interrupt (no SIGALRM on Windows, a long C call).
  ``budget_share`` ends a handler's optional part early, so the answer it decided
  still goes out within the budget (Stop's mining).
* Work after the answer: a handler may leave work that need not hold the answer back
  (``after_answer``: SessionStart's full freshness pass). ``answer_hook`` returns it with
  the output; the ``hook`` command runs it (``finish``) once the output is written, in a
  detached process where it can; ``run_hook`` runs it in this process before returning.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, BinaryIO

from plugins.hooks_claude.after_answer import AfterAnswer, collecting, finish
from plugins.hooks_claude.budget import seconds_text
from plugins.hooks_claude.events import MAX_OUTPUT_CHARS, HookTimeout, budget_for, canonical_event

TRUNCATION_MARK = "\n…(truncated by echo-memory to fit the hook output limit)"
DEBUG_ENV = "ECHO_HOOK_DEBUG"


@contextlib.contextmanager
def time_budget(soft: float, hard: float) -> Iterator[None]:
    """Raise ``HookTimeout`` after ``soft`` seconds; ``os._exit(0)`` after ``hard``."""
    backstop = threading.Timer(hard, os._exit, args=(0,))
    backstop.daemon = True
    backstop.start()
    use_alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    previous: Any = None
    if use_alarm:
        def on_alarm(signum: int, frame: Any) -> None:
            raise HookTimeout(f"hook exceeded its {seconds_text(soft)} budget")

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, soft)
    try:
        yield
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        backstop.cancel()


def read_payload(stream: BinaryIO | None) -> dict[str, Any] | None:
    """The event object from ``stream``, or None (missing, a terminal, invalid JSON, not
    an object)."""
    if stream is None or stream.isatty():
        return None
    raw = stream.read()
    if not raw:
        return None
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(payload, dict):
        return None
    from echo_core import SURROGATE_ESCAPE, with_valid_text

    if SURROGATE_ESCAPE.search(raw) is None:
        return payload
    try:
        cleaned: dict[str, Any] = with_valid_text(payload)  # type: ignore[assignment]
    except RecursionError:
        return None
    return cleaned


def _longest_string(node: Any, best: tuple[Any, Any, int] | None) -> tuple[Any, Any, int] | None:
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        if isinstance(value, str) and (best is None or len(value) > best[2]):
            best = (node, key, len(value))
        elif isinstance(value, (dict, list)):
            best = _longest_string(value, best)
    return best


def render_output(output: Mapping[str, Any], limit: int = MAX_OUTPUT_CHARS) -> str:
    """``output`` as one JSON line of at most ``limit`` characters (longest strings cut)."""
    data = json.loads(json.dumps(output))  # a private, plain copy to cut into
    text = json.dumps(data, ensure_ascii=False)
    while len(text) > limit:
        found = _longest_string(data, None)
        if found is None or found[2] <= len(TRUNCATION_MARK):
            raise ValueError("hook output cannot be cut to the limit")
        node, key, length = found
        keep = max(0, length - (len(text) - limit) - len(TRUNCATION_MARK))
        node[key] = node[key][:keep].rstrip() + TRUNCATION_MARK
        text = json.dumps(data, ensure_ascii=False)
    return text


def _note_failure(event: str, exc: BaseException, env: Mapping[str, str]) -> None:
    try:
        if env.get(DEBUG_ENV, "").strip() in ("1", "true", "yes"):
            import traceback  # only here: it and textwrap cost every hook ~1 ms to import

            traceback.print_exception(exc, file=sys.stderr)
        else:
            sys.stderr.write(f"echo-memory hook {event}: {type(exc).__name__}: {exc}\n")
    except Exception:  # noqa: BLE001, S110 - a closed stderr must not break the fail-safe
        pass


def run_hook(event_name: str, make_ctx: Callable[[], Any], stdin: BinaryIO | None,
             env: Mapping[str, str]) -> str | None:
    """Run the handler of ``event_name`` under the time budget; its rendered output, or
    None (quiet) for an unknown event, an invalid payload, a timeout or any error. Work
    the handler left for after its answer has run here when this returns."""
    text, later = answer_hook(event_name, make_ctx, stdin, env)
    finish(later, background=False)
    return text


def answer_hook(event_name: str, make_ctx: Callable[[], Any], stdin: BinaryIO | None,
                env: Mapping[str, str]) -> tuple[str | None, list[AfterAnswer]]:
    """``run_hook``'s output, and the work left for after it (not run yet: ``finish``)."""
    with collecting() as later:
        return _answer(event_name, make_ctx, stdin, env), later


def _answer(event_name: str, make_ctx: Callable[[], Any], stdin: BinaryIO | None,
            env: Mapping[str, str]) -> str | None:
    event = canonical_event(event_name)
    if event is None:
        return None
    from plugins.hooks_claude.handlers import FAILURE_OUTPUTS, HANDLERS

    payload: dict[str, Any] | None = None
    try:
        with time_budget(budget_for(event, env), event.hard_stop), \
                contextlib.redirect_stdout(io.StringIO()):
            payload = read_payload(stdin)
            if payload is None:
                return None
            output = HANDLERS[event.name](payload, make_ctx)
            # the newline write_stdout adds counts too
            return render_output(output, MAX_OUTPUT_CHARS - 1) if output else None
    except BaseException as exc:  # noqa: BLE001 - fail-safe: errors, timeouts, exits
        _note_failure(event.name, exc, env)
        return _failure_output(FAILURE_OUTPUTS.get(event.name), payload, exc)


def _failure_output(render: Callable[[dict[str, Any] | None, BaseException], Any] | None,
                    payload: dict[str, Any] | None, exc: BaseException) -> str | None:
    """The event's output for a failed handler, or None; never raises."""
    if render is None:
        return None
    try:
        output = render(payload, exc)
        return render_output(output, MAX_OUTPUT_CHARS - 1) if output else None
    except Exception:  # noqa: BLE001 - fail-safe
        return None


def write_stdout(text: str) -> None:
    """Write ``text`` (plus a newline) to stdout as UTF-8, whatever the locale."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is not None:
        buffer.write((text + "\n").encode("utf-8"))
        buffer.flush()
    else:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
