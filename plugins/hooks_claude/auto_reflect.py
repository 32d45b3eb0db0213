"""Automatic reflection without an LLM (issue 17 item 4): the Stop and SessionEnd hooks
hand the session's transcript to ``echo_core.reflect_session_transcript``, which mines
the part not mined yet into inbox lines, once per session (its docstring has the rules,
the switches ``ECHO_AUTO_REFLECT`` / ``ECHO_REFLECT_HIGH`` / ``ECHO_REFLECT_MAX_BYTES``
and the size cap).

The hook gives it half the event's time budget to read in (``events.budget_for``); when
it stopped early (the size cap or that deadline) a note on stderr says where, and the
next Stop or SessionEnd goes on from there. It waits at most ``LOCK_WAIT`` seconds for
a vault lock another process holds (a sweep, a long capture), not capture's long wait:
Stop runs after every turn. Locked out, it writes nothing, leaves the session's mark
where it was (the next Stop or SessionEnd mines that part) and says so on stderr; after
SessionEnd (a next one comes only if the session is resumed) the note also names the
command that mines the rest now.
Other errors propagate to the hook runner, which stays quiet (exit 0); nothing is
written before the mining and validation are done.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from plugins.hooks_claude.events import EVENTS, budget_for

#: Seconds the mining waits for another process's vault lock before leaving its part of
#: the transcript to the next Stop or SessionEnd (PreCompact waits 2 s; Stop is per turn).
LOCK_WAIT = 1.0


def reflect_from_payload(payload: Mapping[str, Any], make_ctx: Callable[[], Any],
                         event: str) -> Any:
    """Mine the new part of the transcript ``payload`` names (``SessionReflection`` or
    None when there was nothing to do); a note on stderr when it stopped early or was
    locked out."""
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not isinstance(payload.get("session_id"), str):
        return None
    from echo_core import reflect_session_transcript

    deadline = time.monotonic() + budget_for(EVENTS[event], os.environ) / 2
    done = reflect_session_transcript(make_ctx(), payload.get("session_id"), path,
                                      deadline=deadline, lock_wait=LOCK_WAIT)
    if done is not None and done.locked:
        sys.stderr.write(f"echo-memory hook {event}: reflection skipped: the vault lock is "
                         f"held by another process (waited {LOCK_WAIT:.1f}s); the transcript "
                         f"stays marked at byte {done.offset}; {_the_rest(event, path)}\n")
    elif done is not None and done.capped:
        sys.stderr.write(f"echo-memory hook {event}: reflection read the transcript up to "
                         f"byte {done.offset} of {done.size} (the size cap or the time "
                         f"budget); {_the_rest(event, path)}\n")
    return done


def _the_rest(event: str, path: str) -> str:
    """What becomes of the part not mined: the next Stop or SessionEnd mines it. After
    SessionEnd there is a next one only if the session is resumed, so the note also names
    the command that mines it now."""
    if event != "SessionEnd":
        return "the next Stop or SessionEnd mines the rest"
    return ("the rest is not mined yet: the session has ended (if it is resumed, its next "
            "Stop or SessionEnd mines it); `echo-memory reflect --transcript "
            f"{shlex.quote(path)}` previews what it holds now (--apply saves it)")
