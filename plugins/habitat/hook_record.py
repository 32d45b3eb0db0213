"""The hook recorder: one Claude Code hook event in, its record appended to the loom.

Run by the built plugin's hooks (``build_part``) as ``python3 -S -E
.../scripts/habitat/hook_record_run.py <Event>`` with the event's JSON on stdin. It imports
the standard library and the modules beside it (``hook_record_paths``: the state dir;
``hook_record_redact`` and ``hook_record_sre``: redaction; ``hook_record_json``;
``loom_file``: the append) and nothing else: no site-packages, no ``echo_core``, no
click or pluggy, so a cold process adds ~2.5 ms to the interpreter's own start
(``bench/perf_habitat.py``).

What each event records (``kind``; parent) — the tree the loom keeps:

* ``SessionStart`` — ``session`` "start <source>"; parent: the session's previous
  session record (a resume, clear or compact), else none;
* ``UserPromptSubmit`` — ``prompt`` (the prompt); parent: the session record;
* ``PreToolUse`` — no record: the call's start time, kept by ``tool_use_id`` for the
  ``duration_ms`` of its ``PostToolUse``;
* ``PostToolUse`` / ``PostToolUseFailure`` — ``tool``: ``text`` is the tool's name then
  its input as JSON (``Bash {"command":"ls"}``), ``result`` the response (or the error),
  ``is_error`` for a failure, ``duration_ms`` since its ``PreToolUse``; parent: the
  session's latest prompt (the session record before any prompt);
* ``Stop`` — ``reply`` (``last_assistant_message``); parent: the latest prompt;
* ``SessionEnd`` — ``session`` "end <reason>"; parent: the session record.

A session first seen on another event (the plugin installed mid-session) gets its
``session`` record "start seen" then, so every record has its root. The session's
latest ids live in ``<habitat>/hook/sessions/`` (one small JSON file per session,
removed at its SessionEnd; those of sessions that never ended go at a SessionStart a
week later, as do start marks of calls that never finished).

Who: ``agent_id`` is ``$ECHO_AGENT_ID`` (default ``claude-code``); ``session_id`` the
event's. Where: the state dir echo-memory uses (``hook_record_paths``), folder
``habitat/loom``. Time: ``ECHO_NOW`` / ``ECHO_TODAY`` pin it as they pin echo-memory.
Text: redacted as capture redacts (``hook_record_redact``; a tool's input and response
string by string before they become JSON, then as a whole), then cut to ``MAX_TEXT``
characters (``truncated``). An empty stdin or one not holding a JSON object records
nothing (a line in the error log).

Fail-safe: it always exits 0 and never writes to stdout (a hook's stdout can steer
Claude Code); whatever goes wrong is one line in ``<state dir>/habitat/hook-errors.log``
(or on stderr when the state dir itself is unknown), and a process stuck longer than
``ECHO_HABITAT_HOOK_SECONDS`` (default 3) exits 0 on its own.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # typing costs ~2 ms to import: annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

if __package__:
    from plugins.habitat import hook_record_paths as paths
    from plugins.habitat import hook_record_redact as redaction
    from plugins.habitat import loom_file
    from plugins.habitat.hook_record_json import dumps, loads
    from plugins.habitat.hook_record_sre import PatternCache
else:  # run as a script (the built plugin): the modules beside it
    import hook_record_paths as paths  # type: ignore[import-not-found, no-redef]
    import hook_record_redact as redaction  # type: ignore[import-not-found, no-redef]
    import loom_file  # type: ignore[import-not-found, no-redef]
    from hook_record_json import dumps, loads  # type: ignore[import-not-found, no-redef]
    from hook_record_sre import PatternCache  # type: ignore[import-not-found, no-redef]

__all__ = ["AGENT_ENV", "DEFAULT_AGENT", "EVENTS", "MAX_TEXT", "main", "record_event"]

#: The events the recorder answers.
EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
          "PostToolUseFailure", "Stop", "SessionEnd")
AGENT_ENV = "ECHO_AGENT_ID"
DEFAULT_AGENT = "claude-code"
#: ``record.MAX_TEXT`` / ``record.MAX_NAME`` (the recorder cannot import ``record``).
MAX_TEXT = 8000
MAX_NAME = 200
#: Redaction looks this far past the cut, so a secret across it is still found whole.
_REDACT_MARGIN = 512
MAX_STDIN = 32 * 1024 * 1024
DEADLINE_ENV = "ECHO_HABITAT_HOOK_SECONDS"
LOG_NAME = "hook-errors.log"
_LOG_CAP = 1024 * 1024


# --- time and ids -------------------------------------------------------------------


def _clock(env: Mapping[str, str]) -> Callable[[int], tuple[str, str]]:
    """``stamp(n)`` -> ``(ts, id stamp)`` of now plus ``n`` microseconds (the records of
    one event sort in their order): ISO local time to the microsecond, pinned as
    ``echo_core.clock`` pins it (``ECHO_NOW``: an ISO datetime or ``HH:MM`` on
    ``ECHO_TODAY``; ``ECHO_TODAY`` alone: its noon)."""
    raw = (env.get("ECHO_NOW") or "").strip()
    day = (env.get("ECHO_TODAY") or "").strip()
    if raw or day:
        import datetime as dt

        if raw and len(raw) in (4, 5) and raw.replace(":", "").isdigit():
            on = dt.date.fromisoformat(day) if day else dt.date.today()
            base = dt.datetime.combine(on, dt.time(int(raw[:-2].rstrip(":")), int(raw[-2:])))
        elif raw:
            base = dt.datetime.fromisoformat(raw).replace(tzinfo=None)
        else:
            base = dt.datetime.combine(dt.date.fromisoformat(day), dt.time(12, 0))

        def pinned(n: int) -> tuple[str, str]:
            moment = base + dt.timedelta(microseconds=n)
            return moment.isoformat(timespec="microseconds"), moment.strftime("%Y%m%dT%H%M%S%f")

        return pinned
    start = time.time_ns() // 1000

    def real(n: int) -> tuple[str, str]:
        seconds, micro = divmod(start + n, 1_000_000)
        local = time.localtime(seconds)
        return (time.strftime("%Y-%m-%dT%H:%M:%S", local) + f".{micro:06d}",
                time.strftime("%Y%m%dT%H%M%S", local) + f"{micro:06d}")

    return real


#: Random bytes at the end of a record id: ``record.ID_RANDOM_BYTES`` (not imported: this
#: module runs without the package; a test keeps the two equal).
ID_RANDOM_BYTES = 8


def _new_id(stamp: str) -> str:
    return f"{stamp}-{os.urandom(ID_RANDOM_BYTES).hex()}"


# --- text ---------------------------------------------------------------------------


def _clean(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return dumps(value)


def _masked(value: Any, budget: list[int]) -> Any:
    """``value`` (parsed JSON) with each string in it, keys too, redacted as a capture's
    text is: a rule then sees ``export DB_PASSWORD=...`` itself, not inside JSON's quotes
    and escapes. Only the first ``budget[0]`` characters' worth is kept (no more can
    reach ``MAX_TEXT``); ``budget[0]`` ends below 0 when some was left out."""
    if isinstance(value, str):
        budget[0] -= len(value) + 2
        return _redacted_head(value)
    budget[0] -= 1
    if isinstance(value, dict):
        items: dict[Any, Any] = {}
        for key, item in value.items():
            if budget[0] < 0:
                break
            items[_masked(key, budget)] = _masked(item, budget)
        return items
    if isinstance(value, list):
        kept: list[Any] = []
        for item in value:
            if budget[0] < 0:
                break
            kept.append(_masked(item, budget))
        return kept
    return value


def _cut(value: Any, prefix: str = "") -> tuple[str, bool]:
    """``value`` as record text (after ``prefix`` and a space, when given): a string as
    it is, anything else as JSON of its strings each redacted (``_masked``); then the
    whole redacted again (a secret named by its key: ``{"password": "..."}``) and cut to
    ``MAX_TEXT``."""
    left_out = False
    if value is None or isinstance(value, str):
        text = _text(value)
    else:
        budget = [MAX_TEXT + _REDACT_MARGIN]
        text = dumps(_masked(value, budget))
        left_out = budget[0] < 0
    if prefix:
        text = f"{prefix} {text}".rstrip()
    cut = left_out or len(text) > MAX_TEXT
    text = _redacted_head(text)
    return (text[:MAX_TEXT], True) if len(text) > MAX_TEXT else (text, cut)


def _redacted_head(text: str) -> str:
    """``text`` redacted, at most its first ``MAX_TEXT + _REDACT_MARGIN`` characters (no
    more can reach ``MAX_TEXT``). When it is longer, that window may end inside a secret
    no rule knows cut short (a token missing its end), and an earlier secret's shorter
    mask can pull that end into the kept ``MAX_TEXT``: so the window's redacted text
    loses its last ``_REDACT_MARGIN`` characters (a secret is shorter than that)."""
    window = text[:MAX_TEXT + _REDACT_MARGIN]
    masked = redaction.redact_text(_clean(window))
    if len(text) > len(window):
        masked = masked[:max(0, len(masked) - _REDACT_MARGIN)]
    return masked


def _name(value: Any, fallback: str) -> str:
    text = _clean(value if isinstance(value, str) else "").strip()
    return text[:MAX_NAME] if text else fallback


def record_line(*, rid: str, ts: str, kind: str, agent: str, session: str, text: Any = "",
                parent: str | None = None, result: Any = "", is_error: bool = False,
                duration_ms: int | None = None, prefix: str = "") -> bytes:
    """One day-file line, byte for byte what ``Record.to_line`` writes for the same
    record; ``text`` follows ``prefix`` (a tool's name) when given."""
    text_value, cut_text = _cut(text, prefix)
    result_value, cut_result = _cut(result)
    data: dict[str, Any] = {"id": rid, "parent_id": parent, "agent_id": agent,
                            "session_id": session, "kind": kind, "text": text_value,
                            "result": result_value, "is_error": is_error,
                            "duration_ms": duration_ms, "ts": ts}
    if cut_text or cut_result:
        data["truncated"] = True
    return (dumps(data) + "\n").encode("utf-8")


# --- per-session state --------------------------------------------------------------


def _key(value: str) -> str:
    """A file name for an id: itself when plain, else its hash."""
    if value and len(value) <= 100 and all(c.isalnum() or c in "-_" for c in value):
        return value
    return "h" + paths._sha256_hex(value.encode("utf-8", "replace"))[:32]


class _Session:
    """The ids later events of a session point at (``<hook dir>/sessions/<id>.json``)."""

    def __init__(self, folder: str, session_id: str) -> None:
        self.path = os.path.join(folder, "sessions", _key(session_id) + ".json")
        self.root: str | None = None
        self.prompt: str | None = None
        try:
            with open(self.path, "rb") as f:
                data = loads(f.read().decode("utf-8"))
            self.root = data.get("session") or None
            self.prompt = data.get("prompt") or None
        except (OSError, ValueError, AttributeError):
            pass

    def save(self) -> None:
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        temp = f"{self.path}.{os.getpid()}.tmp"
        with open(temp, "w", encoding="utf-8") as f:
            f.write(dumps({"session": self.root, "prompt": self.prompt}))
        os.replace(temp, self.path)

    def forget(self) -> None:
        try:
            os.unlink(self.path)
        except OSError:
            pass


def _pending(folder: str, session_id: str, tool_use_id: Any) -> str | None:
    if not isinstance(tool_use_id, str) or not tool_use_id:
        return None
    return os.path.join(folder, "pending", f"{_key(session_id)}--{_key(tool_use_id)}")


def _started(path: str | None, end: float) -> int | None:
    """The milliseconds since the call's ``PreToolUse`` (its mark removed)."""
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            start = float(f.read().decode("ascii"))
        os.unlink(path)
    except (OSError, ValueError):
        return None
    return max(0, round((end - start) * 1000))


# --- events -------------------------------------------------------------------------


def record_event(event: str, payload: Mapping[str, Any], habitat: str,
                 env: Mapping[str, str]) -> list[bytes]:
    """Append what ``event`` records (the module docstring) to the loom under
    ``habitat`` and return the lines written (none for ``PreToolUse`` or an event it
    does not answer)."""
    hook = os.path.join(habitat, "hook")
    session_id = _name(payload.get("session_id"), "unknown-session")
    agent = _name(env.get(AGENT_ENV), DEFAULT_AGENT)
    if event == "PreToolUse":
        mark = _pending(hook, session_id, payload.get("tool_use_id"))
        if mark is not None:
            os.makedirs(os.path.dirname(mark), exist_ok=True)
            with open(mark, "w", encoding="ascii") as f:
                f.write(repr(time.time()))
        return []
    if event not in EVENTS:
        return []
    fd = _lock_session(hook, session_id)
    try:
        return _record_locked(event, payload, habitat, env, hook, session_id, agent)
    finally:
        if fd is not None:
            os.close(fd)  # releases the lock


def _lock_session(hook: str, session_id: str) -> int | None:
    """Hold ``<hook dir>/locks/<id>`` (``flock``) until the returned descriptor is
    closed (the file goes at ``SessionEnd``, or a week unused): a session's events read and write its state (its root record) one at a time,
    so parallel tool calls seen first mid-session share one "start seen" root instead of
    each making its own. None where ``flock`` is missing (then unserialised, as before)."""
    try:
        import fcntl
    except ImportError:
        return None
    folder = os.path.join(hook, "locks")
    os.makedirs(folder, exist_ok=True)
    fd = os.open(os.path.join(folder, _key(session_id)), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        os.close(fd)
        return None
    return fd


def _record_locked(event: str, payload: Mapping[str, Any], habitat: str,
                   env: Mapping[str, str], hook: str, session_id: str,
                   agent: str) -> list[bytes]:
    """``record_event`` for an answered event other than ``PreToolUse``, holding the
    session's lock (``_lock_session``)."""
    clock = _clock(env)
    day = clock(0)[0][:10]
    session = _Session(hook, session_id)
    lines: list[bytes] = []

    def add(kind: str, **fields: Any) -> str:
        ts, stamp = clock(len(lines))
        rid = _new_id(stamp)
        lines.append(record_line(rid=rid, ts=ts, kind=kind, agent=agent, session=session_id,
                                 **fields))
        return rid

    previous_root = session.root
    if event == "SessionStart":
        session.root = add("session", text=f"start {_text(payload.get('source')) or 'startup'}",
                           parent=previous_root)
        session.prompt = None
    elif session.root is None:
        session.root = add("session", text="start seen")
    if event == "UserPromptSubmit":
        session.prompt = add("prompt", text=payload.get("prompt"), parent=session.root)
    elif event in ("PostToolUse", "PostToolUseFailure"):
        failed = event == "PostToolUseFailure"
        mark = _pending(hook, session_id, payload.get("tool_use_id"))
        name = _text(payload.get("tool_name")) or "?"
        add("tool", prefix=name, text=payload.get("tool_input"),
            result=payload.get("error") if failed else payload.get("tool_response"),
            is_error=failed, duration_ms=_started(mark, time.time()),
            parent=session.prompt or session.root)
    elif event == "Stop":
        add("reply", text=payload.get("last_assistant_message"),
            parent=session.prompt or session.root)
    elif event == "SessionEnd":
        add("session", text=f"end {_text(payload.get('reason')) or 'other'}",
            parent=session.root)
    loom = os.path.join(habitat, "loom")
    os.makedirs(loom, exist_ok=True)
    loom_file.append_lines(os.path.join(loom, f"{day}.jsonl"), b"".join(lines))
    if event == "SessionEnd":
        session.forget()
        _forget_pending(hook, session_id)
        try:
            os.unlink(os.path.join(hook, "locks", _key(session_id)))
        except OSError:
            pass
    elif session.root != previous_root or event in ("SessionStart", "UserPromptSubmit"):
        session.save()
    if event == "SessionStart":
        _forget_stale(hook)
    return lines


def _forget_pending(hook: str, session_id: str) -> None:
    folder = os.path.join(hook, "pending")
    prefix = _key(session_id) + "--"
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.startswith(prefix):
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass


#: Session state and start marks left by sessions that never ended (a crash, a killed
#: terminal) are removed at a SessionStart once this old (seconds).
STALE_SECONDS = 7 * 86400


def _forget_stale(hook: str) -> None:
    """Remove session files and start marks not touched for ``STALE_SECONDS``."""
    limit = time.time() - STALE_SECONDS
    for folder in ("sessions", "pending", "locks"):
        path = os.path.join(hook, folder)
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat().st_mtime < limit:
                    os.unlink(entry.path)
            except OSError:
                pass


# --- the process --------------------------------------------------------------------


def _log(folder: str | None, message: str) -> None:
    """One line in ``<folder>/hook-errors.log`` (stderr when there is no folder)."""
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {message}".replace("\n", " ")[:2000] + "\n"
    if folder is None:
        sys.stderr.write(line)
        return
    try:
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, LOG_NAME)
        mode = "w" if os.path.exists(path) and os.path.getsize(path) > _LOG_CAP else "a"
        with open(path, mode, encoding="utf-8") as f:
            f.write(line)
    except OSError:
        sys.stderr.write(line)


def _read_stdin() -> Any:
    data = sys.stdin.buffer.read(MAX_STDIN + 1)
    if len(data) > MAX_STDIN:
        raise ValueError(f"the event is over {MAX_STDIN} bytes")
    if not data.strip():  # not an object: nothing to record (no "?" tool record)
        raise ValueError("the event is empty")
    return loads(data.decode("utf-8", "replace"))


def _deadline(env: Mapping[str, str]) -> None:
    """Exit 0 when the process runs past its deadline (a lock never released...)."""
    signal: Any
    try:
        import _signal as signal  # type: ignore[import-not-found, no-redef]  # no enum
    except ImportError:
        import signal
    try:
        seconds = float(env.get(DEADLINE_ENV) or 3)
        signal.signal(signal.SIGALRM, lambda *_: os._exit(0))
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.05))
    except (ValueError, OSError, AttributeError):
        pass


def main(argv: list[str] | None = None, env: Mapping[str, str] | None = None) -> int:
    """The hook process: record the event named by ``argv[0]`` (else the payload's
    ``hook_event_name``); always 0."""
    env = os.environ if env is None else env
    args = sys.argv[1:] if argv is None else argv
    habitat: str | None = None
    try:
        _deadline(env)
        try:
            habitat = os.path.join(paths.state_dir(env), "habitat")
        except paths.Disabled:
            sys.stdin.buffer.read()
            return 0
        payload = _read_stdin()
        if not isinstance(payload, dict):
            raise TypeError("the event is not a JSON object")
        event = args[0] if args else str(payload.get("hook_event_name") or "")
        patterns = PatternCache.for_env(env)
        redaction.use_compiler(patterns.compile)
        record_event(event, payload, habitat, env)
        patterns.save()
    except BaseException as exc:  # noqa: BLE001 - fail-safe: never break the agent
        _log(habitat, f"{' '.join(args) or '?'}: {type(exc).__name__}: {exc}")
    return 0
