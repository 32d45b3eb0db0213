"""The full freshness pass a session start owes, run after its answer (SPEC §4.5, §5.1).

The SessionStart hook answers after the folder pass alone (``freshness.DEFER_ATTR``) and
then settles the ``freshness.OwedPass`` it was left (``settle_owed_pass``), as ``ECHO_SESSION_PASS``
says:

* ``background`` (the default of ``echo-memory hook``): a detached process runs it (its
  own session, stdin/stdout/stderr on the null device, a lower priority), so the hook
  exits as soon as its answer is written — Claude Code waits for the hook to exit;
* ``inline``: this process runs it before returning (deterministic: tests, and where no
  process can be started).

``run_owed_pass(ctx, requested_ns)`` runs one: at most one pass at a time per state dir
(an ``flock`` of ``<state_dir>/freshness-pass.lock``; a second waits for the first), and
none when a pass that started after ``requested_ns`` has completed since
(``freshness-pass.done`` holds when the last complete pass started), so that several
session starts at once cost one or two passes, not one each. The lock only saves work:
passes are safe to run together (each sync is transactional), and where there is no
``flock`` (Windows) they do. A pass that dies midway records nothing as done; the next
owed pass runs in full. The background process gives up after ``PASS_LIMIT`` seconds.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from echo_core.lazy_log import lazy_logger
from echo_core.ops.freshness import OwedPass, full_pass

if TYPE_CHECKING:
    from echo_core.context import EchoContext

log = lazy_logger("echo_memory")

MODE_ENV = "ECHO_SESSION_PASS"
LOCK_FILE = "freshness-pass.lock"
DONE_FILE = "freshness-pass.done"
#: Seconds the background process may take, waiting for another pass included.
PASS_LIMIT = 900
#: Seconds an inline pass waits for a running one before it runs alongside it.
INLINE_WAIT = 60.0
_NICE = 10


def pass_mode(ctx: EchoContext, default: str = "background") -> str:
    """``ECHO_SESSION_PASS`` (``background`` | ``inline``), else ``default``."""
    raw = ctx.env.get(MODE_ENV, "").strip().lower()
    return raw if raw in ("background", "inline") else default


def settle_owed_pass(owed: OwedPass, *, background: bool = True) -> None:
    """Run the pass ``owed``: in a detached process when ``background`` and
    ``ECHO_SESSION_PASS`` do not say ``inline`` and one can be started, else here. Never
    raises (a failure is logged)."""
    ctx = owed.ctx
    try:
        if background and pass_mode(ctx) == "background" and spawn_pass(ctx, owed.requested_ns):
            return
        run_owed_pass(ctx, owed.requested_ns, wait=INLINE_WAIT)
    except Exception as exc:  # the session already has its answer
        log.warning("the full freshness pass after the session start failed (%s); run "
                    "`echo-memory sweep --fast`", exc)
        log.debug("session pass failure", exc_info=True)


def run_owed_pass(ctx: EchoContext, requested_ns: int, wait: float) -> bool:
    """Run the full pass owed since ``requested_ns`` unless a pass that started later
    has completed (module docstring); True when the indexes are now known to agree with
    every note changed before ``requested_ns``."""
    state = Path(ctx.state_dir)
    with _pass_lock(state / LOCK_FILE, wait):
        if requested_ns <= _last_started(state / DONE_FILE) <= time.time_ns():
            return True  # a later pass covered it
        started = time.time_ns()
        changes = full_pass(ctx)
        if changes is None or changes.sync.entities_pending:
            return False
        _record_started(state / DONE_FILE, started)
        return True


@contextlib.contextmanager
def _pass_lock(path: Path, wait: float) -> Iterator[bool]:
    """Hold the pass lock (True), or, when it stays taken ``wait`` seconds or there is
    no ``flock``, go on without it (False)."""
    try:
        import fcntl
    except ImportError:  # Windows: passes may overlap (safe, only redundant)
        yield False
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        yield False
        return
    try:
        deadline = time.monotonic() + wait
        held = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.05)
        yield held
    finally:
        os.close(fd)  # releases the flock


def _last_started(path: Path) -> int:
    try:
        return int(path.read_text("ascii").strip() or 0)
    except (OSError, ValueError):
        return 0


def _record_started(path: Path, started: int) -> None:
    """Write when the completed pass started (a temp file renamed over the old one; no
    fsync: a lost record costs one more pass)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(str(started), "ascii")
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def spawn_pass(ctx: EchoContext, requested_ns: int) -> bool:
    """Start the detached process that runs the owed pass (``main``); False when none
    could be started (the caller runs it inline)."""
    if not sys.executable:
        return False
    import echo_core

    # the folder echo_core came from, last on the child's path (found there only when it
    # is not installed: a source tree); -P keeps the folder the hook runs in (the user's
    # project) off sys.path
    root = str(Path(echo_core.__file__).resolve().parent.parent)
    code = (f"import sys; sys.path.append({root!r}); "
            "from echo_core.ops.session_pass import main; main()")
    argv = [sys.executable, "-P", "-c", code, ctx.config.vault.value,
            ctx.config.state_base.value, str(requested_ns)]
    env = dict(ctx.env)
    try:
        if hasattr(os, "posix_spawn"):
            null = os.devnull
            actions = [(os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                       (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                       (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0)]
            try:
                os.posix_spawn(sys.executable, argv, env, file_actions=actions, setsid=True)
                return True
            except NotImplementedError:
                pass  # no setsid for posix_spawn here: subprocess does it
        import subprocess

        flags = 0x00000008 | 0x00000200 if os.name == "nt" else 0  # DETACHED, NEW_GROUP
        subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, close_fds=True,
                         start_new_session=os.name != "nt", creationflags=flags)
        return True
    except OSError as exc:
        log.debug("could not start the session pass process (%s); running it here", exc)
        return False


def main() -> None:
    """The detached process: ``argv`` = vault, state base, ``requested_ns``."""
    try:
        vault, state_base, requested = sys.argv[1:4]
        requested_ns = int(requested)
    except ValueError:
        sys.exit(2)
    if hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(_NICE)
    import signal

    if hasattr(signal, "alarm"):
        signal.alarm(PASS_LIMIT)  # SIGALRM's default action ends the process
    from echo_core import create_context

    ctx = create_context(vault=vault, state_dir=state_base)
    sys.exit(0 if run_owed_pass(ctx, requested_ns, wait=PASS_LIMIT) else 1)
