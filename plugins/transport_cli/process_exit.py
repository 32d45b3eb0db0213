"""Ending a one-shot ``echo-memory`` process without the interpreter's teardown.

After a command has answered, the interpreter's own shutdown would tear down every
module and free every object the command made, only for the system to take the memory
back anyway: 3-11 ms of a cold command at 100k notes (recall 10.6, the UserPromptSubmit
hook 6.8, a capture 3.1: paired medians of 20, ``main`` against ``run``). ``exit_now``
does what that shutdown does that anyone can see, in its order: stops and waits for the
threads that are not daemons (``threading._shutdown``, as the interpreter calls it, so a
thread pool left open does not hang it), runs the ``atexit`` handlers
(``weakref.finalize`` callbacks among them), flushes stdout and stderr; then it ends
the process with the status ``sys.exit`` would give. Only the console script
(``app.run``) calls it: code that runs the CLI in-process keeps its interpreter.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

__all__ = ["exit_now", "exit_status"]


def exit_status(code: object) -> int:
    """The process status of ``sys.exit(code)``: None is 0, an int itself, anything
    else (a message) 1, the message printed to stderr as the interpreter would."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    try:
        print(code, file=sys.stderr)
    except (OSError, ValueError):
        pass
    return 1


def exit_now(code: object) -> NoReturn:
    """End the process as ``sys.exit(code)`` would, without the interpreter's teardown
    (module docstring). A stream that cannot be flushed (a closed pipe) is left as it
    is: the status stays the command's."""
    status = exit_status(code)
    _threads_finished()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(status)


def _threads_finished() -> None:
    """What the interpreter's shutdown does first: ``threading._shutdown`` runs the
    callbacks registered with ``threading._register_atexit`` (``concurrent.futures``
    tells the workers of a pool nobody shut down to stop) and joins every thread that is
    not a daemon; without it (another Python), those threads are joined here."""
    shutdown = getattr(threading, "_shutdown", None)
    if callable(shutdown):
        shutdown()
        return
    main = threading.main_thread()
    for thread in threading.enumerate():
        if thread is not main and not thread.daemon:
            thread.join()
