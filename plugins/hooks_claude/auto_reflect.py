"""Automatic reflection without an LLM (issue 17 item 4): the Stop and SessionEnd hooks
hand the session's transcript to ``echo_core.reflect_session_transcript``, which mines
the part not mined yet into inbox lines, once per session (its docstring has the rules,
the switches ``ECHO_AUTO_REFLECT`` / ``ECHO_REFLECT_HIGH`` / ``ECHO_REFLECT_MAX_BYTES``
and the size cap).

The hook gives it half the event's time budget to read in (``events.budget_for``); when
it stopped early (the size cap or that deadline) a note on stderr says where, and the
next Stop or SessionEnd goes on from there. Errors propagate to the hook runner, which
stays quiet (exit 0); nothing is written before the mining and validation are done.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from plugins.hooks_claude.events import EVENTS, budget_for


def reflect_from_payload(payload: Mapping[str, Any], make_ctx: Callable[[], Any],
                         event: str) -> Any:
    """Mine the new part of the transcript ``payload`` names (``SessionReflection`` or
    None when there was nothing to do); a note on stderr when it stopped early."""
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not isinstance(payload.get("session_id"), str):
        return None
    from echo_core import reflect_session_transcript

    deadline = time.monotonic() + budget_for(EVENTS[event], os.environ) / 2
    done = reflect_session_transcript(make_ctx(), payload.get("session_id"), path,
                                      deadline=deadline)
    if done is not None and done.capped:
        sys.stderr.write(f"echo-memory hook {event}: reflection read the transcript up to "
                         f"byte {done.offset} of {done.size} (the size cap or the time "
                         "budget); the rest is mined at the next Stop or SessionEnd\n")
    return done
